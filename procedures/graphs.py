"""The two link graphs every command runs on: the page graph (``(:Page {url})-[:LINKS_TO]->``,
the default) and the host graph that ``linksim hosts`` builds from it (``(:Host {name})
-[:HOST_LINKS_TO]->``, :mod:`linksim.procedures.hosts`).

A :class:`LinkGraphOf` holds what differs between them: the label, the property that names a node
(its key in an index), the link type and the query of the graph's state. These are fixed
fragments of the queries, chosen here by name, never text from a user. Everything else (the
indexes, PageRank, SIMILAR_TO under the run protocol, related, sim) is the same code on either.

The host graph is unweighted, as the page graph is: a host links to another when one of its pages
links to one of the other's (``HOST_LINKS_TO.links`` counts them, for reading). Its indexes live
in ``<index root>/hosts``; its SIMILAR_TO runs are current per method under the key
``<method>@hosts`` (:func:`run_key`), beside the pages' runs of the same method.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from linksim.parameters import check_graph


@dataclass(frozen=True)
class LinkGraphOf:
    name: str  # pages | hosts
    label: str
    key: str  # the property that names a node: its key in an index
    link: str
    state: str  # the query of cypher/graph.cypher that reads its state
    noun: str  # page | host

    @property
    def pages(self) -> bool:
        return self.name == "pages"


PAGE_GRAPH = LinkGraphOf("pages", "Page", "url", "LINKS_TO", "graph_state", "page")
HOST_GRAPH = LinkGraphOf("hosts", "Host", "name", "HOST_LINKS_TO", "host_graph_state", "host")
_GRAPHS = {g.name: g for g in (PAGE_GRAPH, HOST_GRAPH)}


def graph_of(name: str | LinkGraphOf = "pages") -> LinkGraphOf:
    """The graph named ``name`` (``pages`` or ``hosts``); :class:`ConfigurationError` otherwise."""
    if isinstance(name, LinkGraphOf):
        return name
    return _GRAPHS[check_graph(name)]


def index_root_of(root: Path, graph: str | LinkGraphOf) -> Path:
    """Where the indexes of ``graph`` live: the database's index root for the pages, its
    ``hosts`` folder for the hosts (no method is called ``hosts``: the registry refuses it)."""
    graph = graph_of(graph)
    return Path(root) if graph.pages else Path(root) / graph.name


def run_key(method: str, graph: str | LinkGraphOf, targets: str | None = None) -> str:
    """The name of a method's SIMILAR_TO runs on ``graph``: its writer lock is ``similar:<key>``
    and its current run the ``(:LinksimCurrent {algorithm: <key>})`` node. ``targets``: the name
    of a target filter (:mod:`linksim.procedures.targets`): ``<method>@<targets>``."""
    graph = graph_of(graph)
    if targets is not None:
        return f"{method}@{targets}"
    return method if graph.pages else f"{method}@{graph.name}"


def empty_graph(graph: LinkGraphOf):
    """The error of a run on a graph without nodes, saying what builds them."""
    from linksim.errors import LinksimError

    if graph.pages:
        return LinksimError("the database has no pages: load a crawl first (`linksim load`)")
    return LinksimError("the database has no host graph: build it with `linksim hosts` (after `linksim load`)")


def refuse_crawled_only(graph: LinkGraphOf, crawled_only: bool) -> None:
    if crawled_only and not graph.pages:
        from linksim.errors import ConfigurationError

        raise ConfigurationError("--crawled-only (crawled_only) selects pages: it does not apply to the host graph")


def graph_of_names(runner, chosen: str | None, names) -> str:
    """The graph a query of ``names`` runs on: the one ``chosen``, else the hosts when every name
    is a bare host name (no scheme, no path) and none is the key of a stored page (a crawl loaded
    from bare ids, as cnr-2000 is, names its pages so), else the pages."""
    if chosen is not None:
        return check_graph(chosen)
    names = list(names)
    if not all(isinstance(n, str) and n and "://" not in n and "/" not in n for n in names):
        return "pages"
    from linksim import cypher

    named = runner.run(cypher.query("graph", "pages_named"), {"names": names})[0]["pages"]
    return "pages" if named else "hosts"
