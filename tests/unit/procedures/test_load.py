"""procedures/load.py: read first, then lock, the graph version bumped around the writes."""

from __future__ import annotations


def test_a_load_reads_first_then_locks_bumps_the_version_around_its_writes(fake, recording, tmp_path) -> None:
    from linksim.procedures.load import load

    crawl = tmp_path / "crawl.tsv"
    crawl.write_text("http://e.org/a\thttp://e.org/b\nhttp://e.org/b\thttp://e.org/c\n")
    answers = dict({"MATCH (h:Host)": [{"built": False}]}, **fake.lock_answers(), **{"RETURN count(": [{"n": 0}]})
    answers["MERGE (p:Page {url: $url[i]})"] = lambda p: [[[100 + i for i in range(len(p["url"]))]]]  # one list a batch
    answers["g.version = g.version + 1"] = [["g1", 3]]  # the graph's id and new version
    answers["MATCH (b) WHERE id(b) = $target[i]"] = lambda p: {"relationships_created": len(p["source"])}
    runner = recording(answers)
    summary = load([crawl], runner, show_progress=False, batch_size=1)
    order = [q for _, q, _ in runner.sent]
    taken = next(i for i, q in enumerate(order) if "MERGE (l:LinksimLock" in q)
    bumps = [i for i, q in enumerate(order) if "g.version = g.version + 1" in q]
    writes = [i for i, q in enumerate(order) if "$url[i]" in q or "$target[i]" in q]
    assert taken < bumps[0] < min(writes) and max(writes) < bumps[1] < len(order) - 1  # released last
    assert summary.pages == 3 and summary.links == 2
    assert all("http://e.org" not in q for q in order)  # URLs travel as parameters
    # A plain load records "anything may have changed" under the first version, before its writes.
    recorded = [(i, p) for i, (_, q, p) in enumerate(runner.sent) if "CREATE (:LinksimChange" in q]
    assert [p["scope"] for _, p in recorded] == ["all"] and bumps[0] < recorded[0][0] < min(writes)
    assert (recorded[0][1]["graph"], recorded[0][1]["version"]) == ("g1", 3)
    # Whether a host graph is to be kept in step is asked after the last bump; there is none here.
    asked = [i for i, q in enumerate(order) if "MATCH (h:Host)" in q]
    assert len(asked) == 1 and bumps[1] < asked[0] and not any("ON_HOST" in q for q in order)
