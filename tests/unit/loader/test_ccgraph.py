"""Common Crawl's host and domain graphs (vertices.txt.gz of reversed names, edges.txt.gz of ids)
load as pages https://<host>/, with the release's www. convention told from the names."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from linksim.errors import ConfigurationError
from linksim.loader import InputError, detect_format, read_files
from linksim.loader.ccgraph import KEPT, STRIPPED, host_of

# A 2026-style host graph: www. kept.
HOSTS = ["com.example", "com.example.www", "org.wikipedia.en", "net.other.blog", "de.xn--mnchen-3ya"]
EDGES = [(1, 0), (1, 2), (2, 1), (2, 3), (3, 4), (4, 2), (1, 0)]


def write_graph(folder: Path, names: list[str], edges: list[tuple[int, int]], level: str = "host",
                extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / f"cc-main-2026-jan-{level}-vertices.txt.gz", "wt") as out:
        out.writelines(f"{i}\t{name}{extra}\n" for i, name in enumerate(names))
    with gzip.open(folder / f"cc-main-2026-jan-{level}-edges.txt.gz", "wt") as out:
        out.writelines(f"{a}\t{b}\n" for a, b in edges)
    return folder


def links_of(graph) -> set[tuple[str, str]]:
    links = graph.links()
    return {(graph.urls[s], graph.urls[t]) for s, t in zip(links.source, links.target)}


def test_reversed_names_become_host_urls() -> None:
    assert host_of("com.example.www") == "www.example.com"
    assert host_of("de.xn--mnchen-3ya") == "xn--mnchen-3ya.de"
    assert host_of("com.exa mple") is None and host_of("com..example") is None


def test_a_host_graph_loads_as_host_pages_with_its_links(tmp_path: Path) -> None:
    folder = write_graph(tmp_path / "graph", HOSTS, EDGES)
    assert detect_format(folder) == "ccgraph"
    assert detect_format(folder / "cc-main-2026-jan-host-vertices.txt.gz") == "ccgraph"
    for given in (folder, folder / "cc-main-2026-jan-host-vertices.txt.gz"):
        graph, formats = read_files([given])
        urls = [f"https://{host_of(name)}/" for name in HOSTS]
        assert graph.urls == urls and formats == [f"ccgraph: {KEPT}"]
        assert links_of(graph) == {(urls[a], urls[b]) for a, b in EDGES}
        assert graph.links().duplicates == 1
        # A host with a link out is crawled; one only linked to is not.
        assert list(graph.crawled) == [0, 1, 1, 1, 1]


def test_an_older_release_without_www_is_told_apart(tmp_path: Path) -> None:
    older = [name for name in HOSTS if not name.endswith(".www")]
    folder = write_graph(tmp_path / "old", older, [(0, 1), (1, 2)])
    graph, formats = read_files([folder])
    assert formats == [f"ccgraph: {STRIPPED}"] and graph.urls[0] == "https://example.com/"


def test_a_domain_graph_with_its_host_counts_loads_the_same(tmp_path: Path) -> None:
    folder = write_graph(tmp_path / "domains", ["com.example", "org.wikipedia"], [(0, 1), (1, 0)], "domain",
                         extra="\t12")
    graph, _ = read_files([folder])
    assert graph.urls == ["https://example.com/", "https://wikipedia.org/"]
    assert links_of(graph) == {("https://example.com/", "https://wikipedia.org/"),
                               ("https://wikipedia.org/", "https://example.com/")}


@pytest.mark.parametrize("case, where, message", [
    ("unknown", "edges.txt.gz:2", "vertex 9 is not in the vertices file"),
    ("malformed", "edges.txt.gz:1", "expected `from<TAB>to`"),
    ("gap", "vertices.txt.gz:2", "vertex id 2 where 1 was expected"),
    ("name", "vertices.txt.gz:2", "is not a reversed host name"),
])
def test_bad_records_name_file_and_line(tmp_path: Path, case: str, where: str, message: str) -> None:
    names, edges = ["com.a", "com.b"], [(0, 1), (1, 0)]
    folder = write_graph(tmp_path / case, names, edges)
    vertices, links = folder / "cc-main-2026-jan-host-vertices.txt.gz", folder / "cc-main-2026-jan-host-edges.txt.gz"
    if case == "unknown":
        links.write_bytes(gzip.compress(b"0\t1\n1\t9\n"))
    elif case == "malformed":
        links.write_bytes(gzip.compress(b"0 1\n"))
    elif case == "gap":
        vertices.write_bytes(gzip.compress(b"0\tcom.a\n2\tcom.b\n"))
    else:
        vertices.write_bytes(gzip.compress(b"0\tcom.a\n1\tcom.b b\n"))
    with pytest.raises(InputError, match=message) as raised:
        read_files([folder])
    assert where in str(raised.value)
    if case != "gap":  # skipped and counted, the rest loaded
        graph, _ = read_files([folder], on_error="skip")
        # A refused vertex's links go with it.
        assert graph.skipped.total == (3 if case == "name" else 1)


def test_a_folder_of_two_graphs_is_refused(tmp_path: Path) -> None:
    folder = write_graph(tmp_path / "two", ["com.a"], [], "host")
    write_graph(folder, ["com.a"], [], "domain")
    with pytest.raises(ConfigurationError, match="one of each"):
        read_files([folder])
