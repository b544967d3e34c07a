"""Category and class files for `linksim evaluate`: the tab-separated paths and LINQS .content files."""

from __future__ import annotations

import pytest

from linksim.loader.categories import EvaluationInputError, read_categories


def test_a_content_file_gives_each_url_its_class(tmp_path) -> None:
    (tmp_path / "a.content").write_text("http://A.org/x.html\t0\t1\t0\tstudent\nhttp://a.org/y\t1\t0\t0\tcourse\n")
    (tmp_path / "b.content").write_text("http://b.org/\t0\tfaculty\n")
    assert read_categories(tmp_path / "a.content") == {"http://a.org/x.html": ["student"], "http://a.org/y": ["course"]}
    # A folder of .content files: all of them (the WebKB layout).
    assert read_categories(tmp_path) == {"http://a.org/x.html": ["student"], "http://a.org/y": ["course"],
                                         "http://b.org/": ["faculty"]}


def test_a_content_line_without_a_class_names_its_line(tmp_path) -> None:
    path = tmp_path / "c.content"
    path.write_text("http://a.org/x\t0\tstudent\nhttp://a.org/y\n")
    with pytest.raises(EvaluationInputError, match=r"c.content:2: expected `URL features... class`"):
        read_categories(path)


def test_a_categories_file_keeps_every_path_of_a_page(tmp_path) -> None:
    path = tmp_path / "categories.tsv"
    path.write_text("# comment\nParis\tsubject.Geography.Cities\nParis\tsubject.Countries\nhttp://e.org/\tArt\n")
    assert read_categories(tmp_path) == {"https://en.wikipedia.org/wiki/Paris": ["subject.Geography.Cities",
                                                                                  "subject.Countries"],
                                         "http://e.org/": ["Art"]}
