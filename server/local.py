"""A local Neo4j 5.26 Community server assembled from Maven Central jars.

No Docker and no tarball: Maven resolves ``org.neo4j:neo4j`` (the Community DBMS),
``org.neo4j.app:neo4j-server`` (HTTP server) and ``org.neo4j.client:neo4j-browser`` into
``<home>/neo4j-<version>/lib`` once; every start then launches the server JVM directly
(``org.neo4j.server.CommunityEntryPoint``), listening on 127.0.0.1 only, with authentication on
and a generated password kept in an owner-only file. This module runs the process; what it runs
on (the jars, GDS, linksim's procedures) is :mod:`linksim.server.artifacts`.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


from linksim.server.artifacts import Artifacts
from linksim.server.errors import ServerError, log_tail
from linksim.server.credentials import generate_password, read_password_file, write_password_file
from linksim.home import home_folder
from linksim.server.settings import DEFAULT_USER, ServerSettings

log = logging.getLogger(__name__)

MIN_JAVA = 17
MAX_JAVA = 21  # Neo4j 5.26 supports Java 17 and 21.
# A dump of class data not renamed into place within this long was left by a server that was
# killed while it wrote it (or before): removed at the next start.
_STALE_DUMP_SECONDS = 3600.0
# The transaction-log volume between checkpoints (db.checkpoint=VOLUME).
CHECKPOINT_VOLUME = "1GiB"


@dataclass
class ServerStatus:
    """What ``linksim neo4j status`` reports."""

    running: bool
    uri: str
    http_url: str
    browser_url: str
    user: str
    password_file: str
    version: str | None
    pid: int | None
    home: str

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def _java_executable() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise ServerError(
            "Java was not found (no `java` on PATH and no JAVA_HOME). Neo4j 5.26 needs Java 17 "
            "or 21: install it (e.g. `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME."
        )
    return java


def java_major_version(java: str) -> int:
    """The major version of a ``java`` executable, from ``java -version``."""
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError as exc:
        raise ServerError(f"could not run {java} -version: {exc}") from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise ServerError(f"could not read the Java version from `{java} -version`")
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if nothing listens on ``host:port``.

    SO_REUSEADDR as the server itself uses it: connections of a just-stopped server that linger
    in TIME_WAIT do not make the port taken, a listening socket does.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def _neo4j_conf(settings: ServerSettings) -> str:
    lines = {
        "server.default_listen_address": "127.0.0.1",
        "server.default_advertised_address": "127.0.0.1",
        "server.bolt.listen_address": f"127.0.0.1:{settings.bolt_port}",
        "server.bolt.advertised_address": f"127.0.0.1:{settings.bolt_port}",
        "server.http.listen_address": f"127.0.0.1:{settings.http_port}",
        "server.http.advertised_address": f"127.0.0.1:{settings.http_port}",
        "server.http.enabled": "true",
        "server.https.enabled": "false",
        "server.bolt.tls_level": "DISABLED",
        "dbms.security.auth_enabled": "true",
        "server.memory.heap.initial_size": settings.heap,
        "server.memory.heap.max_size": settings.heap,
        "server.memory.pagecache.size": settings.pagecache,
        "dbms.usage_report.enabled": "false",
        # Neither does the Browser it serves send product analytics (nor ask for it in a banner).
        "client.allow_telemetry": "false",
        "server.directories.data": str(settings.data_dir),
        "server.directories.logs": str(settings.logs_dir),
        "server.directories.plugins": str(settings.plugins_dir),
        "server.directories.import": str(settings.import_dir),
        "server.directories.run": str(settings.instance_dir / "run"),
        "dbms.security.procedures.unrestricted": "gds.*,apoc.*",
        # Keep transaction logs small: this is an analysis database, not a system of record.
        "db.tx_log.rotation.retention_policy": "2 files",
        # ... and prune them as they grow: the default policy checkpoints every 15 minutes or
        # 100,000 transactions, which let a write of SIMILAR_TO relationships (about 450 bytes of
        # log each) pile up 12 GB of logs in 5 minutes on the 100M-link crawl and fill the disk. A
        # checkpoint every GiB of logs bounds them to about 2 GiB (what the disk check of a write
        # counts, linksim.procedures.budget.write_disk; 1.6 GB at most in that write since).
        "db.checkpoint": "VOLUME",
        "db.checkpoint.interval.volume": CHECKPOINT_VOLUME,
        # Bolt waits 5 s for idle connections and 5 s more for its thread pool at shutdown; on a
        # single-user local server that doubles every stop (bulk imports stop and start it).
        "internal.server.bolt.connection_shutdown_wait_time": "1s",
        "internal.server.bolt.thread_pool_shutdown_wait_time": "1s",
    }
    header = "# Written by linksim at every start; edit the linksim settings, not this file.\n"
    return header + "".join(f"{key}={value}\n" for key, value in lines.items())


def _recovery_progress(debug_log: Path, since: int) -> tuple[float, str] | None:
    """When a server's debug log, from byte ``since``, shows it recovering its store and not done:
    the time of the last progress line (or the recovery's start) and what it says."""
    try:
        with open(debug_log, "rb") as opened:
            opened.seek(since)
            text = opened.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    last = None
    for line in text.splitlines():
        if "Recovery completed" in line:
            return None
        if "[o.n.k.r.Recovery]" in line or "Transaction logs recovery is required" in line:
            last = line
    if last is None:
        return None
    from datetime import datetime

    try:
        stamp = datetime.strptime(last[:28], "%Y-%m-%d %H:%M:%S.%f%z").timestamp()
    except ValueError:
        stamp = debug_log.stat().st_mtime
    said = last.split("] ", 2)[-1].strip() if "] " in last else last
    return stamp, said


class LocalServer:
    """One local Neo4j instance: provision jars, start, wait for Bolt, stop, report status."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.artifacts = Artifacts(settings)

    # What it runs on (server/artifacts.py) -------------------------------------------------
    def jars_ready(self) -> bool:
        return self.artifacts.jars_ready()

    def ensure_jars(self) -> Path:
        return self.artifacts.ensure_jars()

    def ensure_gds(self) -> Path:
        return self.artifacts.ensure_gds()

    def install_gds(self) -> None:
        self.artifacts.install_gds()

    def install_procedures(self, java: str) -> bool:
        return self.artifacts.install_procedures(java)

    # The process ------------------------------------------------------------------------------

    def java(self) -> str:
        """The java executable to run Neo4j with, checked to be Java 17 or 21."""
        java = _java_executable()
        major = java_major_version(java)
        if not MIN_JAVA <= major <= MAX_JAVA:
            raise ServerError(
                f"{java} is Java {major}; Neo4j {self.settings.neo4j_version} needs Java "
                f"{MIN_JAVA} or {MAX_JAVA}. Set JAVA_HOME to such a JDK."
            )
        return java

    def env(self) -> dict[str, str]:
        """Environment for Neo4j's own tools (NEO4J_HOME, NEO4J_CONF of this instance)."""
        env = dict(os.environ)
        env["NEO4J_HOME"] = str(self.settings.instance_dir)
        env["NEO4J_CONF"] = str(self.settings.conf_dir)
        return env

    def _write_conf(self) -> None:
        s = self.settings
        for directory in (s.conf_dir, s.data_dir, s.logs_dir, s.plugins_dir, s.import_dir):
            directory.mkdir(parents=True, exist_ok=True)
        os.chmod(s.instance_dir, 0o700)
        (s.conf_dir / "neo4j.conf").write_text(_neo4j_conf(s), encoding="utf-8")

    def _has_database(self) -> bool:
        return (self.settings.data_dir / "databases").is_dir()

    def _ensure_password(self, java: str) -> str:
        s = self.settings
        if s.password_file.exists():
            return read_password_file(s.password_file)
        if self._has_database():
            raise ServerError(
                f"the server data in {s.data_dir} exists but its password file {s.password_file} "
                "is gone. Restore the file, or remove the instance directory "
                f"{s.instance_dir} to start afresh (its data is lost)."
            )
        password = generate_password()
        write_password_file(s.password_file, password)
        result = self._admin(java, ["dbms", "set-initial-password", "--", password])
        if result.returncode != 0:
            s.password_file.unlink(missing_ok=True)
            raise ServerError(
                "could not set the initial Neo4j password: "
                + (result.stderr.strip() or result.stdout.strip())
            )
        return password

    def _admin(self, java: str, arguments: list[str]) -> subprocess.CompletedProcess:
        """Run Neo4j's admin tool with its arguments in a Java argument file (``java @FILE``),
        owner-only in the instance directory and removed at once: a password among them never
        shows in the process table, as it would on a command line."""
        s = self.settings
        words = ["-cp", f"{s.lib_dir}/*", "org.neo4j.cli.AdminTool", *arguments]
        for word in words:
            if any(ch in word for ch in '"\\\n\r'):
                raise ServerError(f"cannot pass {word[:20]!r}... to the admin tool in an argument file")
        argfile = s.instance_dir / ".admin-args"
        fd = os.open(argfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write("\n".join(f'"{word}"' for word in words) + "\n")
            return subprocess.run([java, f"@{argfile}"], env=self.env(), capture_output=True, text=True,
                                  check=False)
        finally:
            argfile.unlink(missing_ok=True)

    # Class data sharing -------------------------------------------------------------------
    def class_data(self, java: str) -> Path:
        """The JVM's class-data archive for this server's class path (Java's application class
        data sharing): loading the server's classes from it takes a start from about 16 s to
        10 s here. Named by a digest of the Java executable and of every jar on the class path
        (path, size, time), in the launcher's order, so an instance with other plugins, a new
        jar or another Java has its own; instances of one class path share it. The JVM checks
        it again and runs without it if it does not match."""
        s = self.settings
        digest = hashlib.blake2b(digest_size=8)
        for path in [Path(java).resolve()] + [
            folder / name
            for folder in (s.plugins_dir, s.conf_dir, s.lib_dir) if folder.is_dir()
            for name in os.listdir(folder) if name.endswith(".jar")
        ]:
            stat = path.stat()
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        return s.dist_dir / "class-data" / f"{digest.hexdigest()}.jsa"

    def _class_data_options(self, java: str) -> tuple[list[str], Path | None]:
        """The JVM options that use this class path's archive, or that write it when the server
        exits (renamed into place by :meth:`stop`): (options, the dump's path or None). The dump
        costs a start and a stop about 10 s each, so it is made at a class path's second start
        (one started once, such as a throwaway instance, never pays it)."""
        archive = self.class_data(java)
        if archive.is_file():
            return [f"-XX:SharedArchiveFile={archive}"], None
        archive.parent.mkdir(parents=True, exist_ok=True)
        seen = archive.with_suffix(".seen")
        if not seen.exists():
            seen.touch()
            return [], None
        for left in archive.parent.glob("*.partial-*"):  # a server killed while it wrote its dump
            try:
                if time.time() - left.stat().st_mtime > _STALE_DUMP_SECONDS:
                    left.unlink()
            except OSError:
                pass
        dump = archive.with_name(f"{archive.name}.partial-{os.getpid()}-{time.monotonic_ns()}")
        return [f"-XX:ArchiveClassesAtExit={dump}"], dump

    @staticmethod
    def _keep_class_data(state: dict[str, object]) -> None:
        """After a clean exit, the archive the server wrote goes into place (a server killed
        before it exited wrote none; one dump of two servers that wrote at once is kept)."""
        dump = state.pop("class_data_dump", None)
        if not dump:
            return
        dump = Path(str(dump))
        archive = dump.with_name(dump.name.split(".partial-")[0])
        try:
            if dump.is_file() and dump.stat().st_size > 0 and not archive.exists():
                os.replace(dump, archive)
            else:
                dump.unlink(missing_ok=True)
        except OSError as error:
            log.warning("cannot keep the class-data archive %s: %s", archive, error)

    def _command(self, java: str, class_data: list[str] | None = None) -> list[str]:
        s = self.settings
        classpath = f"{s.plugins_dir}/*:{s.conf_dir}/*:{s.lib_dir}/*"
        return [
            java,
            "-cp",
            classpath,
            *(class_data or []),
            f"-Xms{s.heap}",
            f"-Xmx{s.heap}",
            "-XX:+UseG1GC",
            "-XX:-OmitStackTraceInFastThrow",
            "-XX:+DisableExplicitGC",
            "-Djdk.nio.maxCachedBufferSize=1024",
            "-Dio.netty.tryReflectionSetAccessible=true",
            "-Dlog4j2.disable.jmx=true",
            "-Dfile.encoding=UTF-8",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--enable-native-access=ALL-UNNAMED",
            "org.neo4j.server.CommunityEntryPoint",
            f"--home-dir={s.instance_dir}",
            f"--config-dir={s.conf_dir}",
            "--console-mode",
        ]

    # Process state -------------------------------------------------------------------------
    def _read_state(self) -> dict[str, object]:
        try:
            return json.loads(self.settings.state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def _write_state(self, state: dict[str, object]) -> None:
        self.settings.state_file.write_text(json.dumps(state, indent=2), encoding="utf-8")

    def pid(self) -> int | None:
        """The pid of this instance's server process, if it runs."""
        pid = self._read_state().get("pid")
        if not isinstance(pid, int):
            return None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            try:
                os.kill(pid, 0)
            except OSError:
                return None
            return pid
        marker = f"--home-dir={self.settings.instance_dir}"
        if "CommunityEntryPoint" in cmdline and marker in cmdline:
            return pid
        return None

    def is_running(self) -> bool:
        return self.pid() is not None

    def _instance_on_port(self, port: int) -> str | None:
        """The name of another instance of this home whose running server was started on ``port``."""
        for state_file in sorted((self.settings.home / "instances").glob("*/state.json")):
            name = state_file.parent.name
            if name == self.settings.instance:
                continue
            other = LocalServer(dataclasses.replace(self.settings, instance=name))
            state = other._read_state()
            if port in (state.get("bolt_port"), state.get("http_port")) and other.is_running():
                return name
        return None

    def running_settings(self) -> ServerSettings:
        """Settings the running server was started with (ports may differ from the current)."""
        state = self._read_state()
        if self.is_running() and "bolt_port" in state and "http_port" in state:
            return ServerSettings(
                home=self.settings.home,
                instance=self.settings.instance,
                bolt_port=int(state["bolt_port"]),  # type: ignore[arg-type]
                http_port=int(state["http_port"]),  # type: ignore[arg-type]
                heap=str(state.get("heap", self.settings.heap)),
                pagecache=str(state.get("pagecache", self.settings.pagecache)),
            )
        return self.settings

    def password(self) -> str:
        return read_password_file(self.settings.password_file)

    # Bolt --------------------------------------------------------------------------------
    def _query_version(self, settings: ServerSettings, timeout: float = 5.0) -> str:
        from neo4j import GraphDatabase

        with GraphDatabase.driver(
            settings.uri,
            auth=(DEFAULT_USER, self.password()),
            connection_timeout=timeout,
            connection_acquisition_timeout=timeout,
            max_connection_lifetime=60,
        ) as driver:
            # A plain session, not execute_query: its retry loop would log every refused try.
            with driver.session(database="system") as session:
                record = session.run(
                    "CALL dbms.components() YIELD versions RETURN versions[0] AS version"
                ).single(strict=True)
            return str(record["version"])

    # Commands ------------------------------------------------------------------------------
    def start(self, timeout: float = 180.0) -> tuple[ServerStatus, bool]:
        """Start the server and return once Bolt answers a query.

        Returns
        -------
        (status, started)
            ``started`` is False when the server was already running.

        Raises
        ------
        ServerError
            Java or Maven missing, a failed jar download, a taken port, a server that dies or
            does not answer within ``timeout`` seconds. The message names the log file.
        """
        if self.is_running():
            status = self.status()
            if status.version is None:
                raise ServerError(
                    f"a server process (pid {status.pid}) runs for {self.settings.instance_dir} "
                    f"but does not answer on {status.uri}; see {self.settings.neo4j_log}, or "
                    "`linksim neo4j stop` it"
                )
            return status, False
        s = self.settings
        home_folder(s.home)
        for port, what, option in (
            (s.bolt_port, "Bolt", "--bolt-port / LINKSIM_BOLT_PORT"),
            (s.http_port, "HTTP", "--http-port / LINKSIM_HTTP_PORT"),
        ):
            if not port_is_free(port):
                raise ServerError(
                    f"port {port} on 127.0.0.1 (for {what}) is already in use by another "
                    f"process; choose another port with {option}"
                )
            # A server still recovering its store after a crash listens only when recovery ends
            # (minutes for a large store): its port looks free, and two servers would share it.
            other = self._instance_on_port(port)
            if other is not None:
                raise ServerError(
                    f"port {port} on 127.0.0.1 (for {what}) belongs to the linksim instance {other!r}, "
                    f"which is starting (it listens once its store is recovered); choose another port "
                    f"with {option}"
                )
        java = self.java()
        self.ensure_jars()
        self._write_conf()
        self.install_procedures(java)
        self._ensure_password(java)
        s.console_log.parent.mkdir(parents=True, exist_ok=True)
        log.info("starting Neo4j %s on %s (logs: %s)", s.neo4j_version, s.uri, s.logs_dir)
        class_data, dump = self._class_data_options(java)
        with open(s.console_log, "ab") as console:
            process = subprocess.Popen(
                self._command(java, class_data),
                stdout=console,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env(),
                cwd=s.instance_dir,
                start_new_session=True,
            )
        self._write_state(
            {
                "pid": process.pid,
                "bolt_port": s.bolt_port,
                "http_port": s.http_port,
                "heap": s.heap,
                "pagecache": s.pagecache,
                "version": s.neo4j_version,
                "started": time.time(),
                **({"class_data_dump": str(dump)} if dump else {}),
            }
        )
        self._wait_ready(process, timeout)
        return self.status(), True

    def _wait_ready(self, process: subprocess.Popen, timeout: float) -> None:
        """Wait for Bolt to answer, ``timeout`` seconds, and longer while the server recovers its
        store after an unclean stop (the logs of a large write take minutes to replay, and the
        server listens only after): as long as its debug log shows recovery progress within
        ``timeout`` seconds. A server stopped in the middle would replay it all again."""
        s = self.settings
        debug_log = s.logs_dir / "debug.log"
        try:
            since = debug_log.stat().st_size
        except OSError:
            since = 0
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        told = False
        while True:
            if time.monotonic() >= deadline:
                progress = _recovery_progress(debug_log, since)
                if progress is None or time.time() - progress[0] >= timeout:
                    break
                if not told:
                    log.info("the server recovers its store after an unclean stop (%s); waiting while it "
                             "progresses", progress[1])
                    told = True
                deadline = time.monotonic() + timeout - (time.time() - progress[0])
            code = process.poll()
            if code is not None:
                raise ServerError(
                    f"Neo4j exited during start (exit code {code}); see {s.console_log} and "
                    f"{s.neo4j_log}. Last lines:\n{log_tail(s.console_log)}"
                )
            if port_is_free(s.bolt_port):
                time.sleep(0.5)
                continue
            try:
                self._query_version(s, timeout=2.0)
                return
            except Exception as exc:  # noqa: BLE001 - any failure means "not ready yet"
                last_error = exc
                time.sleep(0.5)
        self._terminate(process.pid, grace=30.0)
        raise ServerError(
            f"Neo4j did not answer on {s.uri} within {timeout:.0f} s ({last_error}); it was "
            f"stopped. See {s.console_log} and {s.neo4j_log}."
        )

    def _terminate(self, pid: int, grace: float) -> bool:
        """SIGTERM (a clean Neo4j shutdown), then SIGKILL after ``grace`` seconds."""
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not self._alive(pid):
                return True
            time.sleep(0.2)
        log.warning("Neo4j (pid %d) did not stop within %.0f s; killing it", pid, grace)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return True
        while self._alive(pid):
            time.sleep(0.1)
        return False

    @staticmethod
    def _alive(pid: int) -> bool:
        try:
            waited, _ = os.waitpid(pid, os.WNOHANG)
            if waited == pid:
                return False
        except ChildProcessError:
            pass
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            return stat.rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return True

    def stop(self, grace: float = 120.0) -> bool:
        """Stop the server cleanly. Returns False if it was not running."""
        pid = self.pid()
        if pid is None:
            return False
        log.info("stopping Neo4j (pid %d)", pid)
        clean = self._terminate(pid, grace)
        state = self._read_state()
        state.pop("pid", None)
        if clean:
            self._keep_class_data(state)
        self._write_state(state)
        if not clean:
            raise ServerError(
                f"Neo4j (pid {pid}) had to be killed after {grace:.0f} s; see {self.settings.neo4j_log}"
            )
        return True

    def status(self) -> ServerStatus:
        running = self.running_settings()
        pid = self.pid()
        version = None
        if pid is not None:
            try:
                version = self._query_version(running)
            except Exception as exc:  # noqa: BLE001 - reported as "not answering"
                log.debug("server pid %d does not answer: %s", pid, exc)
        return ServerStatus(
            running=pid is not None and version is not None,
            uri=running.uri,
            http_url=running.http_url,
            browser_url=running.browser_url,
            user=DEFAULT_USER,
            password_file=str(self.settings.password_file),
            version=version,
            pid=pid,
            home=str(self.settings.instance_dir),
        )
