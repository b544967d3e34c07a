"""The modules of ``linksim/`` import one another in one direction (GUIDE.md: arrows point down, no
circles), counting the imports inside functions: the graph is built from the source, not from
what Python has loaded. The registry (:mod:`linksim.methods`) is above the kernels: a method
passes its kind of walk and its reading down (:mod:`linksim.fingerprints.kinds`), and no kernel
looks a method up by name."""

from __future__ import annotations

import ast
from pathlib import Path



def modules_of(root: Path, package: str) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _package_names(path: Path) -> set[str]:
    """The names a package's ``__init__`` binds at its top level: ``from pkg import name`` of one
    of them imports the package, not a submodule of that name."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def import_graph(modules: dict[str, Path], package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` it imports anywhere in its source."""
    bound = {name: _package_names(path) for name, path in modules.items() if path.name == "__init__.py"}

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = here.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules
                           and alias.name not in bound.get(base, ()) else base for alias in node.names]
            else:
                continue
            for target in targets:
                found = owner(target) if target.split(".")[0] == package else None
                if found is not None and found != name:
                    graph[name].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected sets of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.add(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.append(members)
    return found


def test_the_detector_counts_imports_inside_functions_and_names_from_a_package(tmp_path) -> None:
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("from pkg.sub.low import thing\nVERSION = 1\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "low.py").write_text("def thing():\n    from pkg import VERSION\n    return VERSION\n")
    (root / "high.py").write_text("from pkg.sub import low\n")
    (root / "side.py").write_text("from . import high\nimport pkg.sub.low as low\n")
    graph = import_graph(modules_of(root, "pkg"), "pkg")
    assert graph["pkg.sub.low"] == {"pkg"} and graph["pkg"] == {"pkg.sub.low"}
    assert graph["pkg.high"] == {"pkg.sub.low"} and graph["pkg.side"] == {"pkg.high", "pkg.sub.low"}
    assert circles(graph) == [{"pkg", "pkg.sub.low"}]
    (root / "sub" / "low.py").write_text("def thing():\n    return 1\n")
    assert circles(import_graph(modules_of(root, "pkg"), "pkg")) == []


def test_no_circle_among_the_core_modules() -> None:
    # The repository's core folder: the installed package also holds loader/, procedures/, cli/ (GUIDE.md)
    root = Path(__file__).resolve().parents[2] / "linksim"
    graph = import_graph(modules_of(root, "linksim"), "linksim")
    assert circles(graph) == []
    # The kernels below the registry never import it.
    below = [name for name, targets in graph.items() if "linksim.methods" in targets
             and name.split(".")[1:2] in (["fingerprints"], ["ranking"], ["store"], ["spark"], ["spectral"],
                                          ["pagesim"])]
    assert below == []
