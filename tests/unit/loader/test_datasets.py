"""The data set registry: located through the data directory, checked by SHA-256, clear when missing."""

from __future__ import annotations

import pytest

from linksim.loader.datasets import REGISTRY, DatasetMissing, data_dir, locate


def test_data_directory_precedence(tmp_path) -> None:
    assert data_dir({"LINKSIM_DATA": str(tmp_path)}) == tmp_path
    assert data_dir({}).name == "data"


def test_the_shared_data_sets_match_their_checksums() -> None:
    for name in REGISTRY:
        folder = locate(name, verify=True)
        assert folder.name == name


def test_a_missing_data_set_says_where_to_put_it_and_where_to_get_it(tmp_path) -> None:
    (tmp_path / "wikispeedia").mkdir()
    (tmp_path / "wikispeedia" / "links.tsv").write_text("a\tb\n")
    with pytest.raises(DatasetMissing) as error:
        locate("wikispeedia", env={"LINKSIM_DATA": str(tmp_path)})
    message = str(error.value)
    assert "articles.tsv" in message and str(tmp_path / "wikispeedia") in message
    assert "https://snap.stanford.edu/data/wikispeedia.html" in message and "LINKSIM_DATA" in message


def test_an_altered_file_is_refused(tmp_path) -> None:
    folder = tmp_path / "webkb"
    folder.mkdir()
    for file in REGISTRY["webkb"].files:
        (folder / file).write_text("x y\n")
    locate("webkb", env={"LINKSIM_DATA": str(tmp_path)})  # present: fine without verify
    with pytest.raises(DatasetMissing, match="does not have the recorded SHA-256"):
        locate("webkb", verify=True, env={"LINKSIM_DATA": str(tmp_path)})
