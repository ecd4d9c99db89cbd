"""The chart reader held to the size a reader can hold (issue 41): no function of
`judging/signals/chart/` over 80 lines, and its unnamed numeric literals listed and counted.

What counts as an UNNAMED numeric literal (the rule, read from the source with `ast`):
- every int, float or complex literal in a `.py` file under `judging/signals/chart/` (a minus
  sign in front of one makes one negative literal), except
- the values 0, 1, -1, 2 and 0.5 (nothing, identity, negation, halves and doubling: no choice
  a reader has to find);
- literals anywhere in the value of a module-level assignment to UPPER_CASE names (named
  constants, `A, B = 1.5, 3` too: the reason is the docstring beside them) or of an
  assignment in a class body (a settings record's field, each with its docstring);
- a literal that is itself an index or a slice bound (`rgb[..., 0]`, `a[:3]`, `p[:, 1]`): a
  position in an array, not a threshold. A literal inside arithmetic in a subscript (`y1 + 3`)
  counts.
Bools are not numbers here; literals in docstrings and f-string texts are strings.
"""

from __future__ import annotations

import ast
from pathlib import Path

CHART = Path(__file__).resolve().parents[3] / "judging" / "signals" / "chart"

#: The longest a function of the reader may be (the developers' guide's "~80 lines").
MAX_FUNCTION_LINES = 80
#: The issue's target for the unnamed literals of the reader.
LITERAL_TARGET = 100
#: Today's count (issue 41: 685 before; the colour module, the splits, the comparison's, the
#: series extraction's and the OCR's constants named, then the geometry's, the axes' and the
#: legend's thresholds as fields of their settings records): it may only go down. Lower it
#: whenever literals are named.
LITERAL_CEILING = 35
FREE_VALUES = {0, 1, -1, 2, 0.5}


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _named(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Inside the value of a named constant or of a class-body field."""
    while node in parents:
        parent = parents[node]
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and node is parent.value:
            holder = parents.get(parent)
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if isinstance(holder, ast.ClassDef):
                return True
            names = [n for t in targets
                     for n in (t.elts if isinstance(t, ast.Tuple) else [t])]
            if isinstance(holder, ast.Module) and all(
                    isinstance(n, ast.Name) and n.id.isupper() for n in names):
                return True
        node = parent
    return False


def _position(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """The literal is itself an index or a slice bound."""
    parent = parents.get(node)
    if isinstance(parent, ast.Slice):
        return True
    if isinstance(parent, ast.Tuple) and isinstance(parents.get(parent), ast.Subscript):
        return parent is parents[parent].slice
    return isinstance(parent, ast.Subscript) and node is parent.slice


def unnamed_literals(root: Path = CHART) -> list[str]:
    """`path:line value` of every unnamed numeric literal under `root` (the rule above)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = _parents(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or isinstance(node.value, bool) or \
                    not isinstance(node.value, (int, float, complex)):
                continue
            value, whole = node.value, node
            parent = parents.get(node)
            if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub):
                value, whole = -value, parent
            if value in FREE_VALUES or _named(whole, parents) or _position(whole, parents):
                continue
            found.append(f"{path.relative_to(root)}:{node.lineno} {value!r}")
    return found


def long_functions(root: Path = CHART, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """`path:line name (n lines)` of every function (methods and nested ones too) over `limit`
    lines, its decorators and docstring included."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                length = node.end_lineno - first + 1
                if length > limit:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} "
                                 f"({length} lines)")
    return found


def test_the_rule_counts_what_it_says(tmp_path):
    (tmp_path / "m.py").write_text(
        "LIMIT = 0.3 * 4\nLOW, HIGH = 0.2, 0.9\nlow = 0.7\n"
        "class S:\n    reach: float = 12.5\n"
        "def f(a, margin=7):\n"
        "    x = a[:, 3] + a[5] - 2 + 1 + 0.5\n"
        "    return x * 0.25 if x > -3 else a[x + 9]\n")
    got = sorted(line.split(" ")[1] for line in unnamed_literals(tmp_path))
    # 0.3 * 4, 0.2, 0.9 and 12.5 are named (0.7 is not: a lower-case name); 3 and 5 are
    # positions; 2, 1 and 0.5 are free; 9 is arithmetic in a subscript.
    assert got == ["-3", "0.25", "0.7", "7", "9"]
    (tmp_path / "long.py").write_text("def g():\n" + "    x = 1\n" * 80)
    assert long_functions(tmp_path) == ["long.py:1 g (81 lines)"]


def test_no_function_over_80_lines():
    too_long = long_functions()
    assert not too_long, "functions over 80 lines:\n" + "\n".join(too_long)


def test_unnamed_literals_do_not_grow():
    found = unnamed_literals()
    assert len(found) <= LITERAL_CEILING, (
        f"{len(found)} unnamed numeric literals in signals/chart (at most {LITERAL_CEILING}): "
        f"name the new ones as settings or constants with a reason:\n" + "\n".join(found))


def test_unnamed_literals_below_the_target():
    found = unnamed_literals()
    assert len(found) < LITERAL_TARGET, f"{len(found)} unnamed numeric literals:\n" + \
        "\n".join(found)
