"""Helper of scale.py: GDS's own writer of top-10 lists (:func:`_common.gds_anchor`) on the store of
$LINKSIM_INSTANCE, in the same run as linksim's SIMILAR_TO write; prints JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import gds_anchor  # noqa: E402


def main() -> None:
    from linksim.procedures import QueryRunner
    from linksim.server.connection import resolve_connection

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="the lists of one page in this many (default all)")
    args = parser.parse_args()
    with QueryRunner.connect(resolve_connection()) as runner:
        rate = gds_anchor(runner, every=args.every)
    print(json.dumps({"relationshipsPerSecond": rate, "every": args.every}))


if __name__ == "__main__":
    main()
