"""The synthetic crawl generator: the copying model's degree exponents, determinism, bounds."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from linksim.errors import ConfigurationError
from linksim.generate import IN_EXPONENT, OUT_EXPONENT, SEED_PAGES, CopyingModel, degree_exponent, generate_links

MILLION = 1_000_000


def generate(links: int, seed: int, model: CopyingModel = CopyingModel()):
    source = np.empty(links, np.int32)
    target = np.empty(links, np.int32)
    pages = 0
    for _, _, pages in generate_links(links, seed, model, source, target):
        pass
    return source, target, pages


@pytest.fixture(scope="module")
def million():
    return generate(MILLION, seed=7)


def test_growth_of_early_pages_gives_the_targets_exponents(million):
    """The model's mechanism: a page's degree grows as t^θ, θ = 1/(γ − 1). Measured on the first
    1,000 pages between 10^5 and 10^6 links, the implied γ = 1 + 1/θ is the target's."""
    source, target, _ = million
    for endpoint, expected in ((source, OUT_EXPONENT), (target, IN_EXPONENT)):
        early = lambda links: int(np.count_nonzero(endpoint[:links] < 1000))  # noqa: E731
        theta = np.log(early(MILLION) / early(MILLION // 10)) / np.log(10)
        assert 1 + 1 / theta == pytest.approx(expected, abs=0.05)


def test_fitted_degree_exponents_of_a_million_links(million):
    """Clauset, Shalizi & Newman's fit (the powerlaw package: x_min by the KS distance) of the
    degree distributions of 10^6 links. At this size the fit lies a little below the asymptotic
    exponents (measured: out 2.03-2.07, in 2.25-2.27; at 10^7 links 2.075 and 2.336), so the
    tolerance is 0.15; a model with the exponents swapped or off by 0.3 fails."""
    import powerlaw

    source, target, pages = million
    fitted = {}
    for name, endpoint in (("out", source), ("in", target)):
        degrees = np.bincount(endpoint, minlength=pages)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted[name] = powerlaw.Fit(degrees[degrees > 0], discrete=True, verbose=False).alpha
    assert fitted["out"] == pytest.approx(OUT_EXPONENT, abs=0.15)
    assert fitted["in"] == pytest.approx(IN_EXPONENT, abs=0.15)
    assert fitted["in"] - fitted["out"] > 0.1  # in-degrees fall off faster than out-degrees


def test_our_estimator_agrees_with_the_library_on_an_exact_power_law():
    """degree_exponent (eq. 3.7 of Clauset et al.) recovers the exponent of a sampled Zipf law."""
    degrees = np.random.default_rng(3).zipf(2.5, 200_000)
    exponent, n = degree_exponent(degrees, k_min=5)
    assert exponent == pytest.approx(2.5, abs=0.05)
    assert n == int(np.count_nonzero(degrees >= 5))


def test_pages_links_and_crawled_share(million):
    source, target, pages = million
    model = CopyingModel()
    assert pages == pytest.approx(model.expected_pages(MILLION), rel=0.02)
    assert 0 <= source.min() and max(source.max(), target.max()) == pages - 1
    assert np.count_nonzero(np.bincount(source, minlength=pages)) == pytest.approx(
        SEED_PAGES + MILLION * model.p_new_source, rel=0.02
    )  # ~11 out-links a crawled page
    assert np.array_equal(np.unique(np.concatenate([source, target])), np.arange(pages))  # no gaps


def test_same_seed_same_graph_other_seed_other_graph():
    a = generate(50_000, seed=1)
    b = generate(50_000, seed=1)
    c = generate(50_000, seed=2)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]
    assert not np.array_equal(a[1], c[1])


def test_chunks_resolve_copies_within_themselves():
    """Every copied endpoint equals the endpoint of an earlier link (pointer jumping inside a chunk
    resolves chains): the pages linked from are all created before they are used."""
    source, target, pages = generate(200_000, seed=5)
    first_use = np.full(pages, np.iinfo(np.int64).max)
    order = np.arange(len(source))
    np.minimum.at(first_use, source, order)
    np.minimum.at(first_use, target, order)
    # pages are numbered in order of creation: their first use is in increasing order
    assert np.all(np.diff(first_use) >= 0)


@pytest.mark.parametrize("kwargs", [{"out_exponent": 2.0}, {"in_exponent": 1.5}, {"p_new_target": 0.5}])
def test_bad_models_are_refused(kwargs):
    with pytest.raises(ConfigurationError):
        next(generate_links(100, 0, CopyingModel(**kwargs)))


def test_too_few_links_are_refused():
    with pytest.raises(ConfigurationError, match="at least"):
        next(generate_links(3, 0))


# The labelled crawl -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def labelled():
    from linksim.generate import generate_labelled

    return generate_labelled(300_000, seed=4)


def test_a_labelled_crawl_is_its_seed_and_size(labelled):
    from linksim.generate import generate_labelled

    again = generate_labelled(300_000, seed=4)
    assert len(labelled.source) == 300_000  # links, exactly, before the loader drops duplicates
    assert all(np.array_equal(getattr(labelled, a), getattr(again, a)) for a in ("source", "target", "subtopic"))
    assert not np.array_equal(generate_labelled(300_000, seed=5).target, labelled.target)


def test_a_labelled_crawl_plants_sites_sections_and_their_hubs(labelled):
    c = labelled
    pages = np.arange(c.pages)
    first = np.r_[True, c.site[1:] != c.site[:-1]]
    assert np.all(np.diff(c.site) >= 0) and np.all(c.subtopic[first] == -1)  # site after site, home first
    assert np.all(c.subtopic[~first] >= 0)
    home = np.maximum.accumulate(np.where(first, pages, 0))
    links = set(zip(c.source.tolist(), c.target.tolist()))
    members = pages[~first]
    assert all((p, h) in links and (h, p) in links for p, h in zip(members.tolist(), home[members].tolist()))
    # one topic a site; a site's sections are distinct subtopics of it, each a run of pages with a hub
    by_site = {}
    for p in members.tolist():
        by_site.setdefault(int(c.site[p]), []).append(int(c.subtopic[p]))
    assert all(len(set(c.topic[c.site == s])) == 1 for s in list(by_site)[:50])
    for sections in by_site.values():
        runs = [sections[0]] + [b for a, b in zip(sections, sections[1:]) if b != a]
        assert len(runs) == len(set(runs))  # each section's pages together, one section a subtopic
    hub = members[np.r_[True, (c.subtopic[members][1:] != c.subtopic[members][:-1])
                        | (c.site[members][1:] != c.site[members][:-1])]]
    assert all((hub_page, hub_page + 1) in links or c.site[hub_page] != c.site[min(hub_page + 1, c.pages - 1)]
               or c.subtopic[hub_page] != c.subtopic[min(hub_page + 1, c.pages - 1)] for hub_page in hub[:200].tolist())


def test_a_labelled_crawls_content_links_follow_the_model(labelled):
    """The shares of the targets' scopes among the links that are not navigation, and the
    out-degree tail: what the model says, within sampling error at this size."""
    from linksim.generate import LabelledModel

    c, model = labelled, LabelledModel()
    pages = np.arange(c.pages)
    first = np.r_[True, c.site[1:] != c.site[:-1]]
    home = np.maximum.accumulate(np.where(first, pages, 0))
    s, t = c.source.astype(np.int64), c.target.astype(np.int64)
    section = c.site.astype(np.int64) * 1000 + c.subtopic
    start = np.r_[True, section[1:] != section[:-1]]
    hub = np.maximum.accumulate(np.where(start, pages, 0))
    nav = (t == home[s]) | (s == home[t]) | (t == hub[s]) | (s == hub[t])
    s, t = s[~nav], t[~nav]
    same_site = c.site[s] == c.site[t]
    same_section = same_site & (c.subtopic[s] == c.subtopic[t])
    # a subtopic target off the site, or a topic / anywhere target that lands in it, counts here too
    off_site_same_label = ~same_site & (c.topic[s] == c.topic[t]) & (c.subtopic[s] == c.subtopic[t])
    # Every draw from the section lands in it (and some of the site's and the subtopic's do too).
    assert model.same_section - 0.05 < same_section.mean() < model.same_section + model.same_site + 0.05
    assert off_site_same_label.mean() > 0.6 * model.same_subtopic
    # Only the draws from anywhere leave the topic (all but the share that lands back in it).
    topics = int(c.topic.max()) + 1
    assert model.anywhere * (1 - 3 / topics) - 0.02 < (c.topic[s] != c.topic[t]).mean() < model.anywhere + 0.02
    out_degree = np.bincount(s, minlength=c.pages)
    exponent, tail = degree_exponent(out_degree[out_degree > 0], 5)
    assert tail > 1_000 and abs(exponent - OUT_EXPONENT) < 0.25


def test_write_labelled_crawl_gives_links_and_labels_the_loader_reads(tmp_path):
    from linksim.generate import LabelledModel
    from linksim.loader.categories import read_categories
    from linksim.loader.synthetic import categories_path, write_synthetic_crawl

    crawl = write_synthetic_crawl(tmp_path / "lab.tsv.gz", 5_000, seed=2, labels=LabelledModel(), show_progress=False)
    assert crawl.categories == categories_path(tmp_path / "lab.tsv.gz") == tmp_path / "lab.categories.tsv"
    categories = read_categories(crawl.categories)
    import gzip

    urls = set()
    with gzip.open(crawl.path, "rt") as handle:
        for line in handle:
            source, target = line.rstrip("\n").split("\t")
            urls.update((source, target))
    assert set(categories) <= urls and len(categories) == crawl.pages - crawl.hosts  # every page but the homes
    assert all(len(paths) == 1 and paths[0].count(".") == 1 for paths in categories.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lab.categories.tsv", "lab.tsv.gz"]  # no scratch left
