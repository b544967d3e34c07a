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
from contextlib import contextmanager
from datetime import datetime, timezone
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


#: Links a chunk of ``links.csv`` holds: the links are written chunk by chunk, never all in memory.
CSV_CHUNK_LINKS = 1 << 22


def write_csv_files(graph: CrawlGraph, links: Links, folder: Path) -> tuple[Path, Path]:
    """Write ``pages.csv`` and ``links.csv`` with import headers into ``folder``, page by page and
    chunk by chunk of links (memory does not grow with the links)."""
    folder.mkdir(parents=True, exist_ok=True)
    extra = _property_columns(graph)
    header = [":ID(Page)", "url", "title", "host", "crawled:boolean", "lastCrawled:datetime"] + [
        f"{name}:{kind}" for name, kind in extra.items()
    ]
    pages = folder / "pages.csv"
    with open(pages, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        titles, properties_of, crawled = graph.titles, graph.properties, graph.crawled
        at = datetime.now(timezone.utc).isoformat()  # the crawled pages' lastCrawled, as online
        hosts = graph.hosts()
        for idx, url in enumerate(graph.urls):
            row = [idx, url, titles.get(idx, ""), hosts[idx] or "", "true" if crawled[idx] else "false",
                   at if crawled[idx] else ""]
            if extra:
                properties = properties_of.get(idx, {})
                for name in extra:
                    value = properties.get(name, "")
                    row.append(ARRAY_DELIMITER.join(map(str, value)) if isinstance(value, list) else value)
            writer.writerow(row)
    rels = folder / "links.csv"
    anchors = graph.anchors
    header = ",".join([":START_ID(Page)", ":END_ID(Page)", "count:long"] + (["anchor"] if anchors else []))
    if anchors:  # small crawls read from pages (WARC, crawl CSV): the text column through pandas
        with open(rels, "w", encoding="utf-8", newline="") as handle:
            handle.write(header + "\n")
            for source, target, count in links.chunks(CSV_CHUNK_LINKS):
                frame = pd.DataFrame({"s": source, "t": target, "c": count})
                frame["anchor"] = [anchors.get((s, t), "") for s, t in zip(source.tolist(), target.tolist())]
                frame.to_csv(handle, index=False, header=False)
    else:  # numbers only: pyarrow's writer, no quoting to agree on (both CSV files of the 30M-link
        # crawl in 20 s, 42 s with pandas)
        import pyarrow as pa
        import pyarrow.csv as pacsv

        options = pacsv.WriteOptions(include_header=False)
        with open(rels, "wb") as handle:
            handle.write(header.encode("ascii") + b"\n")
            for source, target, count in links.chunks(CSV_CHUNK_LINKS):
                pacsv.write_csv(pa.table({"s": source, "t": target, "c": count}), handle, write_options=options)
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
        "--verbose",  # the cause of a failure (a full disk) in the output, not only "run with --verbose"
    ]


def bulk_import(server, database: str, graph: CrawlGraph, links: Links) -> tuple[WriteCounts, dict]:
    """Replace the (empty) ``database`` of the local ``server`` by the crawl, via the import tool.

    Returns the write counts and timings in seconds (``csv``, ``stop``, ``import``, ``start``).
    Whatever happens, the server is started again and the CSV files are removed; when the import
    fails (a full disk, the tool killed), the database's folders as they were before are put back,
    and the message gives the tool's own reason and its log.
    """
    settings = server.settings
    folder = settings.import_dir / f"linksim-bulk-{int(time.time() * 1000)}"
    timings: dict[str, float] = {}
    try:
        _import(server, database, graph, links, folder, timings)
    except BaseException as failure:
        _restart(server, folder, timings, failure)
        raise
    _restart(server, folder, timings, None)
    return WriteCounts(pages_created=len(graph), links_created=len(links)), timings


def _import(server, database: str, graph: CrawlGraph, links: Links, folder: Path, timings: dict) -> None:
    settings = server.settings
    began = time.monotonic()
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
    with set_aside(settings.data_dir, database):
        result = subprocess.run(command, env=server.env(), capture_output=True, text=True, check=False)
        timings["import"] = time.monotonic() - began
        output = result.stdout + result.stderr
        log_file = settings.logs_dir / "bulk-import.log"
        try:
            log_file.write_text(output, encoding="utf-8")
        except OSError as error:
            log.warning("cannot keep the import tool's output in %s: %s", log_file, error)
        if result.returncode != 0:
            raise BulkImportError(
                f"neo4j-admin database import failed (exit {result.returncode}): {import_failure(output)}. "
                f"Nothing was imported: the database is as it was before the load (the tool's whole "
                f"output: {log_file}). Free some space or fix the cause, then load again, or load with "
                "--mode online"
            )


def import_failure(output: str) -> str:
    """The import tool's own reason in its output: the innermost cause of its stack trace, else its
    last error line, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for marker in ("Caused by:", "Exception:", "Error:", "error:"):
        found = [line for line in lines if marker in line]
        if found:
            return found[-1]
    return lines[-1] if lines else "no output"


def _restart(server, folder: Path, timings: dict, failure: BaseException | None) -> None:
    """Start the server again if it is stopped and remove the CSV files, whatever happened; a
    start that fails after a failed import says both."""
    began = time.monotonic()
    try:
        if not server.is_running():
            server.start()
    except LinksimError as error:
        if failure is None:
            raise
        raise BulkImportError(f"{failure}\nThen the server did not start again: {error}") from None
    finally:
        timings["start"] = time.monotonic() - began
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def set_aside(data_dir: Path, database: str):
    """Move the database's store and transaction folders aside while the import tool writes new
    ones; put them back if it fails (or this process dies: the next call restores them first),
    remove them once it succeeded."""
    places = [data_dir / "databases" / database, data_dir / "transactions" / database]
    asides = [place.with_name(f".{database}.before-import") for place in places]
    for place, aside in zip(places, asides):  # left by an import whose process died
        if aside.exists():
            shutil.rmtree(place, ignore_errors=True)
            aside.rename(place)
    moved = []
    for place, aside in zip(places, asides):
        if place.exists():
            place.rename(aside)
            moved.append((place, aside))
    try:
        yield
    except BaseException:
        for place, aside in moved:
            shutil.rmtree(place, ignore_errors=True)
            aside.rename(place)
        raise
    for _, aside in moved:
        shutil.rmtree(aside, ignore_errors=True)
