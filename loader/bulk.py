"""Bulk import through Neo4j's own ``neo4j-admin database import full``.

For an empty database of the local server only: the import tool writes a new store offline, so
the server is stopped, the database replaced, and the server started again. Nodes get integer
import ids (not stored), so the relationship file carries numbers instead of URLs.
"""

from __future__ import annotations

import csv
import logging
import re
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd

from linksim.errors import LinksimError
from linksim.loader.graph import CrawlGraph, Links
from linksim.loader.online import WriteCounts

log = logging.getLogger(__name__)

ARRAY_DELIMITER = "\x1f"  # ASCII unit separator: never part of a category or a title


class BulkImportError(LinksimError):
    exit_code = 5


# A property name that goes into the import tool's CSV header: no `:` (which would start a type
# or an id space there), no delimiter, quote or control character.
_HEADER_NAME = re.compile(r"^[^\W\d][\w .-]{0,199}$")


def _property_columns(graph: CrawlGraph) -> dict[str, str]:
    """Extra page properties and their import type (``string`` or ``string[]``)."""
    columns: dict[str, str] = {}
    for properties in graph.properties.values():
        for name, value in properties.items():
            if name not in columns and not _HEADER_NAME.match(name):
                raise BulkImportError(
                    f"the page property name {name[:60]!r} cannot go into the import tool's CSV header "
                    "(names start with a letter or _ and hold letters, digits, _, ., - and spaces); "
                    "rename the column, or load with --mode online"
                )
            kind = "string[]" if isinstance(value, list) else "string"
            if columns.get(name) != "string[]":
                columns[name] = kind
    return columns


def needs_multiline(graph: CrawlGraph) -> bool:
    """True if a title, anchor or property holds a line break (the import tool must then parse
    quoted multi-line fields, single-threaded and about 10% slower)."""
    def broken(value: object) -> bool:
        if isinstance(value, list):
            return any(broken(v) for v in value)
        return isinstance(value, str) and ("\n" in value or "\r" in value)

    return (
        any(broken(t) for t in graph.titles.values())
        or any(broken(a) for a in graph.anchors.values())
        or any(broken(v) for p in graph.properties.values() for v in p.values())
    )


def write_csv_files(graph: CrawlGraph, links: Links, folder: Path) -> tuple[Path, Path]:
    """Write ``pages.csv`` and ``links.csv`` with import headers into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    hosts = graph.hosts()
    extra = _property_columns(graph)
    header = [":ID(Page)", "url", "title", "host", "crawled:boolean"] + [
        f"{name}:{kind}" for name, kind in extra.items()
    ]
    pages = folder / "pages.csv"
    with open(pages, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for idx, url in enumerate(graph.urls):
            properties = graph.properties.get(idx, {})
            row = [idx, url, graph.titles.get(idx, ""), hosts[idx] or "",
                   "true" if graph.crawled[idx] else "false"]
            for name in extra:
                value = properties.get(name, "")
                row.append(ARRAY_DELIMITER.join(map(str, value)) if isinstance(value, list) else value)
            writer.writerow(row)
    frame = pd.DataFrame(
        {":START_ID(Page)": links.source, ":END_ID(Page)": links.target, "count:long": links.count}
    )
    if graph.anchors:
        anchors = graph.anchors
        frame["anchor"] = [
            anchors.get((s, t), "") for s, t in zip(links.source.tolist(), links.target.tolist())
        ]
    rels = folder / "links.csv"
    frame.to_csv(rels, index=False)
    return pages, rels


def bulk_import_command(
    server, database: str, pages_csv: Path, links_csv: Path, report: Path, multiline: bool = True
) -> list[str]:
    """The ``neo4j-admin database import full`` command line for the two CSV files."""
    return [
        server.java(), "-cp", f"{server.settings.lib_dir}/*", "org.neo4j.cli.AdminTool",
        "database", "import", "full", database,
        f"--nodes=Page={pages_csv}",
        f"--relationships=LINKS_TO={links_csv}",
        "--id-type=integer",
        f"--multiline-fields={'true' if multiline else 'false'}",
        f"--array-delimiter={ARRAY_DELIMITER}",
        "--overwrite-destination=true",
        f"--report-file={report}",
        "--threads=2",
    ]


def bulk_import(server, database: str, graph: CrawlGraph, links: Links) -> tuple[WriteCounts, dict]:
    """Replace the (empty) ``database`` of the local ``server`` by the crawl, via the import tool.

    Returns the write counts and timings in seconds (``csv``, ``stop``, ``import``, ``start``).
    The server is started again whatever happens; on failure the message names the tool's log.
    """
    settings = server.settings
    folder = settings.import_dir / f"linksim-bulk-{int(time.time() * 1000)}"
    timings: dict[str, float] = {}
    began = time.monotonic()
    try:
        log.info("bulk import: writing CSV files to %s", folder)
        try:
            pages_csv, links_csv = write_csv_files(graph, links, folder)
        except OSError as error:
            raise BulkImportError(
                f"cannot write the import's CSV files to {folder}: {error.strerror or error}. Nothing "
                "was imported; the database is as it was (free some space, or load with --mode online)"
            ) from None
        timings["csv"] = time.monotonic() - began
        began = time.monotonic()
        server.stop()
        timings["stop"] = time.monotonic() - began
        began = time.monotonic()
        log.info("bulk import: server stopped, running neo4j-admin database import full %s", database)
        command = bulk_import_command(
            server, database, pages_csv, links_csv, folder / "import.report", needs_multiline(graph)
        )
        result = subprocess.run(command, env=server.env(), capture_output=True, text=True, check=False)
        timings["import"] = time.monotonic() - began
        log_file = settings.logs_dir / "bulk-import.log"
        log_file.write_text(result.stdout + result.stderr, encoding="utf-8")
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-8:])
            raise BulkImportError(
                f"neo4j-admin database import failed (exit {result.returncode}); see {log_file}:\n{tail}"
            )
    finally:
        began = time.monotonic()
        if not server.is_running():
            server.start()
        timings["start"] = time.monotonic() - began
        shutil.rmtree(folder, ignore_errors=True)
    return WriteCounts(pages_created=len(graph), links_created=len(links)), timings

