"""Category files for evaluation: ``page<TAB>category path`` per line, or the classes of a LINQS
``.content`` file (WebKB: the page's URL, its word features, its class last, on one line).

The page is a URL (normalised as the loader does) or a Wikispeedia article name, which becomes
``https://en.wikipedia.org/wiki/<name>`` as when the data set is loaded. A Wikispeedia folder
stands for its ``categories.tsv``, a folder of ``.content`` files (WebKB) for all of them. Lines
starting with ``#`` and blank lines are skipped.
"""

from __future__ import annotations

from pathlib import Path

from linksim.errors import LinksimError
from linksim.loader.graph import CrawlGraph
from linksim.loader.readers import WIKIPEDIA, ErrorPolicy, read_lines
from linksim.loader.urls import INVALID, NON_WEB, resolve


class EvaluationInputError(LinksimError):
    """A categories or texts file that cannot be read."""

    exit_code = 4

    def __init__(self, path: Path, line: int | None, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}" if line else f"{path}: {reason}")


def read_categories(path: Path) -> dict[str, list[str]]:
    """URL -> category paths, from a categories file, a ``.content`` file, a Wikispeedia folder or a
    folder of ``.content`` files."""
    path = Path(path)
    if path.is_dir():
        contents = sorted(path.glob("*.content"))
        if contents and not (path / "categories.tsv").exists():
            found: dict[str, list[str]] = {}
            for each in contents:
                for key, paths in read_categories(each).items():
                    found.setdefault(key, []).extend(paths)
            return found
        path = path / "categories.tsv"
    if not path.exists():
        raise EvaluationInputError(path, None, "no such categories file")
    content = path.name.endswith(".content")
    policy = ErrorPolicy("stop", CrawlGraph())
    found = {}
    for number, text in read_lines(path, policy):
        if not text.strip() or text.startswith("#"):
            continue
        fields = text.split() if content else text.split("\t")
        if content:
            fields = [fields[0], fields[-1]] if len(fields) >= 2 else fields
        if len(fields) < 2 or not fields[1].strip():
            raise EvaluationInputError(path, number, "expected `URL features... class`" if content
                                       else "expected `page<TAB>category path`")
        page = fields[0].strip()
        kind, key = resolve(page if "://" in page else WIKIPEDIA + page)
        if kind in (INVALID, NON_WEB):
            raise EvaluationInputError(path, number, f"page {page[:200]!r} is not a web URL or article name")
        found.setdefault(key, []).append(fields[1].strip())
    if not found:
        raise EvaluationInputError(path, None, "no categories in the file")
    return found
