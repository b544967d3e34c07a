"""Cypher files shipped with linksim, loaded by name.

Each ``NAME.cypher`` file holds statements separated by ``;``. Lines starting with ``//`` are
comments; a comment ``// name: QUERY`` names the statement that follows it, for :func:`query`.
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


def _parse(name: str) -> list[tuple[str | None, str]]:
    """(name or None, statement) pairs of a file, read line by line: comments never split."""
    parsed: list[tuple[str | None, str]] = []
    title: str | None = None
    body: list[str] = []
    for line in load(name).splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            if stripped.startswith("// name:") and not body:
                title = stripped.split(":", 1)[1].strip()
            continue
        if stripped:
            body.append(line)
        if stripped.endswith(";"):
            parsed.append((title, "\n".join(body).rstrip().rstrip(";").strip()))
            title, body = None, []
    if body:
        parsed.append((title, "\n".join(body).strip()))
    return parsed


def statements(name: str) -> list[str]:
    """Return the statements of ``NAME.cypher`` in order, comments and blank lines removed."""
    return [statement for _, statement in _parse(name) if statement]


def query(name: str, query_name: str) -> str:
    """The statement named ``// name: QUERY_NAME`` in ``NAME.cypher``.

    Raises
    ------
    KeyError
        If the file has no statement of that name.
    """
    named = {title: statement for title, statement in _parse(name) if title}
    if query_name not in named:
        raise KeyError(f"{name}.cypher has no query named {query_name!r}; it has {', '.join(sorted(named))}")
    return named[query_name]
