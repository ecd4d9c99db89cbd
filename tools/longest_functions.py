"""Print the N longest functions of a package (lines from `def` to the last line of the body).

    python tools/longest_functions.py judging [N]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def longest(root: Path, count: int) -> list[tuple[int, str]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found.append((node.end_lineno - start + 1, f"{path}:{node.lineno} {node.name}"))
    return sorted(found, reverse=True)[:count]


if __name__ == "__main__":
    for lines, where in longest(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 15):
        print(f"{lines:5d}  {where}")
