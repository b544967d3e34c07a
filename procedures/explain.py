"""``linksim explain``: why two pages are related (:mod:`linksim.explain`), with the links of the
walks and paths read from Neo4j page by page."""

from __future__ import annotations

import pandas as pd

from linksim import cypher
from linksim.procedures.indexes import IndexHandle
from linksim.procedures.indexes import answering

COLUMNS = ["kind", "share", "fingerprint", "step", "page", "path_a", "path_b", "received_a", "received_b"]


def graph_neighbours(handle: IndexHandle, runner):
    """``neighbours(pages, inward)`` of :mod:`linksim.explain` from the graph: each page's in-links
    (or out-links) as page numbers of the index, in increasing order (pages the index does not
    hold, such as pages left out of a crawled-only index, are left out)."""
    queries = {True: cypher.query("explain", "in_links"), False: cypher.query("explain", "out_links")}

    def read(pages: list[int], inward: bool) -> dict[int, list[int]]:
        urls = handle.pages.urls(pages)
        found = {}
        for row in runner.run(queries[inward], {"urls": urls}):
            numbers = (handle.pages.page(url) for url in row["neighbours"])
            found[handle.pages.page(row["url"])] = sorted(n for n in numbers if n is not None)
        return found

    return read


def page_codes(handle: IndexHandle):
    """``codes(pages)`` of :mod:`linksim.explain`: the pages' draw codes, hashes of their URLs, as
    the index's build keyed its draws (:attr:`linksim.graph.LinkGraph.codes`)."""
    from linksim.graph import key_codes

    def codes(pages: list[int]) -> dict[int, int]:
        return dict(zip(pages, key_codes(handle.pages.urls(pages)).tolist()))

    return codes


def graph_paths(handle: IndexHandle, runner):
    """``paths(pairs)`` of :mod:`linksim.explain` from the graph: Neo4j's shortest link paths, as
    page numbers of the index (a pair of one page: that page)."""
    query = cypher.query("explain", "shortest_paths")

    def read(pairs: list[tuple[int, int]]) -> dict[tuple[int, int], list[int]]:
        found = {(a, b): [a] for a, b in pairs if a == b}
        apart = [(a, b) for a, b in pairs if a != b]
        if apart:
            urls = [handle.pages.urls([a, b]) for a, b in apart]
            by_urls = {tuple(row["pair"]): row["urls"] for row in runner.run(query, {"pairs": urls})}
            for (a, b), pair in zip(apart, urls):
                path = by_urls.get(tuple(pair))
                if path is not None:
                    found[(a, b)] = [handle.pages.page(url) for url in path]
        return found

    return read


def explain_pages(handle: IndexHandle, runner, url: str, other: str, n_fingerprints: int | None = None) -> pd.DataFrame:
    """The terms of the similarity of two pages (see :mod:`linksim.explain`), largest share first:
    kind, share, fingerprint, step, page (URL), path_a and path_b (lists of URLs), received_a and
    received_b (PageSim)."""
    from linksim.explain import explain

    u, v = handle.page(url), handle.page(other)
    with answering(handle):
        terms = explain(handle.index, u, v, graph_neighbours(handle, runner), n_fingerprints,
                        graph_paths(handle, runner), page_codes(handle))
    urls = handle.pages.urls
    return pd.DataFrame({
        "kind": pd.Series([t.kind for t in terms], dtype=object),
        "share": pd.Series([t.share for t in terms], dtype="float64"),
        "fingerprint": pd.Series([t.fingerprint for t in terms], dtype="Int64"),
        "step": pd.Series([t.step for t in terms], dtype="Int64"),
        "page": pd.Series([None if t.page is None else urls([t.page])[0] for t in terms], dtype=object),
        "path_a": pd.Series([None if t.path_a is None else urls(t.path_a) for t in terms], dtype=object),
        "path_b": pd.Series([None if t.path_b is None else urls(t.path_b) for t in terms], dtype=object),
        "received_a": pd.Series([t.received_a for t in terms], dtype="float64"),
        "received_b": pd.Series([t.received_b for t in terms], dtype="float64"),
    }, columns=COLUMNS)


def browser_paths(frame: pd.DataFrame, url: str, other: str, terms: int = 5) -> list[list[str]]:
    """The ``$paths`` of the Browser's explanation query (``explanation_graph`` in
    cypher/explain.cypher) for the ``terms`` largest terms: the two pages, each walk or link path,
    and each PageSim source as a page of its own."""
    paths = [[url], [other]]
    for row in frame.head(terms).itertuples():
        for path in (row.path_a, row.path_b):
            if isinstance(path, list) and path not in paths:
                paths.append(path)
        if row.kind == "source" and [row.page] not in paths:
            paths.append([row.page])
    return paths
