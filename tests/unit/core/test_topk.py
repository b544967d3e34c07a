"""Top-k of every page: the same lists as one query per page, with any number of workers."""

from __future__ import annotations

import numpy as np
import pytest

from linksim.errors import ConfigurationError
from linksim.fingerprints.minhash import build_minhash_index
from linksim.methods import fingerprint_index
from linksim.graph import LinkGraph
from linksim.ranking.topk import top_k_all


def graph_with_twins(seed: int) -> LinkGraph:
    """Random links, and hubs whose pages have no other in-link (twin classes of 2 to 12)."""
    rng = np.random.default_rng(seed)
    source, target = rng.integers(0, 85, 250).tolist(), rng.integers(0, 50, 250).tolist()
    single = rng.permutation(np.arange(50, 80)).tolist()
    for hub, size in zip(range(80, 85), (2, 3, 5, 8, 12)):
        source += [hub] * size
        target += [single.pop() for _ in range(size)]
    return LinkGraph.from_edges(np.array(source), np.array(target), 85)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("kind", ["simrank", "psimrank", "xjaccard"])
def test_top_k_all_equals_related_per_page(workers: int, kind: str) -> None:
    graph = graph_with_twins(3)
    index = build_minhash_index(graph, 30, seed=1) if kind == "xjaccard" else fingerprint_index(graph, kind, 30, seed=1)
    source, target, score, rank = top_k_all(index, top_k=4, similarity_cutoff=0.01, workers=workers, chunk=9,
                                            show_progress=False)
    assert source.dtype == target.dtype == rank.dtype == np.int32 and score.dtype == np.float64
    got: dict[int, list] = {}
    for s, t, v, r in zip(source, target, score, rank):
        got.setdefault(int(s), []).append((int(t), float(v), int(r)))
    if kind != "xjaccard":
        assert len(index.twin_classes()[1]) > 3
        index._use_twins = False  # the reference: one query per page
    for u in range(graph.n):
        expected = index.related(u, top_k=4, similarity_cutoff=0.01)
        assert [(t, v) for t, v, _ in got.get(u, [])] == expected
        assert [r for _, _, r in got.get(u, [])] == list(range(1, len(expected) + 1))
    assert len(got) > 0


@pytest.mark.parametrize("kind", ["simrank", "psimrank"])
def test_sampled_lists_hold_exact_scores_and_are_the_exact_lists_where_nothing_was_sampled(kind: str) -> None:
    graph = graph_with_twins(5)
    index = fingerprint_index(graph, kind, 30, seed=2)
    index._exact_members = 0  # a small graph: read from a sample all the same
    exact = top_k_all(index, top_k=5, workers=1, show_progress=False, sample=0)
    report: dict = {}
    roomy = top_k_all(index, top_k=5, workers=1, show_progress=False, sample=10**9, report=report)
    assert all((a == b).all() for a, b in zip(exact, roomy)) and report["lists_sampled"] == 0
    for workers in (1, 2):
        report = {}
        source, target, score, rank = top_k_all(index, top_k=5, workers=workers, chunk=7, show_progress=False,
                                                sample=2, report=report)
        assert 0 < report["lists_sampled"] < graph.n  # some lists sampled, some read whole
        for u, v, s in zip(source.tolist(), target.tolist(), score.tolist()):
            assert s == index.sim(u, v)  # the pages listed: exact scores, the same float
        index._use_twins = False
        for u in range(graph.n):  # the same lists as one query per page with that sample
            expected = index.related(u, top_k=5, sample=2)
            assert [(int(v), float(s)) for v, s in zip(target[source == u], score[source == u])] == expected
        index._use_twins = True
    # A page whose trees hold no range above its quota gets the exact list.
    index.lists_sampled = 0
    for u in range(graph.n):
        before = index.lists_sampled
        listed = index.related(u, top_k=5, sample=2)
        if index.lists_sampled == before:
            assert listed == index.related(u, top_k=5, sample=0)


@pytest.mark.parametrize("kind", ["simrank", "psimrank"])
def test_a_sampled_query_takes_a_twin_class_as_one_candidate(kind: str) -> None:
    """Twins share every score with a page outside their class, so a sampled query scores one
    of them and lists the class's pages in page order: a listed twin comes with every smaller
    page of its class, at its exact score. With every twin its own candidate (the reading before)
    a sample of four candidates lists twins whose smaller class mates it never read."""
    graph = graph_with_twins(5)
    index = fingerprint_index(graph, kind, 30, seed=2)
    index._exact_members = 0  # a small graph: read from a sample all the same
    index._sample_candidates = 4
    klass, indptr, members = index.twin_classes()
    skipped = {}
    for as_one in (True, False):
        index._twin_candidates = as_one
        skipped[as_one] = listed = 0
        for u in range(graph.n):
            found = index.related(u, top_k=5, sample=1)
            pages = {v for v, _ in found}
            for v, score in found:
                assert score == index.sim(u, v)
                if klass[v] >= 0 and klass[v] != klass[u]:
                    listed += 1
                    mates = members[indptr[klass[v]] : indptr[klass[v] + 1]]
                    skipped[as_one] += any(w < v and w not in pages for w in mates.tolist())
        assert listed > 10
    assert skipped[True] == 0 < skipped[False]


def test_a_method_reads_its_own_sample_by_default_and_a_copy_of_its_index_too(monkeypatch) -> None:
    """A list asked without a sample reads the method's own (its ``reading``: PSimRank 8 and 128
    band candidates, the others 16 and none), from the index as built, restored and copied (the
    store's and the benchmarks' copies are made by ``dataclasses.replace``)."""
    import dataclasses

    from linksim.fingerprints.index import FingerprintIndex
    from linksim.fingerprints.walks import build_index
    from linksim.methods import METHODS

    graph = graph_with_twins(5)
    assert {name: entry.reading for name, entry in METHODS.items() if entry.reading} == {
        "psimrank": {"sample": 8, "_band_candidates": 128}}
    for kind, own, banded in (("psimrank", 8, 128), ("simrank", 16, 0)):
        index = fingerprint_index(graph, kind, 4, seed=2)
        assert (index.sample, index._band_candidates) == (own, banded)
        restored = METHODS[kind].restore({"method": kind, "parameters": index.parameters,
                                          "graph": {"fingerprint": index.graph_fingerprint}}, index.store_arrays())
        assert (restored.sample, restored._band_candidates) == (own, banded) and restored.walk is index.walk
        reading = METHODS[kind].reading
        assert (FingerprintIndex.reading_value(reading, "sample"),
                FingerprintIndex.reading_value(reading, "_band_candidates")) == (own, banded)
    # A reading of one member a range (lists that differ from 16's here) set for one index alone.
    monkeypatch.setattr(FingerprintIndex, "_exact_members", 0)  # a small graph: sampled all the same
    for reading, own in (({"sample": 1, "_band_candidates": 128}, 1), ({}, 16)):
        index = build_index(graph, METHODS["psimrank"].walk, 30, seed=2, reading=reading)
        for reader in (index, dataclasses.replace(index)):
            lists = [reader.related(u, top_k=5) for u in range(graph.n)]
            assert reader.sample == own and lists == [reader.related(u, top_k=5, sample=own) for u in range(graph.n)]
        ones = [index.related(u, top_k=5, sample=1) for u in range(graph.n)]
        assert (lists == ones) == (own == 1) and (lists != [index.related(u, top_k=5, sample=16)
                                                            for u in range(graph.n)]) == (own == 1)
    with pytest.raises(ConfigurationError, match="no knob"):
        build_index(graph, METHODS["psimrank"].walk, 2, reading={"samples": 4})


def test_the_sample_is_for_the_methods_that_read_samples_only() -> None:
    from linksim.errors import ConfigurationError
    from linksim.methods import check_sample, method

    index = method("pagesim").build_index(graph_with_twins(3))
    with pytest.raises(ConfigurationError, match="--sample .*not to pagesim"):
        top_k_all(index, top_k=3, workers=1, show_progress=False, sample=100)
    with pytest.raises(ConfigurationError, match="--sample .*xjaccard.*not to pagesim"):  # the registry names them
        check_sample("pagesim", 100)
    check_sample("pagesim", None)
    check_sample("xjaccard", 100)
    minhash = build_minhash_index(graph_with_twins(3), 10, seed=1)
    assert top_k_all(minhash, top_k=3, workers=1, show_progress=False, sample=0)[0].size > 0


@pytest.mark.parametrize("kind", ["simrank", "psimrank"])
def test_a_bucket_of_the_first_step_bands_holds_the_pages_of_the_same_first_steps(kind: str) -> None:
    from linksim.ranking.bands import first_step_bands

    graph = graph_with_twins(7)
    index = fingerprint_index(graph, kind, 12, seed=3)
    order, start, stop = first_step_bands(index.parent, index.label, rows=2)
    assert order.shape == (6, graph.n)
    pages = np.arange(graph.n)
    # The first-step group of each page: the page its walk stood on with others after one step.
    first = [np.where(index.label[i] == 1, index.parent[i], pages) for i in range(12)]
    for b in range(6):
        assert sorted(order[b].tolist()) == pages.tolist()  # every page once
        for u in range(graph.n):
            bucket = sorted(order[b, start[b, u]:stop[b, u]].tolist())
            same = [w for w in range(graph.n) if first[2 * b][w] == first[2 * b][u] and first[2 * b + 1][w] == first[2 * b + 1][u]]
            assert bucket == same
            for w in same:  # meeting at step 1 in both fingerprints of the band, by Lemma 2
                assert w == u or index.meeting_times(u, w)[2 * b : 2 * b + 2].tolist() == [1, 1]


@pytest.mark.parametrize(("cap", "sample"), [(1, None), (2, None), (3, 1), (5, 2), (5, 9)])
def test_a_bucket_above_the_band_cap_holds_its_systematic_sample_first(cap: int, sample: int | None) -> None:
    """With a cap, the buckets hold the same pages; one of more than ``cap`` pages holds first the
    pages at positions ⌊k · size / n⌋ (k < n: the sample's size, at most the cap, by default the
    cap) of the bucket in page order, then the others in page order."""
    from linksim.ranking.bands import first_step_bands

    index = fingerprint_index(graph_with_twins(7), "psimrank", 12, seed=3)
    plain = first_step_bands(index.parent, index.label)
    capped = first_step_bands(index.parent, index.label, cap=cap, sample=sample)
    n = cap if sample is None else min(sample, cap)
    assert np.array_equal(plain[1], capped[1]) and np.array_equal(plain[2], capped[2])
    sampled = 0
    for b in range(6):
        for start, stop in set(zip(plain[1][b].tolist(), plain[2][b].tolist())):
            bucket, size = plain[0][b, start:stop].tolist(), stop - start
            assert bucket == sorted(bucket)
            if size <= cap:
                assert capped[0][b, start:stop].tolist() == bucket
                continue
            sampled += 1
            read = [bucket[k * size // n] for k in range(n)]
            assert capped[0][b, start:stop].tolist() == read + [w for w in bucket if w not in read]
    assert sampled > 0


@pytest.mark.parametrize(("cap", "sample"), [(2, 2), (4, 4), (4, 2), (1000, 1000)])
def test_band_candidates_are_the_pages_sharing_most_buckets_counted_on_the_sample(cap: int, sample: int) -> None:
    """_band_frequent's pages: those of the most hits, a hit for each band whose bucket of u holds
    them, whole or (a bucket above ``cap``) in its systematic sample of ``sample``, counted here
    from the buckets in page order."""
    from linksim.ranking.bands import first_step_bands
    from linksim.fingerprints.treescan import NO_TWINS, _band_frequent

    graph = graph_with_twins(5)
    index = fingerprint_index(graph, "psimrank", 40, seed=2)
    plain = first_step_bands(index.parent, index.label)
    capped = first_step_bands(index.parent, index.label, cap=cap, sample=sample)
    hits, seen, touched = np.zeros(graph.n, np.uint16), np.zeros(graph.n, np.int32), np.zeros(graph.n, np.int32)
    checked = over = 0
    for u in range(graph.n):
        counts: dict[int, int] = {}
        for b in range(20):
            bucket = plain[0][b, plain[1][b, u]:plain[2][b, u]].tolist()
            size = len(bucket)
            read = bucket if size <= cap else [bucket[k * size // sample] for k in range(sample)]
            over += size > cap
            for w in read if size > 1 else []:
                if w != u:
                    counts[w] = counts.get(w, 0) + 1
        ranked = sorted(counts.values(), reverse=True)
        for n in range(1, len(ranked)):
            if ranked[n - 1] > ranked[n]:  # the n best are the same whichever way ties are read
                got = _band_frequent(u, *capped, cap, sample, n, hits, seen, touched, NO_TWINS, -1)
                assert sorted(got.tolist()) == sorted(w for w, c in counts.items() if c >= ranked[n - 1])
                checked += 1
        assert not hits.any() and not seen.any()
    assert checked > 40 and (over > 0) == (cap < 1000)


@pytest.mark.parametrize("kind", ["simrank", "psimrank"])
def test_bands_by_twin_class_give_a_twin_entry_its_representative_negated(kind: str) -> None:
    """With the twin classes' representatives, the buckets are the same, and a twin's entry other
    than its representative's is -(representative + 1): a bucket's non-negative entries hold
    each class once."""
    from linksim.ranking.bands import first_step_bands
    from linksim.fingerprints.treescan import twin_arrays

    graph = graph_with_twins(7)
    index = fingerprint_index(graph, kind, 12, seed=3)
    rep = twin_arrays(*index.twin_classes())[0]
    assert (rep >= 0).sum() > (rep == np.arange(graph.n)).sum() > 0  # classes of two pages or more
    full, by_class = first_step_bands(index.parent, index.label), first_step_bands(index.parent, index.label, rep=rep)
    assert all(np.array_equal(a, b) for a, b in zip(full[1:], by_class[1:]))
    twin = (rep >= 0) & (rep != np.arange(graph.n))
    expected = np.where(twin[full[0]], -(rep[full[0]] + 1), full[0])
    assert np.array_equal(by_class[0], expected)
    for b in range(6):
        for u in range(graph.n):
            bucket = by_class[0][b, by_class[1][b, u]:by_class[2][b, u]]
            classes = np.where(bucket < 0, -bucket - 1, bucket)
            assert sorted(bucket[bucket >= 0].tolist()) == sorted(set(np.where(rep[classes] >= 0, rep[classes], classes).tolist()))


def mapped(array) -> bool:
    """Whether the array's memory is a file's, memory-mapped."""
    import mmap

    while array is not None:
        if isinstance(array, (np.memmap, mmap.mmap)):
            return True
        array = getattr(array, "base", None)
    return False


@pytest.mark.parametrize("kind, length", [("simrank", 10), ("psimrank", 10), ("ppsimrank", 3), ("simrank", 7)])
def test_page_major_rows_give_the_same_scores_and_lists_as_the_fingerprint_rows(kind: str, length: int, tmp_path,
                                                                               monkeypatch) -> None:
    """prepare_all_pages' page-major copies change where a candidate's rows are read from, not a
    float: the exact reading, the sampled one and sims agree bit for bit with an index without,
    and so do copies written to memory-mapped files (page_major_folder), built step by step. Walks
    of up to 7 steps (the default's 3) keep their path labels in one byte."""
    from linksim.fingerprints import treescan

    rng = np.random.default_rng(11)
    graph = LinkGraph.from_edges(rng.integers(0, 300, 2_000), rng.integers(0, 300, 2_000) ** 2 % 300, 300)
    rows = fingerprint_index(graph, kind, 40, length=length, seed=4)
    rows.use_page_major = False
    paged = fingerprint_index(graph, kind, 40, length=length, seed=4)
    on_disk = fingerprint_index(graph, kind, 40, length=length, seed=4)
    on_disk.page_major_folder = tmp_path
    monkeypatch.setattr(treescan, "TRANSPOSE_PAGES", 64)  # five steps of the transposition
    for index in (rows, paged, on_disk):
        index._exact_members = 0  # this small graph: sampled readings all the same
        index.prepare_all_pages()
    assert paged._page_major[0].shape == (300, 40) and rows._page_major[0].shape == (0, 0)
    assert paged._page_major[1].dtype == (np.uint8 if length <= 7 else np.uint16)
    assert 0 < int(rows.label.max()) <= length  # labels 1..L: bits that fit the dtype
    assert np.array_equal(paged._page_major[0], rows.layout().position.T)
    for mine, theirs in zip(on_disk._page_major, paged._page_major):
        assert np.array_equal(mine, theirs) and mine.dtype == theirs.dtype and not mine.flags.writeable
        assert mapped(mine) and not mapped(theirs)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["page_major_paths.npy", "page_major_position.npy"]
    pages = np.arange(300)
    for sample in (0, 2):
        assert on_disk.related_many(pages, top_k=6, sample=sample) == paged.related_many(pages, top_k=6, sample=sample)
    for i in range(0, 40, 9):  # path labels: the labels of the edges from a page up to its root, as bits
        for x in range(300):
            bits, y = 0, x
            while rows.parent[i, y] >= 0:
                bits |= 1 << int(rows.label[i, y])
                y = rows.parent[i, y]
            assert paged._page_major[1][x, i] == bits
    pages = np.arange(300)
    for u in range(0, 300, 7):
        assert np.array_equal(paged.sims(u, pages), rows.sims(u, pages))
        assert paged.sims(u, pages)[u] == 1.0 and paged.sims(u, pages[u:u + 1])[0] == paged.sim(u, u)
        for sample in (0, 2):
            assert paged.related(u, top_k=6, sample=sample) == rows.related(u, top_k=6, sample=sample)
        assert paged.related(u, top_k=6, sample=0, n_fingerprints=25) == rows.related(
            u, top_k=6, sample=0, n_fingerprints=25)
    for index in (rows, paged):  # a chunk of pages in one compiled call: each page's list as related gives it
        for sample, top_k, cutoff in ((0, 6, 0.0), (2, 6, 0.0), (2, 3, 0.05), (0, 1, 0.0)):
            assert index.related_many(pages, top_k=top_k, similarity_cutoff=cutoff, sample=sample) == [
                index.related(int(u), top_k=top_k, similarity_cutoff=cutoff, sample=sample) for u in pages]
    u = max(range(0, 300, 7), key=lambda w: int((paged.sims(w, pages) > 0).sum()))
    scores = paged.sims(u, pages)
    scores[u] = 0.0
    v = int(np.argmax(scores))
    assert paged.sims(u, np.array([v]))[0] == paged.sim(u, v) > 0 and len(paged.related(u, top_k=6, sample=2)) == 6


def test_walks_longer_than_the_path_labels_are_scored_without_page_major_rows() -> None:
    """Path labels are 15 bits: an index of longer walks makes no page-major rows and scores from
    the fingerprint rows, the same lists."""
    rng = np.random.default_rng(12)
    graph = LinkGraph.from_edges(rng.integers(0, 200, 1_200), rng.integers(0, 200, 1_200) ** 2 % 200, 200)
    index = fingerprint_index(graph, "simrank", 20, seed=5, length=16)
    index._exact_members = 0
    index.prepare_all_pages()
    assert index._page_major[0].shape == (0, 0)
    assert index.label.max() > 0
    for u in range(0, 200, 11):
        assert index.related(u, top_k=5, sample=2) == [(v, index.sim(u, v)) for v, _ in index.related(u, top_k=5, sample=2)]


@pytest.mark.parametrize("kind", ["simrank", "psimrank"])
def test_ancestors_and_subtrees_found_from_the_preorder_labels_are_the_parents_and_sizes(kind: str) -> None:
    """The compiled queries read no parent and no subtree size: u's ancestors, their subtrees'
    ranges and the label by which a page's path enters an ancestor come from the preorder labels
    and their block maxima. On trees of up to thousands of members (many blocks of 64 and 4,096
    positions skipped), each equals a walk up the parent pointers."""
    from linksim.fingerprints import treescan

    rng = np.random.default_rng(13)
    n = 9_000  # 8 hubs link to every page: walks meet within a few steps, trees span many blocks
    source = np.concatenate([rng.integers(0, 8, 4 * n), rng.integers(0, 3, n)])
    target = np.concatenate([np.repeat(np.arange(n), 4), rng.integers(0, 8, n)])
    index = fingerprint_index(LinkGraph.from_edges(source, target, n), kind, 6, seed=7)
    layout = index.layout()
    tree, by_page = index._tree()
    assert not by_page and layout.size.max() > treescan.SUPER
    starts, stops, intos, depths = treescan._geometry(6, index.length)
    order, olabel, block, top, position = tree
    for u in rng.choice(n, 300, replace=False).tolist():
        members = treescan._tree_chain(u, 6, index.length, tree, False, starts, stops, intos, depths)
        assert members == int(layout.size[np.arange(6), layout.root[:, u]].sum()) - 6 == index.tree_members(u)
        for i in range(6):
            chain, into, x = [u], [0], u
            while index.parent[i, x] >= 0:
                into.append(int(index.label[i, x]))
                x = int(index.parent[i, x])
                chain.append(x)
            assert depths[i] == len(chain) - 1 and intos[i, : len(chain)].tolist() == into
            assert starts[i, : len(chain)].tolist() == layout.position[i, chain].tolist()
            assert stops[i, : len(chain)].tolist() == (layout.position[i, chain] + layout.size[i, chain]).tolist()
            for v in rng.choice(n, 20, replace=False).tolist():  # the label into a_j on v's path
                j = next((j for j, a in enumerate(chain) if starts[i, j] <= layout.position[i, v] < stops[i, j]),
                         None)
                if j is None or v == chain[j]:
                    continue
                y = v
                while index.parent[i, y] != chain[j]:
                    y = int(index.parent[i, y])
                got = treescan._range_max(i, int(starts[i, j]), int(layout.position[i, v]), olabel, block, top)
                assert got == index.label[i, y]


def test_a_run_cut_short_resumes_from_its_finished_chunks_and_gives_the_same_lists(tmp_path) -> None:
    from linksim.store.partial import Checkpoint

    graph = graph_with_twins(3)
    index = fingerprint_index(graph, "simrank", 30, seed=1)
    index._exact_members = 0
    counted: dict = {}
    reference = top_k_all(index, top_k=4, workers=1, chunk=9, show_progress=False, sample=2, report=counted)
    assert counted["lists_sampled"] > 0
    chunks = -(-graph.n // 9)
    folder = tmp_path / "partial"
    compute = index.lists
    calls = []

    def cut_short(pages, query, **options):
        if len(calls) >= 4:
            raise RuntimeError("killed")
        calls.append(len(pages))
        return compute(pages, query, **options)

    index.lists = cut_short
    with pytest.raises(RuntimeError, match="killed"):
        top_k_all(index, top_k=4, workers=1, chunk=9, show_progress=False, sample=2,
                  checkpoint=Checkpoint(folder, {"run": 1}, flush_seconds=3600))
    assert len(list(folder.glob("part-*.npz"))) == 1  # what was finished, written as the run ended

    del index.lists
    report: dict = {}
    resumed = top_k_all(index, top_k=4, workers=2, chunk=9, show_progress=False, sample=2, report=report,
                        checkpoint=Checkpoint(folder, {"run": 1}))
    assert report["lists_resumed"] == sum(calls) == 4 * 9
    assert report["lists_sampled"] == counted["lists_sampled"]  # those of the chunks read back too
    assert all((a == b).all() and a.dtype == b.dtype for a, b in zip(resumed, reference))
    assert len(list(folder.glob("part-*.npz"))) == 2  # the resumed run kept the chunks it computed

    # Every chunk finished (a run whose write was cut short): nothing is computed again.
    index.lists = cut_short
    report = {}
    resumed = top_k_all(index, top_k=4, workers=1, chunk=9, show_progress=False, sample=2, report=report,
                        checkpoint=Checkpoint(folder, {"run": 1}))
    assert report["lists_resumed"] == graph.n and all((a == b).all() for a, b in zip(resumed, reference))
    del index.lists

    # A part that cannot be read: its chunks are computed again, the lists are the same.
    sorted(folder.glob("part-*.npz"))[1].write_bytes(b"not a part")
    report = {}
    resumed = top_k_all(index, top_k=4, workers=1, chunk=9, show_progress=False, sample=2, report=report,
                        checkpoint=Checkpoint(folder, {"run": 1}))
    assert report["lists_resumed"] == 36 and all((a == b).all() for a, b in zip(resumed, reference))

    # Another run (other parameters, or other chunks) reads nothing back and starts the folder again.
    for identity, chunk in (({"run": 2}, 9), ({"run": 1}, 7)):
        report = {}
        other = top_k_all(index, top_k=4, workers=1, chunk=chunk, show_progress=False, sample=2, report=report,
                          checkpoint=Checkpoint(folder, identity))
        assert report["lists_resumed"] == 0 and all((a == b).all() for a, b in zip(other, reference))
    assert len(list(folder.glob("part-*.npz"))) == 1 and chunks > 4
    Checkpoint(folder, {"run": 1}).discard()
    assert not folder.exists()


def test_a_run_that_holds_no_lists_reads_them_back_the_same(tmp_path, monkeypatch) -> None:
    from linksim.ranking import topk
    from linksim.store import partial
    from linksim.store.partial import Checkpoint

    graph = graph_with_twins(3)
    index = fingerprint_index(graph, "simrank", 30, seed=1)
    index._exact_members = 0
    reference = top_k_all(index, top_k=4, workers=1, chunk=9, show_progress=False, sample=2)
    read_back, held = topk._read_back, []

    def watched(index, parts, *rest):  # what the run held once every list was made
        held.append(sum(part is not topk._MADE for part in parts))
        return read_back(index, parts, *rest)

    monkeypatch.setattr(topk, "_read_back", watched)

    class Damaged(Checkpoint):  # a part damaged between its write and the read-back
        def chunks(self, pages_type=np.int64):
            sorted(self.folder.glob("part-*.npz"))[0].write_bytes(b"not a part")
            return super().chunks(pages_type)

    for number, checkpoint in enumerate((Checkpoint(tmp_path / "a", {"run": 1}, flush_seconds=0),
                                         Damaged(tmp_path / "b", {"run": 1}, flush_seconds=0))):
        for workers in (1, 2):
            got = top_k_all(index, top_k=4, workers=workers, chunk=9, show_progress=False, sample=2,
                            checkpoint=checkpoint, hold=False)
            assert all((a == b).all() and a.dtype == b.dtype for a, b in zip(got, reference))
            assert held[-1] == 0
            checkpoint.discard()
    # A disk too full for any part: the chunks stay with the checkpoint, in memory, and come back.
    monkeypatch.setattr(partial, "replaced", lambda path: (_ for _ in ()).throw(OSError(28, "No space left")))
    got = top_k_all(index, top_k=4, workers=1, chunk=9, show_progress=False, sample=2,
                    checkpoint=Checkpoint(tmp_path / "c", {"run": 1}, flush_seconds=0), hold=False)
    assert all((a == b).all() for a, b in zip(got, reference)) and held[-1] == 0
    assert not list((tmp_path / "c").glob("part-*.npz"))
    # Without a checkpoint there is nowhere else to keep them: held.
    got = top_k_all(index, top_k=4, workers=1, chunk=9, show_progress=False, sample=2, hold=False)
    assert all((a == b).all() for a, b in zip(got, reference)) and len(held) == 5


SLOW_LISTS = """
import sys, time
from pathlib import Path
import numpy as np
from linksim.ranking.topk import top_k_all

class Slow:
    n = 4_000
    def related(self, u, top_k=10, similarity_cutoff=0.0):
        Path(sys.argv[1]).touch()  # a worker is answering
        time.sleep(0.01)
        return [((u + 1) % self.n, 0.5)]

top_k_all(Slow(), top_k=1, workers=2, chunk=50, show_progress=False)
"""


def test_ctrl_c_during_the_lists_stops_every_worker_without_their_tracebacks(ctrl_c) -> None:
    """A terminal's Ctrl-C reaches the whole process group: the forked workers must not each print
    ``Process ForkPoolWorker-N:`` and a traceback; the parent stops them and raises once."""
    returncode, stderr = ctrl_c(SLOW_LISTS, what="worker")
    assert returncode != 0
    assert "ForkPoolWorker" not in stderr and stderr.count("KeyboardInterrupt") == 1, stderr
