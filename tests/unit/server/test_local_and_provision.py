"""Local server failure paths and the provisioning precedence, without starting Neo4j."""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from linksim.cli.main import main
from linksim.server import LocalServer, ServerError, ServerSettings, provision
from linksim.server import artifacts as artifacts_module
from linksim.server import local as local_module
from linksim.server.settings import BROWSER_VERSION, NEO4J_VERSION
provision_module = importlib.import_module("linksim.server.provision")


@pytest.fixture
def settings(tmp_path: Path) -> ServerSettings:
    """Free ports, and a Maven repository on a closed loopback port: a jar download fails at
    once and Maven (the tests' own or none) is asked."""
    with socket.socket() as a, socket.socket() as b, socket.socket() as c:
        a.bind(("127.0.0.1", 0))
        b.bind(("127.0.0.1", 0))
        c.bind(("127.0.0.1", 0))
        bolt, http, closed = a.getsockname()[1], b.getsockname()[1], c.getsockname()[1]
    return ServerSettings(home=tmp_path, bolt_port=bolt, http_port=http,
                          maven_repository=f"http://127.0.0.1:{closed}/maven2")


def fake_java(tmp_path: Path, body: str) -> Path:
    """A JAVA_HOME whose `java` answers -version as Java 17 and otherwise runs ``body``."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(
        textwrap.dedent(
            f"""\
            #!/bin/sh
            if [ "$1" = "-version" ]; then echo 'openjdk version "17.0.9" 2023-10-17' >&2; exit 0; fi
            case "$*" in *AdminTool*|@*) exit 0;; esac  # the admin tool, given its arguments in an @file
            {body}
            """
        )
    )
    java.chmod(0o755)
    return home


def pretend_jars(settings: ServerSettings) -> None:
    settings.lib_dir.mkdir(parents=True)
    (settings.lib_dir / ".complete").write_text("test\n")


def test_java_missing_is_a_clear_error(settings, monkeypatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(local_module.shutil, "which", lambda name: None)
    with pytest.raises(ServerError, match="Java was not found .*Java 17 or 21"):
        LocalServer(settings).start()


def test_old_java_is_refused(settings, tmp_path, monkeypatch) -> None:
    home = fake_java(tmp_path, "exit 1")
    (home / "bin" / "java").write_text(
        "#!/bin/sh\necho 'openjdk version \"11.0.2\"' >&2\n"
    )
    monkeypatch.setenv("JAVA_HOME", str(home))
    with pytest.raises(ServerError, match="is Java 11; Neo4j .* needs Java 17 or 21"):
        LocalServer(settings).start()


def test_maven_missing_is_a_clear_error(settings, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path, "exit 1")))
    real_which = local_module.shutil.which
    monkeypatch.setattr(
        local_module.shutil, "which", lambda name: None if name == "mvn" else real_which(name)
    )
    with pytest.raises(ServerError, match=r"Maven \(`mvn`\) was not found"):
        LocalServer(settings).start()
    assert not settings.lib_dir.exists()


def test_failed_jar_download_names_the_maven_log(settings, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path, "exit 1")))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mvn").write_text("#!/bin/sh\necho '[ERROR] Could not resolve dependencies'\nexit 1\n")
    (bin_dir / "mvn").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(ServerError, match="(?s)could not fetch .*maven.log.*Could not resolve") as info:
        LocalServer(settings).start()
    assert str(settings.maven_log) in str(info.value)
    assert not settings.lib_dir.exists()


@pytest.fixture
def repository(tmp_path: Path):
    """A Maven repository of two jars served on loopback, and its lock: (settings' repository
    URL, the lock's path, the jars' paths in the repository)."""
    import functools
    import hashlib
    import http.server
    import threading

    root = tmp_path / "repository"
    paths = ["org/example/a/1.0/a-1.0.jar", "org/example/b-c/2.1/b-c-2.1.jar"]
    for k, path in enumerate(paths):
        (root / path).parent.mkdir(parents=True)
        (root / path).write_bytes(bytes(range(256)) * (4_000 + k))  # ~1 MB, more than one read
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        lock = tmp_path / "jars.lock"
        header = artifacts_module._lock_header(ServerSettings(home=tmp_path))
        lock.write_text(f"# a lock\n{header}\n" + "".join(
            f"{hashlib.sha1((root / p).read_bytes()).hexdigest()} {p}\n" for p in paths))
        yield f"http://127.0.0.1:{server.server_address[1]}/", lock, root, paths
        server.shutdown()


def test_the_locked_jars_are_downloaded_and_checked_without_maven(settings, repository, monkeypatch) -> None:
    url, lock, root, paths = repository
    monkeypatch.setattr(artifacts_module, "_JAR_LOCK", lock)
    monkeypatch.setattr(local_module.shutil, "which", lambda name: None)  # no Maven to fall back on
    server = LocalServer(dataclasses.replace(settings, maven_repository=url))
    assert server.ensure_jars() == settings.lib_dir
    assert sorted(f.name for f in settings.lib_dir.glob("*.jar")) == ["a-1.0.jar", "b-c-2.1.jar"]
    for path in paths:
        assert (settings.lib_dir / Path(path).name).read_bytes() == (root / path).read_bytes()
    assert server.jars_ready() and not settings.maven_log.exists()


def test_a_jar_that_is_not_the_locked_one_installs_nothing(settings, repository, monkeypatch) -> None:
    url, lock, root, paths = repository
    (root / paths[1]).write_bytes(b"not the jar of the lock")
    monkeypatch.setattr(artifacts_module, "_JAR_LOCK", lock)
    with pytest.raises(ServerError, match=f"(?s){paths[1]} has SHA-1 .* says [0-9a-f]{{40}}; no jar was installed"):
        LocalServer(dataclasses.replace(settings, maven_repository=url)).ensure_jars()
    assert not settings.lib_dir.exists() and not (settings.dist_dir / "lib.partial").exists()


def test_the_lock_of_the_release_is_of_its_neo4j_and_browser(tmp_path, repository) -> None:
    """The shipped lock names the default versions' jars (a version bump without ``make
    jars-lock`` would send every first start to Maven); a lock of other versions is not used."""
    jars = artifacts_module._locked_jars(ServerSettings(home=tmp_path))
    names = {path.rsplit("/", 1)[-1] for _, path in jars}
    assert len(jars) > 100 and len(names) == len(jars)
    assert {f"neo4j-kernel-{NEO4J_VERSION}.jar", f"neo4j-browser-{BROWSER_VERSION}.jar"} <= names
    _, lock, _, _ = repository
    assert len(artifacts_module._locked_jars(ServerSettings(home=tmp_path), lock)) == 2
    assert artifacts_module._locked_jars(ServerSettings(home=tmp_path, neo4j_version="5.26.0"), lock) == []
    lock.write_text(lock.read_text() + "0123 ../../etc/passwd.jar\n")
    with pytest.raises(ServerError, match="not a line of a jar lock: '0123 ../../etc/passwd.jar'"):
        artifacts_module._locked_jars(ServerSettings(home=tmp_path), lock)


def test_server_dying_at_start_names_the_log(settings, tmp_path, monkeypatch, capsys) -> None:
    java_home = fake_java(tmp_path, "echo 'ERROR Invalid memory configuration'; exit 1")
    monkeypatch.setenv("JAVA_HOME", str(java_home))
    pretend_jars(settings)
    with pytest.raises(ServerError, match="(?s)exited during start .*Invalid memory configuration") as info:
        LocalServer(settings).start(timeout=30)
    assert str(settings.console_log) in str(info.value)
    assert settings.password_file.exists()

    monkeypatch.setenv("LINKSIM_HOME", str(settings.home))
    code = main(["neo4j", "start", "--bolt-port", str(settings.bolt_port),
                 "--http-port", str(settings.http_port)])
    err = capsys.readouterr().err
    assert code == 1 and "exited during start" in err and "Traceback" not in err


def test_stop_and_status_when_not_running(settings, monkeypatch, capsys) -> None:
    server = LocalServer(settings)
    assert server.stop() is False
    assert server.status().running is False
    monkeypatch.setenv("LINKSIM_HOME", str(settings.home))
    assert main(["neo4j", "status"]) == 3
    assert "not running" in capsys.readouterr().out
    assert main(["neo4j", "stop"]) == 0


def test_neo4j_uri_starts_nothing(monkeypatch) -> None:
    def forbidden(*args, **kwargs):
        raise AssertionError("must not be called when NEO4J_URI is set")

    monkeypatch.setattr(LocalServer, "start", forbidden)
    monkeypatch.setattr(provision_module, "docker_available", forbidden)
    env = {"NEO4J_URI": "bolt://db.example:7687", "NEO4J_PASSWORD": "pw"}
    with provision(env=env) as server:
        assert server.kind == "external"
        assert server.connection.uri == "bolt://db.example:7687"
        assert server.local is None


def test_no_docker_is_logged_once_at_debug(monkeypatch, caplog, settings) -> None:
    class NoEngine:
        @staticmethod
        def from_env(timeout: int):
            raise ConnectionError("no socket")

    monkeypatch.setitem(sys.modules, "docker", NoEngine)
    monkeypatch.setattr(provision_module, "_docker_logged", False)
    with caplog.at_level(logging.DEBUG, logger="linksim.server.provision"):
        assert provision_module.docker_available() is False
        assert provision_module.docker_available() is False
    records = [r for r in caplog.records if "testcontainers" in r.getMessage()]
    assert len(records) == 1 and records[0].levelno == logging.DEBUG

    started = []
    monkeypatch.setattr(LocalServer, "start", lambda self: started.append(self) or (_Status(), True))
    monkeypatch.setattr(LocalServer, "password", lambda self: "pw")
    with provision(settings, env={}) as server:
        assert server.kind == "local" and len(started) == 1


class _Status:
    uri = "bolt://127.0.0.1:1"
    http_url = "http://127.0.0.1:2"


@pytest.mark.parametrize("argv", [[], ["neo4j"], ["neo4j", "start"], ["neo4j", "init"], ["neo4j", "logs"]])
def test_help_explains(argv, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: linksim")
    if argv[-1:] == ["init"]:
        assert "--password-file" in out and "--database" in out


def test_gds_plugin_jars_skip_what_neo4j_has() -> None:
    from linksim.server.artifacts import plugin_jars

    resolved = ["proc-2.13.9.jar", "neo4j-values-2.13.9.jar", "caffeine-3.1.8.jar",
                "jackson-core-2.18.6.jar", "agrona-1.23.0.jar", "cypher-javacc-parser-9.0-9.0.20210312.jar"]
    lib = ["neo4j-values-5.26.30.jar", "caffeine-3.1.8.jar", "jackson-core-2.22.1.jar", "neo4j-kernel-5.26.30.jar"]
    assert plugin_jars(resolved, lib, "2.13.9") == [
        "agrona-1.23.0.jar", "cypher-javacc-parser-9.0-9.0.20210312.jar", "neo4j-values-2.13.9.jar", "proc-2.13.9.jar",
    ]


def test_the_initial_password_never_reaches_a_command_line(settings: ServerSettings, tmp_path: Path) -> None:
    """The admin tool gets its arguments from an owner-only Java argument file, removed after."""
    record = tmp_path / "seen"
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    # Records its command line, the mode and content of the @file it was given (as the JVM reads it).
    java.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "argv: $*" > {record}
        file="${{1#@}}"
        stat -c 'mode: %a' "$file" >> {record}
        cat "$file" >> {record}
        """))
    java.chmod(0o755)
    server = LocalServer(settings)
    settings.instance_dir.mkdir(parents=True)
    password = server._ensure_password(str(java))
    seen = record.read_text()
    argv = seen.splitlines()[0]
    assert password not in argv and argv.startswith("argv: @")
    assert "mode: 600" in seen and f'"{password}"' in seen and '"set-initial-password"' in seen
    assert not Path(argv.split("@", 1)[1]).exists()  # removed once the tool ran


def test_the_class_data_archive_is_named_by_the_class_path(tmp_path: Path) -> None:
    """Two instances of one class path share an archive; a plugin jar, a changed jar or another
    Java makes another; it is written at a class path's second start, kept after a clean stop only
    when none is in place, and a dump left for an hour by a killed server is removed."""
    java = tmp_path / "java"
    java.write_text("")
    first, second = (LocalServer(ServerSettings(home=tmp_path / "home", instance=name)) for name in ("a", "b"))
    lib = first.settings.lib_dir
    lib.mkdir(parents=True)
    (lib / "neo4j-kernel.jar").write_bytes(b"k")
    (lib / "notes.txt").write_text("not on the class path")
    archive = first.class_data(str(java))
    assert archive == second.class_data(str(java)) and archive.parent == first.settings.dist_dir / "class-data"

    second.settings.plugins_dir.mkdir(parents=True)
    (second.settings.plugins_dir / "gds.jar").write_bytes(b"g")
    assert second.class_data(str(java)) != archive
    (lib / "neo4j-kernel.jar").write_bytes(b"k2")
    assert first.class_data(str(java)) != archive
    other_java = tmp_path / "java2"
    other_java.write_text("")
    assert first.class_data(str(other_java)) != first.class_data(str(java))

    archive = first.class_data(str(java))
    assert first._class_data_options(str(java)) == ([], None)  # first start: nothing
    options, dump = first._class_data_options(str(java))  # second start: written at exit
    assert options == [f"-XX:ArchiveClassesAtExit={dump}"] and dump.parent == archive.parent
    first._keep_class_data({"class_data_dump": str(dump)})  # killed before it wrote: nothing kept
    assert not archive.exists()
    dump.write_bytes(b"archive")
    first._keep_class_data({"class_data_dump": str(dump)})
    assert archive.read_bytes() == b"archive" and not dump.exists()
    assert first._class_data_options(str(java)) == ([f"-XX:SharedArchiveFile={archive}"], None)

    again = archive.with_name(archive.name + ".partial-1-2")  # a second server's dump: the first stays
    again.write_bytes(b"later")
    first._keep_class_data({"class_data_dump": str(again)})
    assert archive.read_bytes() == b"archive" and not again.exists()

    archive.unlink()
    stale, fresh = (archive.with_name(archive.name + f".partial-{n}") for n in ("old", "new"))
    stale.write_bytes(b"x")
    fresh.write_bytes(b"y")
    os.utime(stale, (0, 0))
    first._class_data_options(str(java))
    assert not stale.exists() and fresh.exists()


def test_a_port_of_an_instance_still_recovering_is_not_taken(settings, tmp_path) -> None:
    """A server recovering its store listens only once recovery ends: its port looks free, and a
    second instance started meanwhile on the same port would share it (both then fail, or one
    answers for the other). The start is refused, naming the instance, before Java is looked for."""
    import dataclasses
    import json
    import subprocess

    other = dataclasses.replace(settings, instance="recovering")
    other.instance_dir.mkdir(parents=True)
    # A process whose command line is that of the other instance's server (not listening).
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "CommunityEntryPoint",
                                f"--home-dir={other.instance_dir}"])
    try:
        other.state_file.write_text(json.dumps({"pid": process.pid, "bolt_port": settings.bolt_port,
                                                "http_port": settings.bolt_port + 1}))
        deadline = time.monotonic() + 10  # its command line shows once the process has started
        while not LocalServer(other).is_running() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert LocalServer(other).is_running()
        with pytest.raises(ServerError, match=r"belongs to the linksim instance 'recovering'.*--bolt-port"):
            LocalServer(settings).start(timeout=5)
        moved = dataclasses.replace(settings, bolt_port=settings.http_port + 1 if settings.http_port < 65535 else 1024)
        assert LocalServer(moved)._instance_on_port(moved.bolt_port) is None
    finally:
        process.kill()
        process.wait()
    assert LocalServer(settings)._instance_on_port(settings.bolt_port) is None  # it stopped


def test_the_start_waits_while_the_store_recovers(settings, tmp_path, monkeypatch) -> None:
    """A server replaying the logs of a large write after a crash listens only when it is done: the
    start waits beyond its timeout while the debug log shows recovery progress (it stopped the
    server at 180 s before, which made the next start replay everything again), and no longer."""
    log_file = settings.logs_dir / "debug.log"
    line = "$(date -u +'%Y-%m-%d %H:%M:%S.%3N+0000') INFO  [o.n.k.r.Recovery] [neo4j/a8aab0e9]"
    body = (f"mkdir -p '{settings.logs_dir}'; "
            f"echo \"{line} Transaction logs recovery is required\" >> '{log_file}'; "
            f"for i in 1 2 3 4 5 6 7 8; do sleep 0.5; echo \"{line}  ${{i}}0% completed\" >> '{log_file}'; done; "
            "echo 'recovered, then a bad setting'; exit 1")
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path, body)))
    pretend_jars(settings)
    started = time.monotonic()
    with pytest.raises(ServerError, match="exited during start"):  # not "did not answer within 2 s"
        LocalServer(settings).start(timeout=2)
    assert time.monotonic() - started >= 4.0

    # Progress that stops: the start gives up one timeout after the last progress line.
    stalled = (f"mkdir -p '{settings.logs_dir}'; "
               f"echo \"{line} Transaction logs recovery is required\" >> '{log_file}'; sleep 30")
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path / "stalled", stalled)))
    started = time.monotonic()
    with pytest.raises(ServerError, match="did not answer"):
        LocalServer(settings).start(timeout=1.5)
    assert time.monotonic() - started < 10


def test_recovery_progress_is_read_from_the_debug_log(tmp_path) -> None:
    log_file = tmp_path / "debug.log"
    log_file.write_text("2026-11-27 10:00:00.000+0000 INFO  [o.n.k.r.Recovery] [neo4j/x]  90% completed\n")
    since = log_file.stat().st_size
    assert local_module._recovery_progress(log_file, since) is None  # before this start
    with open(log_file, "a") as opened:
        opened.write("2026-11-27 10:49:30.353+0000 INFO  [o.n.k.r.Recovery] [neo4j/a8aab0e9]  10% completed\n")
    stamp, said = local_module._recovery_progress(log_file, since)
    assert said == "10% completed" and stamp == 1795776570.353
    with open(log_file, "a") as opened:
        opened.write('2026-11-27 10:52:00.000+0000 INFO  [o.n.k.i.t.l.c.CheckPointerImpl] [neo4j/x] Checkpoint '
                     'triggered by "Recovery completed." @ txId: 1755\n')
    assert local_module._recovery_progress(log_file, since) is None


def test_without_a_jdk_the_procedures_are_refused_with_what_to_install_and_nothing_left(
        tmp_path, monkeypatch, caplog) -> None:
    """No javac beside java, in JAVA_HOME or on PATH: building linksim.related is one clear error,
    no jar (or half of one) is left, and a start goes on without the procedures, saying why."""
    from linksim.server import plugin

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "neo4j-5.26.30.jar").write_bytes(b"")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    java = fake_java(tmp_path, "exit 0") / "bin" / "java"
    assert plugin.javac_executable(str(java)) is None
    with pytest.raises(plugin.PluginError, match="no javac.*openjdk-17-jdk-headless"):
        plugin.build(lib, str(java))
    assert not list(tmp_path.rglob("linksim-procedures-*"))
    settings = ServerSettings(home=tmp_path / "home")
    with caplog.at_level(logging.WARNING, logger="linksim.server.local"):
        assert LocalServer(settings).install_procedures(str(java)) is False
    assert "starts without linksim.related" in caplog.text
    assert not list(settings.plugins_dir.glob("*.jar"))


def test_the_procedures_jar_is_named_by_its_source_and_the_servers_jars(tmp_path) -> None:
    """A new Neo4j version (its jars' names) or a changed source builds the jar again."""
    from linksim.server import plugin

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "neo4j-kernel-5.26.30.jar").write_bytes(b"")
    first = plugin.jar_name(lib)
    assert first == plugin.jar_name(lib) and first.startswith("linksim-procedures-") and first.endswith(".jar")
    (lib / "neo4j-kernel-5.26.30.jar").rename(lib / "neo4j-kernel-5.26.31.jar")
    assert plugin.jar_name(lib) != first
    assert "linksim.related" in plugin.source_text()
