"""The on-disk index store: one versioned directory per method, checked before every answer.

An index directory holds ``meta.json`` (format version, method, parameters, seed, the fingerprint
and size of the graph it was built from, the shape, dtype, file size, modification time and
BLAKE2b digest of every array) and one ``.npy`` file per array, memory-mapped on load. A save
writes a fresh directory beside the old one and swaps it in by renames, so a reader sees the old
index or the new one, never a half-written one; a save that fails (a full disk) leaves the old
index as it was and no staging directory behind. Saves of one method are serialised by a lock
file in the store.

Integrity: every load checks each file's size, header, dtype and shape, and recomputes the digest
of any file whose size or modification time differs from what the save recorded (a file rewritten
since). :func:`verify` (``linksim index METHOD --verify``) recomputes every digest and checks that
every value lies in its range (page numbers, meeting times, offsets). Any mismatch is an
:class:`IndexMismatch` saying to rebuild, never a wrong answer or a traceback.

:func:`load` refuses, with a message that says what to run, an index of another format version,
one whose files do not match its ``meta.json``, one built from a different graph, or one built
with other parameters than the caller asks for. Asking for fewer fingerprints than were built is
allowed (the papers' load-adaptive N).

The store's modules: :mod:`.kinds` (the format, the kinds of index the registry tells it of),
:mod:`.files` (where an index lives, its ``meta.json``, digests, scratch folders), :mod:`.write`
(the save), :mod:`.read` (checks and opens), :mod:`.errors`. The names below are the store's API.
"""

from __future__ import annotations

from linksim.store.errors import (IndexCorrupt, IndexMismatch, IndexNotFound, IndexOutdated, IndexStoreError,
                                  IndexStoreFull, remedy)
from linksim.store.files import describe, describe_path, index_dir, key_of, path_of, remove_dead_scratch, stored
from linksim.store.kinds import FORMAT, FORMAT_VERSION, GRAPH_ARRAYS, parameters_of, register_kind
from linksim.store.read import (StoredIndex, check, load, open_built, open_current, open_path, open_previous,
                                record_state, stored_graph, verify)
from linksim.store.write import build_directory, save

__all__ = [
    "FORMAT", "FORMAT_VERSION", "GRAPH_ARRAYS", "IndexCorrupt", "IndexMismatch", "IndexNotFound", "IndexOutdated",
    "IndexStoreError", "IndexStoreFull", "StoredIndex", "build_directory", "check", "describe", "describe_path",
    "index_dir", "key_of", "load", "open_built", "open_current", "open_path", "open_previous", "parameters_of",
    "path_of", "record_state", "register_kind", "remedy", "remove_dead_scratch", "save", "stored", "stored_graph",
    "verify",
]
