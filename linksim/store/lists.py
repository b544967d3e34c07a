"""The lists of a method's last SIMILAR_TO run, kept beside its indexes: what the next run
compares its lists with, so that it rewrites only the lists that changed.

One file per method, ``<index root>/lists/<method>.npz``: the lists by page code
(:class:`linksim.ranking.lists.CodedLists`) and a description of the run they were written by
(``runs``, the run ids whose relationships make the method's current lists; ``relationships``,
how many). A save writes a new file beside the old one and renames it over, so a reader finds
the old file or the new one. A file that does not name the database's current runs, or that
cannot be read, is not used: the next run writes every list.
"""

from __future__ import annotations

import json
import logging
import zipfile
from pathlib import Path

import numpy as np

from linksim.ranking.lists import CodedLists
from linksim.store.atomic import replaced

log = logging.getLogger(__name__)

_ARRAYS = ("sources", "indptr", "targets", "scores")


def lists_path(root: Path, method: str) -> Path:
    return Path(root) / "lists" / f"{method}.npz"


def save_lists(root: Path, method: str, lists: CodedLists, description: dict) -> Path:
    """Keep ``lists`` as the method's last written lists, described by ``description`` (JSON)."""
    path = lists_path(root, method)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replaced(path) as handle:
        np.savez(handle, description=np.array(json.dumps(description, sort_keys=True)),
                 **{name: getattr(lists, name) for name in _ARRAYS})
    return path


def open_lists(root: Path, method: str) -> tuple[CodedLists, dict] | None:
    """The method's last written lists and their description; None if there are none or the file
    cannot be read (then every list is written again)."""
    path = lists_path(root, method)
    try:
        with np.load(path, allow_pickle=False) as stored:
            description = json.loads(str(stored["description"]))
            lists = CodedLists(*(stored[name] for name in _ARRAYS))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError) as error:
        log.warning("the last written %s lists in %s cannot be read (%s): every list is written again",
                    method, path, error)
        return None
    if not (len(lists.indptr) == len(lists.sources) + 1 and lists.indptr[-1] == len(lists.targets) == len(lists.scores)
            and isinstance(description, dict)):
        log.warning("the last written %s lists in %s are inconsistent: every list is written again", method, path)
        return None
    return lists, description


def forget_lists(root: Path, method: str) -> None:
    lists_path(root, method).unlink(missing_ok=True)
