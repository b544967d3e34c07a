"""The import tool running out of disk: its store folder on a small file system this test mounts
(tmpfs), the import fails mid-write; the server comes back with the database as it was, the
message gives the tool's own reason, and the import's CSV files are gone."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from linksim.loader.bulk import BulkImportError
from linksim.procedures import QueryRunner
from linksim.procedures.load import load
from linksim.procedures.schema import apply_schema
from linksim.server import LocalServer, ServerSettings
from linksim.server.connection import Connection


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

pytestmark = pytest.mark.integration


def _mount_tmpfs(folder: Path, size: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        reason = f"this test mounts a small tmpfs and needs root for it: {result.stderr.strip()}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


def _used_bytes(folder: Path) -> int:
    stats = os.statvfs(folder)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


@pytest.fixture
def small_disk_server(neo4j_server, tmp_path_factory):
    """A server of its own whose store folder (data/databases) is a tmpfs with 3 MB to spare."""
    if neo4j_server.local is None:
        pytest.skip(f"bulk mode needs the local server; this one was provisioned by {neo4j_server.kind}")
    settings = ServerSettings.from_env(instance="pytest-small-disk", bolt_port=free_port(), http_port=free_port(),
                                       heap="512m", pagecache="64m")
    server = LocalServer(settings)
    server.stop()
    shutil.rmtree(settings.instance_dir, ignore_errors=True)
    stores = settings.data_dir / "databases"
    try:
        server.start()  # a new instance: its password, its empty databases
        server.stop()
        stores.rename(stores.with_name("databases.on-disk"))
        _mount_tmpfs(stores, "256m")
        for entry in stores.with_name("databases.on-disk").iterdir():
            (shutil.copytree if entry.is_dir() else shutil.copy2)(entry, stores / entry.name)
        # Just what the empty databases take, and 3 MB: far too little for the crawl below.
        subprocess.run(["mount", "-o", f"remount,size={_used_bytes(stores) + (3 << 20)}", str(stores)],
                       check=True)
        server.start()
        yield server
    finally:
        server.stop()
        subprocess.run(["umount", str(stores)], check=False)
        shutil.rmtree(settings.instance_dir, ignore_errors=True)


def _state(runner: QueryRunner) -> tuple:
    pages = runner.run("MATCH (p) RETURN count(p) AS n")[0]["n"]
    links = runner.run("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    schema = sorted(row["name"] for row in runner.run("SHOW INDEXES YIELD name RETURN name"))
    return pages, links, schema


def test_the_import_tool_out_of_disk_leaves_the_database_as_it_was(small_disk_server: LocalServer,
                                                                  tmp_path: Path) -> None:
    server = small_disk_server
    crawl = tmp_path / "crawl.tsv"
    with open(crawl, "w", encoding="ascii") as handle:
        for i in range(400_000):
            handle.write(f"http://site{i % 97}.example/{i}\thttp://site{(i * 7) % 89}.example/{(i * 31) % 400_000}\n")

    def connect() -> QueryRunner:
        running = server.running_settings()
        return QueryRunner.connect(Connection(running.uri, "neo4j", server.password(), "neo4j", "local"))

    runner = connect()
    apply_schema(runner)
    before = _state(runner)
    assert before[0] == 0
    with pytest.raises(BulkImportError) as info:
        load([crawl], runner, mode="bulk", local_server=server, show_progress=False)
    runner.close()
    message = str(info.value)
    log = (server.settings.logs_dir / "bulk-import.log").read_text()
    assert "No space left on device" in message, message + "\n" + log[-3000:]  # the import tool's own reason
    assert "the database is as it was before the load" in message
    assert not list(server.settings.import_dir.glob("linksim-bulk-*"))  # its CSV files removed
    assert not list((server.settings.data_dir / "databases").glob(".*before-import"))

    assert server.is_running()
    runner = connect()
    assert _state(runner) == before
    runner.close()
    # The store is whole: a stop and a start (what `linksim neo4j start` does) give it back.
    server.stop()
    server.start()
    runner = connect()
    assert _state(runner) == before
    runner.close()
