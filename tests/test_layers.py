"""What import-linter leaves to a test: no import cycles between modules, a command line that starts light,
``tui/``'s root holding only what is app-wide, and one place where the TUI's writes enter the write queue.

The layer rules (docs/architecture.md) are import-linter contracts in ``pyproject.toml``, run by
``lint-imports`` in ``tests/test_static_checks.py``; they see imports made inside functions too. Their
cycle contract compares siblings package by package; the module graph below, read from the source with
``ast``, also fails on a module that imports itself back across package levels (a module and its own
package's ``__init__``, say), which sibling contracts do not look at.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "piqa_tui"


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


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


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


TUI = PACKAGE / "tui"
# What every screen shares; a feature's module goes into the package of its kind (docs/architecture.md).
APP_WIDE = {"__init__.py", "app.py", "commands.py", "keymap.py", "messages.py", "themes.py"}
# The one module that hands a controller's submitted write to the session's queue.
QUEUE_ENTRY = TUI / "screens" / "host.py"


def test_the_tui_root_holds_only_what_is_app_wide() -> None:
    assert {p.name for p in TUI.glob("*.py")} == APP_WIDE


def reaches_the_queue(path: Path) -> bool:
    """Whether ``path`` reads an attribute named ``writes`` (the session's write queue)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.Attribute) and node.attr == "writes" for node in ast.walk(tree))


def test_writes_reach_the_queue_only_through_the_screens_host() -> None:
    """A screen or a dialog submits through a controller, a controller through its host: only
    ``ScreenHost.submit`` commits to the queue (the app attaches and abandons it)."""
    faces = [TUI / name for name in ("screens", "controllers", "dialogs", "widgets")]
    found = {p.relative_to(TUI).as_posix() for face in faces for p in face.rglob("*.py") if reaches_the_queue(p)}
    assert found == {QUEUE_ENTRY.relative_to(TUI).as_posix()}


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


# The private names piqa-tui may read on another object: Textual's and Rich's, pinned by an upper bound in
# pyproject.toml and checked by tests/test_private_names.py, and the public ``_replace`` of named tuples.
PINNED_PRIVATE = {
    ("tui/terminal/external_editor.py", "app._driver"),
    ("tui/terminal/cell_widths.py", "textual._wrap"),
    ("tui/terminal/cell_widths.py", "textual.widgets._input"),
}


def private_reaches(tree: ast.AST) -> list[str]:
    """``x._name`` where ``x`` is not ``self`` or ``cls`` (dunders and named tuples' ``_replace`` aside)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            name = node.args[1] if len(node.args) > 1 else None
            owner = node.args[0]
            mine = isinstance(owner, ast.Name) and owner.id in ("self", "cls")
            if isinstance(name, ast.Constant) and str(name.value).startswith("_") and not mine:
                found.append(ast.unparse(node))  # getattr(project, "_applied", None) is a reach too
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr not in ("_replace", "_exit")  # named tuples' and os._exit: public despite the name
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(ast.unparse(node))
    return found


def test_each_object_answers_for_its_own_state() -> None:
    """No module reads another object's private names (a project's replay position, a state's vote forms): it
    asks the object (``Project.version``, ``Project.memo``) instead."""
    found = {
        (path.relative_to(PACKAGE).as_posix(), reach)
        for path in PACKAGE.rglob("*.py")
        for reach in private_reaches(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert found - PINNED_PRIVATE == set()


def test_the_private_reach_finder_finds_one() -> None:
    found = private_reaches(ast.parse("position = getattr(project, '_applied', None) or project._applied"))
    assert sorted(found) == ["getattr(project, '_applied', None)", "project._applied"]


def test_the_command_line_starts_without_heavy_imports() -> None:
    """``piqa-tui --help`` and argument errors answer at once: heavy libraries load only when a command needs them."""
    import subprocess
    import sys

    probe = "import sys, piqa_tui.cli.main; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    loaded = set(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    )
    assert loaded & HEAVY == set()
