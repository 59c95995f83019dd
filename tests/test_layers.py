"""The layers of the package, enforced: what each layer may import, and no import cycles.

The rules (docs/architecture.md):

* ``piqa_tui.core`` is pure Python: it imports neither Textual nor the TUI, the
  CLI or the settings (the faces read settings and hand core plain values).
  Rich appears only in the display adapter (``core.text.bidi``), whose objects
  render themselves as Rich renderables; tables and Markdown belong to the faces.
* ``piqa_tui.render`` (the Rich tables, Markdown and JSON shapes both faces show)
  imports neither Textual, the TUI, the CLI nor the settings; core never imports it.
* ``piqa_tui.settings`` imports neither the TUI nor the CLI.
* ``piqa_tui.tui`` never imports the CLI (the CLI launches the TUI, not the other way).
  Inside it, ``tui.state`` (the session and what it derives) imports no Textual,
  screen, widget or controller, and ``tui.controllers`` imports no screen.
* No module imports itself back through others, counting imports made inside
  functions too: a lazy import hides start-up cost, not a cycle.

The graph is read from the source with ``ast``, so the test needs no import of
the package and sees every import, also those made inside functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "piqa_tui"

FORBIDDEN = {
    "piqa_tui.core": ("textual", "piqa_tui.tui", "piqa_tui.cli", "piqa_tui.settings", "piqa_tui.render"),
    "piqa_tui.render": ("textual", "piqa_tui.tui", "piqa_tui.cli", "piqa_tui.settings"),
    "piqa_tui.settings": ("textual", "piqa_tui.tui", "piqa_tui.cli"),
    "piqa_tui.tui": ("piqa_tui.cli",),
    # The session and what it derives are plain Python; controllers reach screens only through their host.
    "piqa_tui.tui.state": ("textual", "piqa_tui.tui.screens", "piqa_tui.tui.controllers", "piqa_tui.tui.widgets"),
    "piqa_tui.tui.controllers": ("piqa_tui.tui.screens",),
}
RICH_ALLOWED_IN_CORE = {"piqa_tui.core.text.bidi"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of the file, as absolute dotted names."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return found


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports_of(path) if m in modules and m != name} for name, path in modules.items()}


def all_imports() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in PACKAGE.rglob("*.py")}


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_what_it_may(layer: str) -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in all_imports().items()
        if within(module, layer)
        for target in targets
        if any(within(target, banned) for banned in FORBIDDEN[layer])
    )
    assert wrong == []


def test_core_renders_no_tables() -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in all_imports().items()
        if within(module, "piqa_tui.core") and module not in RICH_ALLOWED_IN_CORE
        for target in targets
        if within(target, "rich")
    )
    assert wrong == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def package_parents(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """A package's ``__init__`` runs before any of its modules: drop those implicit edges from the check."""
    return {m: {t for t in targets if not within(m, t)} for m, targets in edges.items()}


def test_no_import_cycles() -> None:
    assert cycles(package_parents(graph())) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


HEAVY = {
    "textual",
    "rich",
    "polars",
    "numpy",
    "torch",
    "llama_cpp",
    "sentence_transformers",
    "rapidfuzz",
    "transformers",
}


def test_the_command_line_starts_without_heavy_imports() -> None:
    """``piqa-tui --help`` and argument errors answer at once: heavy libraries load only when a command needs them."""
    import subprocess
    import sys

    probe = "import sys, piqa_tui.cli.main; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    loaded = set(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    )
    assert loaded & HEAVY == set()
