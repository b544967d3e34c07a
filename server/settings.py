"""Where linksim keeps its local Neo4j server and how that server is sized.

Everything lives under the linksim home directory: ``$LINKSIM_HOME`` if set, otherwise
``$XDG_CACHE_HOME/linksim`` or ``~/.cache/linksim``::

    <home>/neo4j-5.26.30/lib/          jars resolved from Maven Central (shared by all instances)
    <home>/neo4j-5.26.30/maven.log     output of the last jar resolution
    <home>/instances/<name>/conf/      neo4j.conf written at every start
    <home>/instances/<name>/data/      databases (persist across stop/start)
    <home>/instances/<name>/logs/      neo4j.log, debug.log, console.log
    <home>/instances/<name>/password   generated password, mode 0600
    <home>/instances/<name>/state.json pid, ports and version of the running server

The instance ``default`` is the one ``linksim neo4j start`` manages; the test suite uses its own
instance so that tests never wipe a user's data.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from linksim.errors import ConfigurationError
from linksim.home import linksim_home

NEO4J_VERSION = "5.26.30"
BROWSER_VERSION = "5.24.0"
MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2/"
GDS_VERSION = "2.13.9"  # Graph Data Science for Neo4j 5.26, optional (benchmarks' anchor)
DEFAULT_USER = "neo4j"
DEFAULT_DATABASE = "neo4j"

# Sized for a 2-core / 24 GiB machine: a heap large enough for the loader's UNWIND batches and a
# page cache that holds a crawl of a few million links, leaving most memory to numpy/scipy.
DEFAULT_HEAP = "4g"
DEFAULT_PAGECACHE = "2g"
DEFAULT_BOLT_PORT = 7687
DEFAULT_HTTP_PORT = 7474

_SIZE = re.compile(r"^[1-9][0-9]*[kmgKMG]?$")


def _port(value: object, name: str) -> int:
    try:
        port = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigurationError(f"{name} must be a port number, got {value!r}") from None
    if not 1 <= port <= 65535:
        raise ConfigurationError(f"{name} must be between 1 and 65535, got {port}")
    return port


def _size(value: str, name: str) -> str:
    if not _SIZE.match(str(value)):
        raise ConfigurationError(
            f"{name} must be a size such as 512m or 4g, got {value!r}"
        )
    return str(value).lower()


@dataclass(frozen=True)
class ServerSettings:
    """Settings of one local Neo4j instance.

    Parameters
    ----------
    home : Path
        The linksim home directory.
    instance : str
        Name of the instance directory under ``<home>/instances``.
    bolt_port, http_port : int
        Ports on 127.0.0.1. The server never listens on another address.
    heap, pagecache : str
        JVM heap (initial = max) and Neo4j page cache, as ``512m`` or ``4g``.
    """

    home: Path
    instance: str = "default"
    bolt_port: int = DEFAULT_BOLT_PORT
    http_port: int = DEFAULT_HTTP_PORT
    heap: str = DEFAULT_HEAP
    pagecache: str = DEFAULT_PAGECACHE
    neo4j_version: str = field(default=NEO4J_VERSION)
    browser_version: str = field(default=BROWSER_VERSION)
    maven_repository: str = MAVEN_CENTRAL  # where the jars of server/jars.lock are downloaded from

    def __post_init__(self) -> None:
        object.__setattr__(self, "bolt_port", _port(self.bolt_port, "the Bolt port"))
        object.__setattr__(self, "http_port", _port(self.http_port, "the HTTP port"))
        if self.bolt_port == self.http_port:
            raise ConfigurationError(
                f"the Bolt and HTTP ports must differ, both are {self.bolt_port}"
            )
        object.__setattr__(self, "heap", _size(self.heap, "the heap size"))
        object.__setattr__(self, "pagecache", _size(self.pagecache, "the page cache size"))
        if not re.fullmatch(r"https?://\S+", self.maven_repository):
            raise ConfigurationError(
                f"the Maven repository must be an http(s) URL, got {self.maven_repository!r}"
            )
        if not self.maven_repository.endswith("/"):
            object.__setattr__(self, "maven_repository", self.maven_repository + "/")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.instance):
            raise ConfigurationError(
                f"an instance name may hold letters, digits, '.', '_' and '-', got {self.instance!r}"
            )

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: object) -> "ServerSettings":
        """Settings from ``LINKSIM_*`` environment variables; ``overrides`` that are not None win.

        Variables: ``LINKSIM_HOME``, ``LINKSIM_INSTANCE``, ``LINKSIM_BOLT_PORT``,
        ``LINKSIM_HTTP_PORT``, ``LINKSIM_HEAP``, ``LINKSIM_PAGECACHE``,
        ``LINKSIM_MAVEN_REPOSITORY``.
        """
        env = os.environ if env is None else env
        values: dict[str, object] = {"home": linksim_home(env)}
        for key, var in (
            ("instance", "LINKSIM_INSTANCE"),
            ("bolt_port", "LINKSIM_BOLT_PORT"),
            ("http_port", "LINKSIM_HTTP_PORT"),
            ("heap", "LINKSIM_HEAP"),
            ("pagecache", "LINKSIM_PAGECACHE"),
            ("maven_repository", "LINKSIM_MAVEN_REPOSITORY"),
        ):
            if env.get(var):
                values[key] = env[var]
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]

    # Paths -------------------------------------------------------------------------------
    @property
    def dist_dir(self) -> Path:
        return self.home / f"neo4j-{self.neo4j_version}"

    @property
    def lib_dir(self) -> Path:
        return self.dist_dir / "lib"

    @property
    def gds_dir(self) -> Path:
        return self.home / f"gds-{GDS_VERSION}"

    @property
    def maven_log(self) -> Path:
        return self.dist_dir / "maven.log"

    @property
    def instance_dir(self) -> Path:
        return self.home / "instances" / self.instance

    @property
    def conf_dir(self) -> Path:
        return self.instance_dir / "conf"

    @property
    def data_dir(self) -> Path:
        return self.instance_dir / "data"

    @property
    def logs_dir(self) -> Path:
        return self.instance_dir / "logs"

    @property
    def plugins_dir(self) -> Path:
        return self.instance_dir / "plugins"

    @property
    def import_dir(self) -> Path:
        return self.instance_dir / "import"

    @property
    def password_file(self) -> Path:
        return self.instance_dir / "password"

    @property
    def state_file(self) -> Path:
        return self.instance_dir / "state.json"

    @property
    def console_log(self) -> Path:
        return self.logs_dir / "console.log"

    @property
    def neo4j_log(self) -> Path:
        return self.logs_dir / "neo4j.log"

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def browser_url(self) -> str:
        return f"{self.http_url}/browser/"
