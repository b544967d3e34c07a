"""WebGraph BV graphs load through the reference library (its Rust implementation's bindings) as
the same graph as the edge list of their arcs; the nodes' names from BASENAME.urls when it is there."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from linksim.errors import ConfigurationError
from linksim.loader import InputError, detect_format, read_files

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "webgraph"


def _arcs() -> list[tuple[int, int]]:
    spec = importlib.util.spec_from_file_location("make_webgraph_fixture", FIXTURE / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.arcs()


def _copy(folder: Path, without: str = "") -> Path:
    folder.mkdir()
    for file in FIXTURE.glob("tiny.*"):
        if file.suffix != without:
            shutil.copy(file, folder / file.name)
    return folder / "tiny.graph"


def _links(graph) -> set[tuple[str, str]]:
    links = graph.links()
    return {(graph.urls[s], graph.urls[t]) for s, t in zip(links.source, links.target)}


def test_a_bv_graph_is_the_graph_of_its_arcs(tmp_path: Path) -> None:
    arcs = _arcs()
    edges = tmp_path / "tiny.tsv"
    edges.write_text("".join(f"{a}\t{b}\n" for a, b in arcs))
    for given in (FIXTURE / "tiny.graph", FIXTURE / "tiny.properties"):
        assert detect_format(given) == "webgraph"
        graph, formats = read_files([given])
        with graph:
            assert formats == ["webgraph: names from the node numbers"]
            # Every node is a page, the isolated one too; those with a link out are crawled.
            assert graph.urls == [str(node) for node in range(400)]
            assert _links(graph) == {(str(a), str(b)) for a, b in arcs}
            sources = {a for a, _ in arcs}
            assert [node for node in range(400) if graph.crawled[node]] == sorted(sources)
    listed, _ = read_files([edges])
    with listed:
        assert _links(listed) == {(str(a), str(b)) for a, b in arcs} and len(arcs) == 3259


def test_the_nodes_are_named_by_the_urls_file(tmp_path: Path) -> None:
    given = _copy(tmp_path / "named")
    urls = [f"HTTP://Site.org/p{node}.html#x" for node in range(400)]
    (tmp_path / "named" / "tiny.urls").write_text("\n".join(urls) + "\n")
    graph, formats = read_files([given])
    with graph:
        assert formats == ["webgraph: names from tiny.urls"]
        assert graph.urls[:2] == ["http://site.org/p0.html", "http://site.org/p1.html"]
        assert _links(graph) == {(f"http://site.org/p{a}.html", f"http://site.org/p{b}.html") for a, b in _arcs()}


def test_a_names_file_of_the_wrong_length_is_named(tmp_path: Path) -> None:
    given = _copy(tmp_path / "short")
    (tmp_path / "short" / "tiny.urls").write_text("http://a.org/\n")
    with pytest.raises(InputError, match="1 names for the graph's 400 nodes") as raised:
        read_files([given])
    assert "tiny.urls" in str(raised.value)


def test_a_graph_without_its_elias_fano_index_says_how_to_make_it(tmp_path: Path) -> None:
    given = _copy(tmp_path / "noef", without=".ef")
    with pytest.raises(ConfigurationError, match="webgraph build ef .*tiny"):
        read_files([given])
    assert not list((tmp_path / "noef").glob("*.ef"))  # nothing written beside the user's files


def test_a_properties_file_of_another_graph_class_is_refused(tmp_path: Path) -> None:
    given = _copy(tmp_path / "other")
    properties = tmp_path / "other" / "tiny.properties"
    properties.write_text(properties.read_text().replace("BVGraph", "ArcListASCIIGraph"))
    with pytest.raises(ConfigurationError, match="not a WebGraph BV graph"):
        read_files([given])
