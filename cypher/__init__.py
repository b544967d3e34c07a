"""Cypher files shipped with linksim, loaded by name.

Each ``NAME.cypher`` file holds statements separated by ``;`` at the end of a line. Lines
starting with ``//`` are comments.
"""

from importlib import resources


def load(name: str) -> str:
    """Return the text of ``NAME.cypher``.

    Raises
    ------
    FileNotFoundError
        If no Cypher file of that name ships with linksim.
    """
    resource = resources.files(__name__).joinpath(f"{name}.cypher")
    if not resource.is_file():
        raise FileNotFoundError(f"no Cypher file named {name!r} ships with linksim")
    return resource.read_text(encoding="utf-8")


def statements(name: str) -> list[str]:
    """Return the statements of ``NAME.cypher`` in order, comments and blank lines removed."""
    lines = [line for line in load(name).splitlines() if not line.strip().startswith("//")]
    return [stmt.strip() for stmt in "\n".join(lines).split(";") if stmt.strip()]
