"""Several files read by worker processes at once, each into a graph of its own, merged in the
files' order: the same crawl graph (page numbers, flags, titles, properties, anchors, links and
their counts, what was skipped) as one reading of them in that order, and the same first error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from linksim.loader import read_files
from linksim.loader.readers import InputError



def _warc(path: Path, pages: list[tuple[str, str, list[str]]]) -> Path:
    """A gzipped WARC of HTML responses, one gzip member a record, as warcio writes it."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for url, title, hrefs in pages:
            body = f"<html><title>{title}</title>" + "".join(f"<a href='{h}'>to {h}</a>" for h in hrefs) + "</html>"
            head = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body.encode()),
                                                          http_headers=head))
    return path


def crawl_files(folder: Path, bad: bool = False) -> list[Path]:
    """Four inputs of four formats that name each other's pages: a WARC, an edge list with a
    count column, JSON lines with titles, properties and anchors, a WARC again."""
    site = "http://site.example"
    files = [_warc(folder / "a.warc.gz", [(f"{site}/p{i}", f"P{i}", [f"/p{i + 1}", f"/p{(i * 7) % 40}#x", "mailto:x@y"])
                                          for i in range(40)])]
    edges = folder / "b.tsv"
    edges.write_text("".join(f"{site}/p{i}\t{site}/q{i % 9}\t{1 + i % 3}\n" for i in range(0, 60, 2))
                     + ("not a url line with four columns\n" if bad else ""))
    files.append(edges)
    pages = folder / "c.jsonl"
    pages.write_text("".join(json.dumps({"url": f"{site}/q{i}", "title": f"Q{i}", "lang": "en" if i % 2 else "de",
                                         "links": [{"url": f"{site}/p{i * 3}", "anchor": f"anchor {i}"},
                                                   f"{site}/r{i}"]}) + "\n" for i in range(12))
                     + ("{broken json\n" if bad else ""))
    files.append(pages)
    files.append(_warc(folder / "d.warc.gz", [(f"{site}/r{i}", f"R{i}", [f"p{i}", "../q1", "?s=1"]) for i in range(10)]
                       + [(f"{site}/p3", "P3 again", ["/p39", "p4"])]))  # p3 -> p4 read first in a.warc.gz
    return files


def state(graph) -> dict:
    links = graph.links()
    chunks = list(links.chunks(1 << 20))
    return {"urls": list(graph.urls), "crawled": bytes(graph.crawled), "complete": bytes(graph.complete),
            "titles": dict(graph.titles), "properties": dict(graph.properties), "anchors": dict(graph.anchors),
            "links": [np.concatenate([c[k] for c in chunks]).tolist() for k in range(3)], "seen": links.seen,
            "non_web": graph.non_web, "skipped": (dict(graph.skipped.counts), dict(graph.skipped.examples))}


@pytest.mark.parametrize("on_error", ["stop", "skip"])
def test_files_read_at_once_give_the_graph_of_one_reading(tmp_path: Path, on_error: str) -> None:
    files = crawl_files(tmp_path)
    one, formats = read_files(files, on_error=on_error, workers=1)
    two, parallel_formats = read_files(files, on_error=on_error, workers=2)
    with one, two:
        assert formats == parallel_formats == ["warc", "edges", "jsonl", "warc"]
        assert state(one) == state(two)
        assert len(one.titles) > 40 and one.non_web and max(state(one)["links"][2]) > 1
        p3, p4 = (one.index[f"http://site.example/p{i}"] for i in (3, 4))
        assert one.titles[p3] == "P3 again" and one.anchors[(p3, p4)] == "to /p4"  # the last title, the first anchor


def test_the_first_bad_file_in_order_is_the_error_at_once_as_alone(tmp_path: Path) -> None:
    files = crawl_files(tmp_path, bad=True)
    with pytest.raises(InputError) as alone:
        read_files(files, workers=1)
    with pytest.raises(InputError) as at_once:
        read_files(files, workers=2)
    assert str(at_once.value) == str(alone.value) and "b.tsv" in str(alone.value)
    one, _ = read_files(files, on_error="skip", workers=1)
    two, _ = read_files(files, on_error="skip", workers=2)
    with one, two:
        assert state(one) == state(two) and sum(one.skipped.counts.values()) == 2


SLOW_READ = """
import sys
import time
from pathlib import Path
from linksim.loader import read_files
from linksim.loader import readers

def slow(path, graph, policy, normalize):  # a worker that says it began, then takes its time
    Path(sys.argv[1]).touch()
    while True:
        time.sleep(0.01)

readers.READERS["edges"] = slow
read_files([Path(sys.argv[2]), Path(sys.argv[3])], workers=2)
"""


def test_ctrl_c_during_a_read_stops_every_worker_without_their_tracebacks(tmp_path: Path, ctrl_c) -> None:
    """A terminal's Ctrl-C reaches the whole process group: the readers must not each print
    ``Process ForkPoolWorker-N:`` and a traceback; the parent stops them and raises once."""
    files = []
    for name in ("a.tsv", "b.tsv"):
        files.append(tmp_path / name)
        files[-1].write_text("".join(f"{i} {i + 1}\n" for i in range(2_000)))
    returncode, stderr = ctrl_c(SLOW_READ, *map(str, files), what="reader")
    assert returncode != 0
    assert "ForkPoolWorker" not in stderr and stderr.count("KeyboardInterrupt") == 1, stderr


@pytest.mark.parametrize("texts", [["one", "two", ""], ["with\x00nul", "plain"], []])
def test_a_part_hands_its_anchors_over_whole(texts: list[str]) -> None:
    """A part's anchor texts travel joined by NUL, or as a list where a text holds a NUL: either
    way the merged graph has each pair's text, the first part's where two parts give one."""
    import pickle

    from linksim.loader.graph import CrawlGraph

    part_graph, merged = CrawlGraph(), CrawlGraph()
    a = part_graph.page("http://e.org/a")
    for number, text in enumerate(texts):
        part_graph.link(a, part_graph.page(f"http://e.org/{number}"), text)
    merged.link(merged.page("http://e.org/a"), merged.page("http://e.org/0"), "earlier")
    merged.merge(pickle.loads(pickle.dumps(part_graph.part())))
    expected = {("http://e.org/a", f"http://e.org/{n}"): t for n, t in enumerate(texts) if t}
    expected[("http://e.org/a", "http://e.org/0")] = "earlier"  # the first part's text stays
    assert {(merged.urls[s], merged.urls[t]): text for (s, t), text in merged.anchors.items()} == expected
