"""Which link graph a command runs on, and the names it keys its indexes and runs by."""

from __future__ import annotations

from pathlib import Path

import pytest

from linksim.errors import ConfigurationError
from linksim.procedures.graphs import graph_of, graph_of_names, index_root_of, run_key
from linksim.procedures.stream import links_query, pages_query

from .conftest import RecordingRunner


def stored_pages(urls: set[str]) -> RecordingRunner:
    return RecordingRunner({"Page {url: name}": lambda p: [{"pages": len(set(p["names"]) & urls)}]})


def test_bare_host_names_take_the_host_graph_unless_pages_are_stored_under_them() -> None:
    runner = stored_pages({"12345", "67"})  # a crawl loaded from bare ids (cnr-2000) names its pages so
    assert graph_of_names(runner, None, ["www.uni-lj.si"]) == "hosts"
    assert graph_of_names(runner, None, ["www.uni-lj.si", "www.ijs.si"]) == "hosts"
    assert graph_of_names(runner, None, ["12345"]) == "pages"
    sent = len(runner.sent)
    assert graph_of_names(runner, None, ["https://www.uni-lj.si/", "www.ijs.si"]) == "pages"  # a URL: pages
    assert graph_of_names(runner, None, ["www.uni-lj.si/a"]) == "pages"
    assert graph_of_names(runner, "hosts", ["https://x.org/"]) == "hosts"  # a choice is taken as given
    assert len(runner.sent) == sent  # none of these asked the server
    with pytest.raises(ConfigurationError, match="--graph"):
        graph_of_names(runner, "sites", ["x"])


def test_the_host_graph_keys_its_indexes_runs_and_queries_apart() -> None:
    pages, hosts = graph_of("pages"), graph_of("hosts")
    assert index_root_of(Path("/r"), pages) == Path("/r") and index_root_of(Path("/r"), hosts) == Path("/r/hosts")
    assert run_key("simrank", "pages") == "simrank" and run_key("simrank", "hosts") == "simrank@hosts"
    assert "(p:Host)" in pages_query(hosts) and "p.name AS url" in pages_query(hosts)
    assert "HOST_LINKS_TO" in pages_query(hosts) and "LINKS_TO" not in pages_query(hosts).replace("HOST_LINKS_TO", "")
    assert "[:HOST_LINKS_TO]" in links_query(False, False, hosts) and "[:LINKS_TO]" in links_query(False, False, pages)
    with pytest.raises(ConfigurationError, match="pages, hosts"):
        graph_of("sites")


def test_a_graph_is_named_by_its_nodes() -> None:
    """The command line words counts of a graph's nodes with the graph's name ("14,654 hosts")."""
    from linksim.parameters import GRAPHS

    assert all(graph_of(name).name == name == graph_of(name).noun + "s" for name in GRAPHS)


def test_a_method_cannot_take_a_graphs_name() -> None:
    from dataclasses import replace

    from linksim.methods import METHODS, register

    with pytest.raises(ConfigurationError, match="hosts"):
        register(replace(METHODS["simrank"], name="hosts"))
    assert "hosts" not in METHODS
