"""procedures/stream.py: what the graph stream reads, in which order."""

from __future__ import annotations


def test_streaming_reads_the_state_first_then_pages_then_links(fake, recording) -> None:
    from linksim.procedures.stream import stream_link_graph

    runner = recording(fake.graph_answers())
    streamed = stream_link_graph(runner, show_progress=False, chunk=3)
    assert streamed.state == fake.STATE and streamed.urls == fake.URLS
    assert sorted(zip(*streamed.graph.edges())) == sorted(zip(*fake.EDGES))
    kinds = [q for _, q, _ in runner.sent]
    # the state, then whether a load was cut short (tests/integration: GraphHalfWritten), then the pages
    assert "LinksimGraph" in kinds[0] and "LinksimChange" in kinds[1] and "collect(id) AS ids" in kinds[2]
    assert [p["sources"] for _, q, p in runner.sent if "UNWIND $sources" in q] == [fake.IDS[:3], fake.IDS[3:]]
