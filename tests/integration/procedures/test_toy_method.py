"""A fifth method from this one module: its own index class and Method, registered, then run
through every door a method has (index, similar write / stream / stats / estimate, related, sim,
the store's verify, the command line's help) without touching any other file of the project.

The toy is the cosine of the in-link sets (co-citation normalised): exact, no parameters."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import linksim
from linksim.cli.main import main
from linksim.digest import graph_fingerprint
from linksim.graph import LinkGraph
from linksim.methods.method import Method
from linksim.methods import METHODS, register
from linksim.procedures.load import load

CORNELL = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "webkb" / "cornell.cites"
NAME = "toycosine"


class InLinkCosine:
    """sim(u, v) = |I(u) & I(v)| / sqrt(|I(u)| |I(v)|), sim(u, u) = 1."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, fingerprint: str) -> None:
        import scipy.sparse as sp

        n = len(indptr) - 1
        self.indptr, self.indices, self.graph_fingerprint = indptr, indices, fingerprint
        self._in = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(n, n))
        self._norm = np.sqrt(np.diff(indptr).astype(float))

    n = property(lambda self: len(self.indptr) - 1)
    nbytes = property(lambda self: self.indptr.nbytes + self.indices.nbytes)
    parameters = property(lambda self: {})

    def _row(self, u: int) -> np.ndarray:
        shared = np.asarray((self._in @ self._in[u].T).todense()).ravel()
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.nan_to_num(shared / (self._norm * self._norm[u]))

    def sim(self, u: int, v: int, **options) -> float:
        return 1.0 if u == v else float(self._row(u)[v])

    def related(self, u: int, top_k: int | None = 10, similarity_cutoff: float = 0.0, **options):
        scores = self._row(u)
        scores[u] = 0.0
        order = [int(v) for v in np.argsort(-scores, kind="stable") if scores[v] > similarity_cutoff]
        return [(v, float(scores[v])) for v in order[:top_k]]

    def store_arrays(self) -> dict[str, np.ndarray]:
        return {"in_indptr": self.indptr, "in_indices": self.indices}

    @classmethod
    def from_store(cls, meta: dict, arrays: dict) -> "InLinkCosine":
        return cls(np.asarray(arrays["in_indptr"]), np.asarray(arrays["in_indices"]), meta["graph"]["fingerprint"])


def _build(graph: LinkGraph, parameters: dict, show_progress: bool = False) -> InLinkCosine:
    return InLinkCosine(graph.in_indptr.copy(), graph.in_indices.copy(), graph_fingerprint(graph))


TOY = Method(
    name=NAME, title="in-link cosine", summary="cosine of the in-link sets (a test's toy)",
    defaults={}, samples=False, build=_build, restore=InLinkCosine.from_store,
    value_ranges=lambda meta, n, length: {"in_indptr": (0, meta["graph"]["links"]), "in_indices": (0, n - 1)},
    estimate=lambda pages, links, parameters, on_disk: (8 * (pages + links), 16 * pages, 8 * (pages + links),
                                                        {"in-link lists": 8 * (pages + links)}),
)


@pytest.fixture
def toy():
    register(TOY)
    yield TOY
    METHODS.pop(NAME)


def test_a_toy_method_from_one_module_goes_through_every_door(toy, runner, cli_env, tmp_path, capsys, monkeypatch):
    load([CORNELL], runner, show_progress=False)
    monkeypatch.setenv("LINKSIM_INDEX_DIR", str(tmp_path / "indexes"))
    with linksim.connect(show_progress=False) as ls:
        estimate = ls.similar(NAME).estimate(top_k=5)
        pages, links = estimate.pages, estimate.links
        assert pages > 0 and estimate.parts["in-link lists"] == 8 * (pages + links)  # the toy's own model
        described = ls.similar(NAME).index()
        assert described.method == NAME and described.built and described.configuration == {}
        written = ls.similar(NAME).write(top_k=5)
        record = written.record
        assert written.method == NAME and written.relationships_written == record.written > 0
        pairs = ls.similar(NAME).stream(top_k=5)
        stats = ls.similar(NAME).stats(top_k=5)
        assert stats.pairs == len(pairs) == record.written and stats.configuration["topK"] == 5
        url = pairs["source"].iloc[0]
        related = ls.related(url, method=NAME, top_k=5)
        expected = pairs[pairs["source"] == url].sort_values("rank")
        assert list(related["url"]) == list(expected["target"])
        assert list(related["score"]) == pytest.approx(list(expected["score"]), abs=1e-12)
        assert ls.sim(url, related["url"].iloc[0], method=NAME) == pytest.approx(related["score"].iloc[0], abs=1e-12)
        assert ls.sim(url, url, method=NAME) == 1.0
    written = runner.run("MATCH ()-[s:SIMILAR_TO {method: $m}]->() RETURN count(s) AS n", {"m": NAME})
    assert written == [{"n": record.written}]
    capsys.readouterr()
    assert main(["index", NAME, "--verify", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["verified"] is True
    with pytest.raises(SystemExit) as shown:
        main(["similar", "--help"])
    assert shown.value.code == 0 and NAME in capsys.readouterr().out
