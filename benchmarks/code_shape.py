"""The shape of a Python package's code, measured the same way before and after a redesign (docs/architecture.md).

    python benchmarks/code_shape.py [PACKAGE_DIR]      # default: piqa_tui

Prints: functions over 50 lines, the largest classes by methods (core's and the TUI screens'), module
docstrings, the mean import fan-out (distinct modules of the package a module imports, imports inside
functions counted), modules in import cycles, and reaches into another object's private names per 10,000
lines (``x._name`` where ``x`` is not ``self``/``cls``, dunders aside). Standard library only.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, name: str, package: str, is_package: bool) -> set[str]:
    """The package's modules a module imports (relative imports resolved), anywhere in its body."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == package)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = name.split(".") if is_package else name.split(".")[:-1]
                parent = parent[: len(parent) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            if base.split(".")[0] == package:
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
    return found


def cycles(graph: dict[str, set[str]]) -> set[str]:
    """Modules in a strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: set[str] = set()
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.update(component)

    for v in graph:
        if v not in index:
            visit(v)
    return out


def main(root: Path) -> None:
    files = sorted(root.rglob("*.py"))
    modules = {module_name(root, f): f for f in files}
    functions = long_functions = lines = private = documented = 0
    classes: list[tuple[int, str]] = []
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        lines += source.count("\n")
        tree = ast.parse(source)
        documented += ast.get_docstring(tree) is not None
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions += 1
                long_functions += (node.end_lineno or node.lineno) - node.lineno + 1 > 50
            elif isinstance(node, ast.ClassDef):
                methods = sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in node.body)
                classes.append((methods, f"{name}.{node.name}"))
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                    private += 1
        targets = imported(tree, name, root.name, path.name == "__init__.py")
        graph[name] = {t for t in targets if t in modules and t != name}
    classes.sort(reverse=True)
    fan_out = sum(len(v) for v in graph.values()) / len(modules)
    print(f"modules: {len(modules)}, lines: {lines}")
    print(f"functions over 50 lines: {long_functions}/{functions} ({100 * long_functions / functions:.1f}%)")
    print(f"module docstrings: {100 * documented / len(modules):.0f}%")
    print(f"import fan-out, mean: {fan_out:.1f}")
    print(f"modules in import cycles (imports inside functions counted): {len(cycles(graph))}")
    print(f"reaches into another object's private names: {private} ({10000 * private / lines:.1f} per 10k lines)")
    print("largest classes (methods):", ", ".join(f"{n} {c.rsplit('.', 1)[1]}" for n, c in classes[:6]))
    core = [(n, c) for n, c in classes if ".core." in c and n > 30]
    screens = [(n, c) for n, c in classes if ".tui.screens." in c and n > 40]
    print("core classes over 30 methods:", ", ".join(f"{c} {n}" for n, c in core) or "none")
    print("screens over 40 methods:", ", ".join(f"{c} {n}" for n, c in screens) or "none")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "piqa_tui").resolve())
