"""A local Neo4j 5.26 Community server assembled from Maven Central jars.

No Docker and no tarball: Maven resolves ``org.neo4j:neo4j`` (the Community DBMS),
``org.neo4j.app:neo4j-server`` (HTTP server) and ``org.neo4j.client:neo4j-browser`` into
``<home>/neo4j-<version>/lib`` once; every start then launches the server JVM directly
(``org.neo4j.server.CommunityEntryPoint``), listening on 127.0.0.1 only, with authentication on
and a generated password kept in an owner-only file.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import http.client
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

from filelock import FileLock

from linksim.errors import LinksimError
from linksim.server import plugin
from linksim.server.credentials import generate_password, read_password_file, write_password_file
from linksim.home import home_folder
from linksim.server.settings import DEFAULT_USER, GDS_VERSION, ServerSettings

log = logging.getLogger(__name__)

MIN_JAVA = 17
MAX_JAVA = 21  # Neo4j 5.26 supports Java 17 and 21.
_READY_MARKER = ".complete"
# A dump of class data not renamed into place within this long was left by a server that was
# killed while it wrote it (or before): removed at the next start.
_STALE_DUMP_SECONDS = 3600.0
# The transaction-log volume between checkpoints (db.checkpoint=VOLUME).
CHECKPOINT_VOLUME = "1GiB"


class ServerError(LinksimError):
    """The local server could not be provisioned, started or stopped."""


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


def _artifact(jar: str) -> str:
    """``caffeine-3.1.8.jar`` -> ``caffeine``."""
    return re.sub(r"-\d[\w.+-]*\.jar$", "", jar)


def plugin_jars(resolved: list[str], lib: list[str], version: str = GDS_VERSION) -> list[str]:
    """Which resolved jars go into ``plugins``: every GDS module (``-<version>.jar``, even when a
    Neo4j jar has the same artifact name, e.g. ``neo4j-values``) and third-party jars that
    Neo4j's ``lib`` does not already have, so each library is on the class path once."""
    in_lib = {_artifact(jar) for jar in lib}
    return sorted(j for j in resolved if j.endswith(f"-{version}.jar") or _artifact(j) not in in_lib)


# The jars the local server runs on, as Maven resolves ``_pom`` (``make jars-lock`` writes it):
# their SHA-1 and paths in a Maven repository, so that a first start downloads them side by side
# (about 10 s) rather than through Maven's one request at a time for every POM and jar.
_JAR_LOCK = Path(__file__).with_name("jars.lock")
_DOWNLOADS = 8  # jars downloaded at once
_LOCKED_PATH = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/[A-Za-z0-9_.-]+\.jar")


def _maven(purpose: str) -> str:
    """The path of ``mvn``, or a :class:`ServerError` saying what linksim needs it for."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ServerError(f"Maven (`mvn`) was not found on PATH; linksim needs it {purpose}. Install it "
                          "(e.g. `apt-get install maven`), or point linksim at an existing server with NEO4J_URI.")
    return mvn


def _lock_header(settings: ServerSettings) -> str:
    return f"# neo4j {settings.neo4j_version} browser {settings.browser_version}"


def _locked_jars(settings: ServerSettings, lock: Path | None = None) -> list[tuple[str, str]]:
    """(sha1, path) of each jar of the lock, or none when the lock is of other versions."""
    try:
        lines = (lock or _JAR_LOCK).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    if _lock_header(settings) not in lines:
        return []
    jars = []
    for line in lines:
        if line and not line.startswith("#"):
            fields = line.split()
            if len(fields) != 2 or not re.fullmatch(r"[0-9a-f]{40}", fields[0]) \
                    or not _LOCKED_PATH.fullmatch(fields[1]) or ".." in fields[1]:
                raise ServerError(f"{lock or _JAR_LOCK}: not a line of a jar lock: {line!r}")
            jars.append((fields[0], fields[1]))
    return jars


def _download_jars(jars: list[tuple[str, str]], repository: str, staging: Path) -> None:
    """Each jar ``repository + path`` into ``staging`` under its file name, ``_DOWNLOADS`` at
    once; a jar whose SHA-1 is not the lock's is a :class:`ServerError`, a download that fails
    an ``OSError`` or ``http.client.HTTPException``; either way ``staging`` is removed."""
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    staging.mkdir(parents=True)

    def download(digest: str, path: str) -> None:
        sha1 = hashlib.sha1()
        with urllib.request.urlopen(repository + path, timeout=60) as answer, \
                open(staging / path.rsplit("/", 1)[-1], "wb") as out:
            while chunk := answer.read(1 << 20):
                sha1.update(chunk)
                out.write(chunk)
        if sha1.hexdigest() != digest:
            raise ServerError(f"{repository}{path} has SHA-1 {sha1.hexdigest()} where {_JAR_LOCK.name} "
                              f"says {digest}; no jar was installed")

    with ThreadPoolExecutor(max_workers=_DOWNLOADS) as pool:
        futures = [pool.submit(download, digest, path) for digest, path in jars]
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            pool.shutdown(wait=True)  # the downloads under way end before their folder goes
            shutil.rmtree(staging, ignore_errors=True)
            raise


def write_jar_lock(lock: Path, settings: ServerSettings | None = None) -> int:
    """Write ``lock`` (``make jars-lock``: server/jars.lock) from what Maven resolves for the
    local server's versions, with its local repository's files' SHA-1; returns the jars' count."""
    import tempfile

    settings = settings or ServerSettings.from_env()
    mvn = _maven("to write the jar lock, which lists what it resolves")
    with tempfile.TemporaryDirectory() as folder:
        pom, listed = Path(folder) / "pom.xml", Path(folder) / "list.txt"
        pom.write_text(_pom(settings), encoding="utf-8")
        subprocess.run([mvn, "-B", "-q", "-f", str(pom), "dependency:list", f"-DoutputFile={listed}",
                        "-DincludeScope=runtime", "-DoutputAbsoluteArtifactFilename=true"], check=True)
        rows = []
        for line in listed.read_text(encoding="utf-8").splitlines():
            parts = line.strip().split(":")
            if len(parts) not in (6, 7):
                continue  # the list's title and blank lines
            group, artifact, version, file = parts[0], parts[1], parts[-3], Path(parts[-1])
            path = f"{group.replace('.', '/')}/{artifact}/{version}/{file.name}"
            rows.append(f"{hashlib.sha1(file.read_bytes()).hexdigest()} {path}")
    lock.write_text(
        "# linksim: the jars of the local Neo4j server as Maven resolves them (make jars-lock); a first\n"
        "# start downloads them side by side from the Maven repository and checks each SHA-1.\n"
        f"{_lock_header(settings)}\n" + "\n".join(sorted(rows, key=lambda row: row.split()[1])) + "\n",
        encoding="utf-8")
    return len(rows)


def _pom(settings: ServerSettings) -> str:
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.linksim</groupId>
  <artifactId>linksim-neo4j-server</artifactId>
  <version>{settings.neo4j_version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.neo4j</groupId><artifactId>neo4j</artifactId>
      <version>{settings.neo4j_version}</version>
    </dependency>
    <dependency>
      <groupId>org.neo4j.app</groupId><artifactId>neo4j-server</artifactId>
      <version>{settings.neo4j_version}</version>
    </dependency>
    <dependency>
      <groupId>org.neo4j.client</groupId><artifactId>neo4j-browser</artifactId>
      <version>{settings.browser_version}</version>
    </dependency>
  </dependencies>
</project>
"""


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


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


class LocalServer:
    """One local Neo4j instance: provision jars, start, wait for Bolt, stop, report status."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings

    # Provisioning --------------------------------------------------------------------------
    def jars_ready(self) -> bool:
        return (self.settings.lib_dir / _READY_MARKER).is_file()

    def ensure_jars(self) -> Path:
        """Resolve the Neo4j jars from Maven Central into the cache unless already there. Two
        processes that start instances at once (two instances of one home) fetch them once:
        the second waits for the first and finds them ready."""
        s = self.settings
        if self.jars_ready():
            return s.lib_dir
        s.dist_dir.mkdir(parents=True, exist_ok=True)
        with FileLock(s.dist_dir / ".fetch.lock"):
            if self.jars_ready():
                return s.lib_dir
            return self._fetch_jars()

    def _fetch_jars(self) -> Path:
        """Into a staging folder renamed whole into ``lib`` (with its ready marker) once complete:
        the jars of ``server/jars.lock`` downloaded side by side and checked against their SHA-1
        when the lock is of these versions, else (or when the repository cannot be reached) the
        jars Maven resolves, one request at a time (about 850 requests: 85-140 s here)."""
        s = self.settings
        staging = s.dist_dir / "lib.partial"
        shutil.rmtree(staging, ignore_errors=True)
        s.dist_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        locked = _locked_jars(s)
        if locked:
            log.info("fetching the %d jars of Neo4j %s and Neo4j Browser %s from %s into %s "
                     "(first start only)", len(locked), s.neo4j_version, s.browser_version,
                     s.maven_repository, s.lib_dir)
            try:
                _download_jars(locked, s.maven_repository, staging)
            except (OSError, http.client.HTTPException) as error:  # unreachable, timed out, cut, missing
                log.warning("could not download the jars from %s (%s); resolving them with Maven",
                            s.maven_repository, error)
                locked = []
        if not locked:
            self._maven_jars(staging)
        shutil.rmtree(s.lib_dir, ignore_errors=True)
        staging.rename(s.lib_dir)
        (s.lib_dir / _READY_MARKER).write_text(s.neo4j_version + "\n", encoding="utf-8")
        log.info(
            "fetched %d jars in %.1f s",
            len(list(s.lib_dir.glob("*.jar"))),
            time.monotonic() - started,
        )
        return s.lib_dir

    def _maven_jars(self, staging: Path) -> None:
        s = self.settings
        mvn = _maven(f"once to fetch the Neo4j {s.neo4j_version} jars from Maven Central")
        pom = s.dist_dir / "pom.xml"
        pom.write_text(_pom(s), encoding="utf-8")
        log.info(
            "fetching Neo4j %s and Neo4j Browser %s jars from Maven Central into %s "
            "(first start only)",
            s.neo4j_version,
            s.browser_version,
            s.lib_dir,
        )
        with open(s.maven_log, "w", encoding="utf-8") as out:
            result = subprocess.run(
                [
                    mvn,
                    "-B",
                    "-f",
                    str(pom),
                    "dependency:copy-dependencies",
                    f"-DoutputDirectory={staging}",
                    "-DincludeScope=runtime",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            )
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise ServerError(
                f"Maven could not fetch the Neo4j {s.neo4j_version} jars (exit {result.returncode}); "
                f"see {s.maven_log}:\n{_tail(s.maven_log, 12)}"
            )

    def ensure_gds(self) -> Path:
        """Resolve Graph Data Science (Community) and its dependencies into the cache, once.

        The modules that make up the GDS plugin are on Maven Central: ``proc``, ``proc-sysinfo``,
        ``open-write-services`` and ``opengds-extension`` (which registers the procedures'
        facade). Third-party jars that Neo4j's own ``lib`` already has are left out, so that one
        copy of each library is on the class path; every GDS module is kept.
        """
        s = self.settings
        folder = s.gds_dir / "plugins"
        if (folder / _READY_MARKER).is_file():
            return folder
        self.ensure_jars()
        s.gds_dir.mkdir(parents=True, exist_ok=True)
        with FileLock(s.gds_dir / ".fetch.lock"):
            if (folder / _READY_MARKER).is_file():
                return folder
            return self._fetch_gds(folder)

    def _fetch_gds(self, folder: Path) -> Path:
        s = self.settings
        mvn = _maven("once to fetch GDS")
        modules = ("proc", "proc-sysinfo", "open-write-services", "opengds-extension")
        dependencies = "".join(
            f"<dependency><groupId>org.neo4j.gds</groupId><artifactId>{m}</artifactId>"
            f"<version>{GDS_VERSION}</version></dependency>"
            for m in modules
        )
        pom = s.gds_dir / "pom.xml"
        pom.write_text(
            '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            f"<groupId>io.linksim</groupId><artifactId>linksim-gds</artifactId><version>{GDS_VERSION}"
            f"</version><packaging>pom</packaging><dependencies>{dependencies}</dependencies></project>",
            encoding="utf-8",
        )
        staging = s.gds_dir / "all"
        shutil.rmtree(staging, ignore_errors=True)
        log.info("fetching Graph Data Science %s from Maven Central (first time only)", GDS_VERSION)
        log_file = s.gds_dir / "maven.log"
        with open(log_file, "w", encoding="utf-8") as out:
            result = subprocess.run(
                [mvn, "-B", "-f", str(pom), "dependency:copy-dependencies",
                 f"-DoutputDirectory={staging}", "-DincludeScope=runtime"],
                stdout=out, stderr=subprocess.STDOUT, check=False,
            )
        if result.returncode != 0:
            raise ServerError(f"Maven could not fetch GDS {GDS_VERSION}; see {log_file}:\n{_tail(log_file, 12)}")

        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        keep = plugin_jars([j.name for j in staging.glob("*.jar")], [j.name for j in s.lib_dir.glob("*.jar")])
        for name in keep:
            shutil.copy2(staging / name, folder / name)
        shutil.rmtree(staging, ignore_errors=True)
        (folder / _READY_MARKER).write_text(GDS_VERSION + "\n", encoding="utf-8")
        return folder

    def install_gds(self) -> None:
        """Put the GDS plugin jars into this instance's plugins folder (takes effect at start)."""
        for jar in self.ensure_gds().glob("*.jar"):
            target = self.settings.plugins_dir / jar.name
            if not target.exists():
                self.settings.plugins_dir.mkdir(parents=True, exist_ok=True)
                shutil.copy2(jar, target)

    def install_procedures(self, java: str) -> bool:
        """Compile linksim's procedures (``linksim.related``) against this server's jars and put
        them into its plugins folder; without a JDK the server runs without them (said once a
        start), since the protocol query answers the same."""
        try:
            plugin.install(self.settings.lib_dir, self.settings.plugins_dir, java)
        except plugin.PluginError as error:
            log.warning("%s. The server starts without linksim.related; the related-pages query of "
                        "cypher/related_pages.cypher answers the same.", error)
            return False
        return True

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
                    f"{s.neo4j_log}. Last lines:\n{_tail(s.console_log)}"
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
