"""What the local server runs on: the Neo4j and Browser jars of ``server/jars.lock`` (or as Maven
resolves them), Graph Data Science for the anchors, and linksim's own procedures; each fetched
once into the cache, whole or not at all, whichever processes ask at once."""

from __future__ import annotations

import hashlib
import http.client
import logging
import re
import shutil
import subprocess
import time
from pathlib import Path

from filelock import FileLock

from linksim.server import plugin
from linksim.server.errors import ServerError, log_tail
from linksim.server.settings import GDS_VERSION, ServerSettings

log = logging.getLogger(__name__)

_READY_MARKER = ".complete"


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


class Artifacts:
    """The jars of one server's settings: fetched into the cache once, installed into its plugins."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings

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
                f"see {s.maven_log}:\n{log_tail(s.maven_log, 12)}"
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
            raise ServerError(f"Maven could not fetch GDS {GDS_VERSION}; see {log_file}:\n{log_tail(log_file, 12)}")

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
