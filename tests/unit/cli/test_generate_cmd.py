"""cli/generate_cmd.py: sizes as people write them, refused outside their range while parsing."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("argv, message", [
    (["generate", "out.tsv.gz", "--links", "0"], "--links: must be an integer in 10..10,000,000,000"),
    (["generate", "out.tsv.gz", "--links", "ten"], "--links: must be an integer"),
    (["generate", "out.tsv.gz", "--out-exponent", "1"], "--out-exponent"),
])
def test_a_bad_value_is_refused_while_parsing(refused, argv, message) -> None:
    code, err = refused(argv)
    assert code == 2 and message in err and "Traceback" not in err


def test_a_seeded_crawl_is_the_same_file_twice(tmp_path, capsys) -> None:
    from linksim.cli.main import main

    first, second = tmp_path / "a.tsv.gz", tmp_path / "b.tsv.gz"
    assert main(["-q", "generate", str(first), "--links", "2k", "--seed", "5"]) == 0
    assert main(["-q", "generate", str(second), "--links", "2000", "--seed", "5"]) == 0
    assert first.read_bytes() == second.read_bytes() and first.stat().st_size > 1000


def test_a_labelled_crawl_comes_with_its_labels(tmp_path, capsys) -> None:
    import json

    from linksim.cli.main import main

    a = str(tmp_path / "a.tsv.gz")
    assert main(["-q", "generate", a, "--links", "3k", "--seed", "2", "--labels", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["categories"] == str(tmp_path / "a.categories.tsv") and printed["links"] == 3_000
    assert main(["-q", "generate", str(tmp_path / "b.tsv.gz"), "--links", "3k", "--seed", "2", "--labels"]) == 0
    assert (tmp_path / "a.tsv.gz").read_bytes() == (tmp_path / "b.tsv.gz").read_bytes()
    assert (tmp_path / "a.categories.tsv").read_bytes() == (tmp_path / "b.categories.tsv").read_bytes()
    assert main(["-q", "generate", str(tmp_path / "c.tsv.gz"), "--links", "50", "--labels"]) == 2
    assert "at least 100 links" in capsys.readouterr().err
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["a.categories.tsv", "a.tsv.gz", "b.categories.tsv", "b.tsv.gz"]
