"""``linksim hosts``: the host graph of the page graph (cypher/hosts.cypher): one ``(:Host {name})``
per host, ``(:Page)-[:ON_HOST]->(:Host)``, and ``(:Host)-[:HOST_LINKS_TO {links}]->(:Host)`` with
the number of page links from one host to another. Idempotent: a rebuild leaves exactly the host
graph of the pages and links as they are (hosts and host links gone from the page graph are
deleted), and a load into a graph that has one rebuilds it."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from linksim import cypher
from linksim.parameters import check_parameters
from linksim.procedures.locks import acquire
from linksim.progress import Progress


@dataclass
class HostGraph:
    """What a build left: hosts, pages on a host, host links (pairs) and the page links they count,
    and how long it took."""

    hosts: int
    pages: int
    host_links: int
    links: int
    seconds: float = 0.0
    timings: dict = field(default_factory=dict)
    changed: bool = False  # hosts or host pairs changed (the host graph's version was bumped)

    def as_dict(self) -> dict:
        return asdict(self)


def host_graph_built(runner) -> bool:
    return bool(runner.run(cypher.query("hosts", "host_graph_built"))[0]["built"])


def host_counts(runner) -> HostGraph:
    row = runner.run(cypher.query("hosts", "host_counts"))[0]
    return HostGraph(row["hosts"], row["pages"], row["host_links"], row["links"])


def build_host_graph(runner, batch_size: int = 10_000, show_progress: bool = True, wait: float = 0.0,
                     locked: bool = False) -> HostGraph:
    """Build or bring up to date the host graph (see the module). ``locked``: the caller holds the
    load's writer lock (a load rebuilding it); otherwise the build takes it."""
    check_parameters(batch_size=batch_size, wait=wait)
    if locked:
        return _build(runner, batch_size, show_progress)
    with acquire(runner, "load", wait=wait):  # the host graph is written by loads too
        return _build(runner, batch_size, show_progress)


READ_CHUNK = 10_000  # rows a record of the build's reads (cypher/hosts.cypher)


def _rows(runner, name: str):
    """The rows of one of the build's reads, which answer them as lists of READ_CHUNK."""
    for record in runner.stream(cypher.query("hosts", name), {"chunk": READ_CHUNK}, fetch_size=8):
        yield from record["rows"]


def _build(runner, batch_size: int, show_progress: bool) -> HostGraph:
    began = time.monotonic()
    timings = {}
    # What the host graph should be, read before anything is written: a build that changes its
    # hosts or host pairs bumps its version (cypher/graph.cypher) before it writes and after, so
    # that an index of the host graph is stale from the first write on, even if the build dies.
    names = list(_rows(runner, "host_names"))
    existing_names = set(_rows(runner, "existing_hosts"))
    counted = {(source, target): links for source, target, links in _rows(runner, "host_link_counts")}
    existing = {(source, target): (links, rel) for source, target, links, rel in _rows(runner, "existing_host_links")}
    gone = [rel for pair, (_, rel) in existing.items() if pair not in counted]
    # New pairs are created, pairs whose count changed are set by id: no MERGE, which looks through
    # the host's relationships (the build holds the load's lock: no one else writes them).
    new = [{"source": a, "target": b, "links": n} for (a, b), n in counted.items() if (a, b) not in existing]
    recounted = [{"id": existing[pair][1], "links": n} for pair, n in counted.items()
                 if pair in existing and existing[pair][0] != n]
    reshaped = set(names) != existing_names or bool(gone) or bool(new)
    if reshaped:
        runner.write(cypher.query("graph", "bump_host_graph_version"), {"building": True})
    timings["read"] = time.monotonic() - began

    mark = time.monotonic()
    for start in range(0, len(names), batch_size):
        runner.write(cypher.query("hosts", "merge_hosts"), {"names": names[start : start + batch_size]})
    timings["hosts"] = time.monotonic() - mark

    mark = time.monotonic()
    bounds = runner.run(cypher.query("hosts", "page_id_range"))[0]
    if bounds["low"] is not None:
        low, high = bounds["low"], bounds["high"] + 1
        with Progress(high - low, "pages put on their hosts", "node ids", enabled=show_progress) as progress:
            for start in range(low, high, batch_size):
                runner.write(cypher.query("hosts", "on_host"), {"low": start, "high": min(start + batch_size, high)})
                progress.update(min(batch_size, high - start))
    timings["pages"] = time.monotonic() - mark

    mark = time.monotonic()
    for start in range(0, len(gone), batch_size):
        runner.write(cypher.query("hosts", "delete_host_links"), {"ids": gone[start : start + batch_size]})
    with Progress(len(new) + len(recounted), "host links written", "host links", enabled=show_progress) as progress:
        for name, rows in (("create_host_links", new), ("set_host_link_counts", recounted)):
            for start in range(0, len(rows), batch_size):
                runner.write(cypher.query("hosts", name), {"rows": rows[start : start + batch_size]})
                progress.update(len(rows[start : start + batch_size]))
    runner.write(cypher.query("hosts", "delete_empty_hosts"))
    if reshaped:
        runner.write(cypher.query("graph", "bump_host_graph_version"), {"building": False})
    timings["host links"] = time.monotonic() - mark
    result = host_counts(runner)
    result.seconds, result.timings = time.monotonic() - began, timings
    result.changed = reshaped
    return result
