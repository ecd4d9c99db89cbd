"""Print every import circle among the modules of a package (module level, all imports counted,
deferred and TYPE_CHECKING ones too). Exit 1 when there is one.

    python tools/import_cycles.py judging

Each `from a.b import c` counts as an import of `a.b` (and of `a.b.c` when that is a module),
and importing a module also imports its parent packages' `__init__`, as Python does.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else "judging")
    known = modules(root)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    # A package's __init__ is not a dependency of its own modules' own imports unless they
    # import it; but importing a.b.c runs a/__init__ and a/b/__init__ first.
    for name in list(graph):
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    found = cycles(graph)
    for component in found:
        print("circle:", " <-> ".join(component))
    edges = sum(len(v) for v in graph.values())
    print(f"{len(known)} modules, {edges} imports, {len(found)} circle(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
