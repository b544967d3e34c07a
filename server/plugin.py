"""linksim's Neo4j procedures (``linksim.related``, ``linksim.relatedHosts``): the current related
pages of a page in one short query, the run protocol read inside the server.

The source (``server/java/Related.java``) ships with the package; it is compiled against the
server's own jars with the ``javac`` beside the ``java`` that runs Neo4j (or on PATH), into a jar
cached under the server's folder and named by a digest of the source and of the jars it was built
against, so a new Neo4j version or a changed source builds it again. No Java build tool: ``javac``
and :mod:`zipfile` make the jar. A server without a JDK runs without the procedures; the protocol
query (``cypher/related_pages.cypher``) answers the same on any server.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

from linksim.errors import LinksimError

SOURCE = "Related.java"
JAR_PREFIX = "linksim-procedures-"


class PluginError(LinksimError):
    """The procedures could not be compiled (no ``javac``, or it failed)."""


def source_text() -> str:
    return resources.files("linksim.server").joinpath("java", SOURCE).read_text(encoding="utf-8")


def javac_executable(java: str | None = None) -> str | None:
    """The ``javac`` beside ``java`` (a JDK's bin), else JAVA_HOME's, else on PATH."""
    candidates = []
    if java:
        candidates.append(Path(java).resolve().parent / "javac")
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]) / "bin" / "javac")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("javac")


def jar_name(lib_dir: Path) -> str:
    """The jar's file name: a digest of the source and of the names of the jars it compiles
    against (their versions are in their names)."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(source_text().encode("utf-8"))
    for name in sorted(p.name for p in lib_dir.glob("*.jar")):
        digest.update(name.encode("utf-8") + b"\0")
    return f"{JAR_PREFIX}{digest.hexdigest()}.jar"


def build(lib_dir: Path, java: str | None = None) -> Path:
    """The procedures' jar compiled against the jars in ``lib_dir``, in the ``plugin`` folder
    beside it (reused when already built from the same source and jars; written to a temporary
    name, then renamed)."""
    out_dir = lib_dir.parent / "plugin"
    jar = out_dir / jar_name(lib_dir)
    if jar.is_file():
        return jar
    javac = javac_executable(java)
    if javac is None:
        raise PluginError(
            "no javac (a JDK 17 or 21) to compile linksim's procedures: install one (e.g. "
            "`apt-get install openjdk-17-jdk-headless`) or set JAVA_HOME to it"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="linksim-plugin-") as work:
        source = Path(work) / SOURCE
        source.write_text(source_text(), encoding="utf-8")
        classes = Path(work) / "classes"
        result = subprocess.run(
            [javac, "--release", "17", "-proc:none", "-nowarn", "-encoding", "UTF-8",
             "-cp", f"{lib_dir}/*", "-d", str(classes), str(source)],
            capture_output=True, text=True, timeout=300, check=False,
        )
        if result.returncode != 0:
            raise PluginError(f"javac could not compile linksim's procedures (exit {result.returncode}):\n"
                              f"{(result.stderr or result.stdout).strip()[-2000:]}")
        partial = jar.with_name(jar.name + f".partial-{os.getpid()}")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: linksim\n\n")
            for path in sorted(classes.rglob("*.class")):
                archive.write(path, path.relative_to(classes).as_posix())
        os.replace(partial, jar)
    return jar


def install(lib_dir: Path, plugins_dir: Path, java: str | None = None) -> Path:
    """Put the procedures' jar built against ``lib_dir`` into ``plugins_dir`` (in effect at the
    server's next start), in place of any other build of it."""
    jar = build(lib_dir, java)
    plugins_dir.mkdir(parents=True, exist_ok=True)
    for old in plugins_dir.glob(f"{JAR_PREFIX}*.jar"):
        if old.name != jar.name:
            old.unlink()
    target = plugins_dir / jar.name
    if not target.is_file():  # a whole jar or none: a server would refuse to start on a cut one
        partial = target.with_name(target.name + f".partial-{os.getpid()}")
        shutil.copy2(jar, partial)
        os.replace(partial, target)
    return target
