"""Page texts for evaluation: a folder or a tar(.gz) archive of ``<name>.txt`` files.

``<name>`` is a URL-encoded Wikipedia article name (the Wikispeedia layout,
``plaintext_articles/<name>.txt``); it stands for ``https://en.wikipedia.org/wiki/<name>``,
normalised as the loader stores it.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from linksim.loader.categories import EvaluationInputError
from linksim.loader.readers import WIKIPEDIA
from linksim.loader.urls import WEB, resolve


def _url(name: str) -> str | None:
    kind, key = resolve(WIKIPEDIA + name)
    return key if kind == WEB else None


def read_texts(path: Path) -> dict[str, str]:
    """URL -> text of every ``.txt`` member of the folder or archive."""
    path = Path(path)
    texts: dict[str, str] = {}
    if path.is_dir():
        for file in sorted(path.rglob("*.txt")):
            url = _url(file.stem)
            if url:
                texts[url] = file.read_text(encoding="utf-8", errors="replace")
    elif path.exists():
        try:
            with tarfile.open(path) as archive:
                for member in archive:
                    if member.isfile() and member.name.endswith(".txt"):
                        url = _url(Path(member.name).stem)
                        handle = archive.extractfile(member)
                        if url and handle is not None:
                            texts[url] = handle.read().decode("utf-8", errors="replace")
        except tarfile.TarError as error:
            raise EvaluationInputError(path, None, f"not a readable tar archive ({error})") from None
    else:
        raise EvaluationInputError(path, None, "no such folder or archive")
    if not texts:
        raise EvaluationInputError(path, None, "holds no .txt files")
    return texts
