"""Server settings, the generated neo4j.conf, password files and connection precedence."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from linksim.errors import ConfigurationError, LinksimError
from linksim.server import ServerSettings, linksim_home, resolve_connection
from linksim.server.credentials import read_password_file, write_password_file
from linksim.server.local import _neo4j_conf


def test_home_comes_from_linksim_home_then_the_cache_dir(tmp_path: Path, monkeypatch) -> None:
    assert linksim_home({"LINKSIM_HOME": str(tmp_path)}) == tmp_path.resolve()
    monkeypatch.delenv("LINKSIM_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert linksim_home() == (tmp_path / "linksim").resolve()
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert linksim_home({}).parts[-2:] == (".cache", "linksim")


def test_settings_from_env_and_overrides(tmp_path: Path) -> None:
    env = {"LINKSIM_HOME": str(tmp_path), "LINKSIM_BOLT_PORT": "17687", "LINKSIM_HEAP": "2G"}
    settings = ServerSettings.from_env(env, http_port=17474, pagecache=None)
    assert (settings.bolt_port, settings.http_port, settings.heap) == (17687, 17474, "2g")
    assert settings.pagecache == "2g"  # the default: a None override does not win
    assert settings.uri == "bolt://127.0.0.1:17687"
    assert settings.password_file == tmp_path.resolve() / "instances" / "default" / "password"
    assert settings.maven_repository == "https://repo.maven.apache.org/maven2/"  # Maven Central
    mirror = ServerSettings.from_env({**env, "LINKSIM_MAVEN_REPOSITORY": "http://mirror.example/maven2"})
    assert mirror.maven_repository == "http://mirror.example/maven2/"  # a jar's path follows the slash


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"bolt_port": "seven"}, "Bolt port must be a port number, got 'seven'"),
        ({"http_port": 70000}, "HTTP port must be between 1 and 65535, got 70000"),
        ({"bolt_port": 7000, "http_port": 7000}, "must differ, both are 7000"),
        ({"heap": "lots"}, "heap size must be a size such as 512m or 4g, got 'lots'"),
        ({"instance": "../x"}, "instance name"),
        ({"maven_repository": "file:///etc"}, "Maven repository must be an http(s) URL, got 'file:///etc'"),
    ],
)
def test_bad_settings_name_the_value(tmp_path: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ServerSettings(home=tmp_path, **kwargs)


def test_conf_listens_on_loopback_only_with_auth(tmp_path: Path) -> None:
    settings = ServerSettings(home=tmp_path, bolt_port=17687, http_port=17474, heap="1g")
    conf = dict(
        line.split("=", 1) for line in _neo4j_conf(settings).splitlines() if "=" in line
    )
    addresses = {k: v for k, v in conf.items() if k.endswith(("listen_address", "advertised_address"))}
    assert len(addresses) >= 6
    assert all(v.startswith("127.0.0.1") for v in addresses.values())
    assert conf["server.bolt.listen_address"] == "127.0.0.1:17687"
    assert conf["server.http.listen_address"] == "127.0.0.1:17474"
    assert conf["server.https.enabled"] == "false"
    assert conf["dbms.security.auth_enabled"] == "true"
    assert conf["server.memory.heap.max_size"] == "1g"
    assert conf["server.memory.pagecache.size"] == settings.pagecache


def test_password_file_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "password"
    write_password_file(path, "s3cret")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_password_file(path) == "s3cret"


def test_password_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "password"
    path.write_text("s3cret\n")
    path.chmod(0o644)
    with pytest.raises(ConfigurationError, match="readable by others .*chmod 600"):
        read_password_file(path)
    path.chmod(0o600)
    path.write_text("\n")
    with pytest.raises(ConfigurationError, match="is empty"):
        read_password_file(path)
    with pytest.raises(ConfigurationError, match="does not exist"):
        read_password_file(tmp_path / "missing")


def _pw(tmp_path: Path, name: str, value: str) -> Path:
    path = tmp_path / name
    write_password_file(path, value)
    return path


def test_connection_precedence(tmp_path: Path) -> None:
    settings = ServerSettings(home=tmp_path)
    write_password_file(settings.password_file, "local-pw")
    env = {"NEO4J_URI": "bolt://env:7687", "NEO4J_PASSWORD": "env-pw", "NEO4J_USER": "envuser"}

    local = resolve_connection(env={}, settings=settings)
    assert (local.uri, local.password, local.user, local.source) == (
        "bolt://127.0.0.1:7687", "local-pw", "neo4j", "local",
    )
    from_env = resolve_connection(env=env, settings=settings)
    assert (from_env.uri, from_env.password, from_env.user, from_env.source) == (
        "bolt://env:7687", "env-pw", "envuser", "environment",
    )
    option = resolve_connection(
        uri="bolt://opt:1", user="u", password_file=_pw(tmp_path, "p", "opt-pw"),
        database="db", env=env, settings=settings,
    )
    assert (option.uri, option.password, option.user, option.database, option.source) == (
        "bolt://opt:1", "opt-pw", "u", "db", "option",
    )
    assert "opt-pw" not in repr(option)


def test_connection_errors_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no password for bolt://x:1"):
        resolve_connection(env={"NEO4J_URI": "bolt://x:1"}, settings=ServerSettings(home=tmp_path))
    with pytest.raises(LinksimError, match="linksim neo4j start"):
        resolve_connection(env={}, settings=ServerSettings(home=tmp_path))


def test_neo4j_password_is_honoured_for_the_local_server(tmp_path: Path) -> None:
    settings = ServerSettings(home=tmp_path)
    _pw(settings.password_file.parent, settings.password_file.name, "file-pw")
    assert resolve_connection(env={}, settings=settings).password == "file-pw"
    local = resolve_connection(env={"NEO4J_PASSWORD": "changed-pw"}, settings=settings)
    assert (local.uri, local.password, local.source) == ("bolt://127.0.0.1:7687", "changed-pw", "local")
    other = _pw(tmp_path, "other", "other-pw")
    assert resolve_connection(env={"NEO4J_PASSWORD_FILE": str(other)}, settings=settings).password == "other-pw"
    # A --password-file given on the command line still comes first.
    assert resolve_connection(password_file=other, env={"NEO4J_PASSWORD": "changed-pw"},
                              settings=settings).password == "other-pw"


def test_the_retry_time_of_writes_is_a_checked_setting() -> None:
    from linksim.server.connection import retry_seconds

    assert retry_seconds({}) == 30.0 and retry_seconds({"LINKSIM_RETRY_SECONDS": "2.5"}) == 2.5
    for bad in ("-1", "soon", "7200"):
        with pytest.raises(ConfigurationError, match="LINKSIM_RETRY_SECONDS must be a number of seconds in 0..3600"):
            retry_seconds({"LINKSIM_RETRY_SECONDS": bad})


def test_every_password_file_problem_is_one_message(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    binary = tmp_path / "binary"
    binary.write_bytes(bytes(range(256)))
    binary.chmod(0o600)
    two_lines = tmp_path / "two-lines"
    two_lines.write_text("first\nsecond\n")
    two_lines.chmod(0o600)
    for path, message in [(folder, "is a folder"), (binary, "is not a text file"),
                          (two_lines, "several lines"), (tmp_path / "missing", "does not exist")]:
        with pytest.raises(ConfigurationError, match=message):
            read_password_file(path)
        with pytest.raises(ConfigurationError, match=message):  # through the connection, for any server
            resolve_connection(password_file=path, env={"NEO4J_URI": "bolt://x:1"}, settings=ServerSettings(home=tmp_path))


def test_a_missing_password_file_given_for_the_local_server_is_named(tmp_path: Path, monkeypatch) -> None:
    """Not "the local server has not been started yet": that is only true of its own file."""
    from linksim.server.local import LocalServer

    settings = ServerSettings(home=tmp_path)
    write_password_file(settings.password_file, "local-pw")
    monkeypatch.setattr(LocalServer, "running_settings", lambda self: settings)
    for kwargs in ({"password_file": tmp_path / "nope"}, {"env": {"NEO4J_PASSWORD_FILE": str(tmp_path / "nope")}}):
        kwargs.setdefault("env", {})
        with pytest.raises(ConfigurationError, match=f"password file {tmp_path / 'nope'} does not exist"):
            resolve_connection(settings=settings, **kwargs)


def dash_password_source():
    """Random bytes, seeded, whose password begins with '-': the first such seed."""
    import random

    from linksim.server.credentials import generate_password

    for seed in range(10_000):
        source = random.Random(seed).randbytes
        if generate_password(source).startswith("-"):
            return random.Random(seed).randbytes
    raise AssertionError("no seed below 10,000 gives a password beginning with '-'")


def test_generated_passwords_are_url_safe_and_one_in_64_begins_with_a_dash() -> None:
    import random

    from linksim.server.credentials import generate_password

    rng = random.Random(7)
    passwords = [generate_password(rng.randbytes) for _ in range(6400)]
    assert all(len(p) == 32 and p.replace("-", "").replace("_", "").isalnum() for p in passwords)
    assert 60 <= sum(p.startswith("-") for p in passwords) <= 150  # 100 expected: the case that must work
    assert generate_password(dash_password_source()).startswith("-")


def test_a_linksim_home_that_cannot_be_written_is_one_message(tmp_path: Path, monkeypatch, capsys) -> None:
    from linksim.cli.main import main

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("LINKSIM_HOME", str(blocker / "home"))  # no folder can be made there, even by root
    monkeypatch.setenv("LINKSIM_BOLT_PORT", "1")  # never a server: the check comes first
    assert main(["neo4j", "start"]) == 2
    err = capsys.readouterr().err
    assert f"the linksim home {blocker / 'home'} cannot be written" in err and "LINKSIM_HOME" in err
    assert "Traceback" not in err
