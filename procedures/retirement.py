"""``python -m linksim.procedures.retirement METHOD``: delete the SIMILAR_TO relationships of the
method's retiring runs (started in the background by ``linksim similar --retire background``).

The connection comes from the environment (``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD``,
``NEO4J_DATABASE``), as the parent set it; nothing secret is on the command line.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m linksim.procedures.retirement")
    parser.add_argument("method")
    parser.add_argument("--batch", type=int, default=50_000)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s linksim retirement: %(message)s")
    from linksim.procedures import QueryRunner
    from linksim.procedures.runs import retire_pending
    from linksim.server.connection import resolve_connection

    began = time.monotonic()
    with QueryRunner.connect(resolve_connection()) as runner:
        deleted = retire_pending(runner, args.method, batch=args.batch)
    logging.info("%s: %s relationships deleted in %.1f s", args.method, f"{deleted:,}", time.monotonic() - began)
    return 0


if __name__ == "__main__":
    sys.exit(main())
