"""Every path that shows text goes through the safe renderer: proved by reading the code, not by trying cases.

Data becomes markup (``[@click=app.quit]``, ``[link=…]``) when a str reaches
Rich or Textual where they parse markup: a table header or cell, a title, a
``Static``. It becomes terminal commands when an ESC in it reaches the screen
or the clipboard. The walk below finds every such call whose argument is
built from something other than constants, numbers and the safe renderer
(``rich_text``, ``markup_safe``, ``terminal_safe``, ``show_invisible``…), so
a new screen or command cannot forget it. What it flags and is nevertheless
safe is in ``REVIEWED``, with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "piqa_tui"

# Calls whose result is safe to show: the safe renderer, and functions that only ever return numbers as text.
SAFE_CALLS = {
    "rich_text",
    "shown_block",
    "markup_safe",
    "terminal_safe",
    "isolated",
    "message_line",
    "show_invisible",
    "twins_line",
    "plain",
    "format_value",
    "format_figure",
    "len",
    "_fmt",
    "_value",
    "_n",
}
# Where a str argument is parsed as markup (or written to the terminal): every argument must be safe.
HEADERS = {"add_column", "copy_to_clipboard"}
# Where an argument built in place (f-string, concatenation, join) must be built from safe parts.
SINKS = {"add_row", "update", "print"}
WIDGETS = {"Static", "Label", "Text", "Table", "Panel"}
TITLE_KEYWORDS = {"title", "caption", "header"}

# (file, argument as written): reviewed, safe although the walk cannot tell.
REVIEWED = {
    # The override every copy goes through: it removes the control characters itself.
    ("tui/app.py", "clipboard_safe(text)[0]"),
    # copy_text: the text has just been through clipboard_safe.
    ("tui/terminal/clipboard.py", "safe"),
    # The calibration block: the program's own sample lines, no data.
    ("tui/screens/check_terminal.py", "'\\n'.join([title, *lines[1:]])"),
    # rich_table's title: a Text its callers make with rich_text (typed Text, checked by mypy).
    ("render/agreement.py", "title"),
    # The results table's own column names, loops over constant tuples.
    ("tui/screens/model_results.py", "label"),
    ("tui/screens/model_results.py", "name"),
}


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def unsafe(expr: ast.expr) -> bool:
    """Whether ``expr`` may carry data text that has not passed the safe renderer."""
    if isinstance(expr, ast.Constant):
        return False
    if isinstance(expr, ast.Starred):
        return unsafe(expr.value)
    if isinstance(expr, ast.Call):
        name = _name(expr.func)
        if name in SAFE_CALLS:
            return False
        if name == "Text":  # not markup, but an ESC in it would reach a CLI terminal
            return any(unsafe(arg) for arg in expr.args[:1])
        return True
    if isinstance(expr, ast.JoinedStr):  # a number with a format spec ({n:,}, {x:.3f}) is safe
        return any(
            isinstance(part, ast.FormattedValue) and part.format_spec is None and unsafe(part.value)
            for part in expr.values
        )
    if isinstance(expr, ast.BinOp):
        return unsafe(expr.left) or unsafe(expr.right)
    if isinstance(expr, ast.IfExp):
        return unsafe(expr.body) or unsafe(expr.orelse)
    return True


def _built(expr: ast.expr) -> bool:
    """An argument put together in place: an f-string, a concatenation, a join."""
    if isinstance(expr, ast.Starred):
        expr = expr.value
    joined = isinstance(expr, ast.Call) and _name(expr.func) == "join"
    return joined or isinstance(expr, ast.JoinedStr | ast.BinOp)


def _shown_arguments(call: ast.Call) -> Iterator[tuple[ast.expr, bool]]:
    """The arguments of ``call`` that end up on screen, each with whether any non-constant one is suspect."""
    name = _name(call.func)
    if isinstance(call.func, ast.Attribute) and name in HEADERS:
        yield from ((arg, True) for arg in call.args)
    elif name in WIDGETS:
        yield from ((arg, name == "Table") for arg in call.args[:1])
        yield from ((kw.value, True) for kw in call.keywords if kw.arg in TITLE_KEYWORDS)
    elif isinstance(call.func, ast.Attribute) and name in SINKS:
        receiver = ast.unparse(call.func.value)
        if name != "print" or receiver.endswith("console"):
            if name != "update" or "query_one" in receiver or "Static" in receiver:
                yield from ((arg, False) for arg in call.args)


def suspects(root: Path = PACKAGE) -> list[tuple[str, str, int]]:
    """(file, argument, line) of every call that may show data text without the safe renderer."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            for arg, strict in _shown_arguments(node):
                if (strict or _built(arg)) and unsafe(arg):
                    found.append((relative, ast.unparse(arg), node.lineno))
    return found


def test_data_text_reaches_rich_and_textual_only_through_the_safe_renderer() -> None:
    flagged = [f"piqa_tui/{file}:{line}: {arg}" for file, arg, line in suspects() if (file, arg) not in REVIEWED]
    assert not flagged, "shown without the safe renderer (use rich_text / a Text of safe parts):\n" + "\n".join(flagged)


def test_the_reviewed_list_holds_nothing_stale() -> None:
    assert REVIEWED <= {(file, arg) for file, arg, _ in suspects()}


def test_the_walk_finds_what_it_is_for(tmp_path: Path) -> None:
    """The patterns that let data in: a raw column header, an f-string of data into a Static or a cell,
    a Text of data (ESC intact), a copy of raw text. Their safe forms pass."""
    (tmp_path / "bad.py").write_text(
        "table.add_column(column)\n"
        "self.query_one('#x', Static).update(f'by {column}')\n"
        "table.add_row(f'{name} voted', str(n))\n"
        "Table(title=f'by {column}')\n"
        "yield Static(f'opening {name}')\n"
        "Text(f'by {column}')\n"
        "console.print('[bold]' + name)\n"
        "self.app.copy_to_clipboard(value)\n"
    )
    (tmp_path / "good.py").write_text(
        "table.add_column(rich_text(column, one_line=True))\n"
        "self.query_one('#x', Static).update(rich_text(f'by {column}'))\n"
        "table.add_row(f'{n:,} items', 'n')\n"
        "Table(title=rich_text(f'by {column}', 'bold'))\n"
        "yield Static(rich_text(f'opening {name}'))\n"
        "Text(f'{len(x)} items', style='dim')\n"
        "console.print(rich_text(name, 'bold'))\n"
    )
    found = suspects(tmp_path)
    assert {file for file, _, _ in found} == {"bad.py"}
    assert len(found) == 8


def _calls_named(name: str) -> set[str]:
    """The package files that call ``name(...)`` or ``x.name(...)``."""
    files = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _name(node.func) == name:
                files.add(path.relative_to(PACKAGE).as_posix())
    return files


def test_only_the_clipboard_guard_copies() -> None:
    """Copies go through ``tui.terminal.clipboard.copy_text`` (which says what it left out) and the app's override."""
    assert _calls_named("copy_to_clipboard") <= {"tui/app.py", "tui/terminal/clipboard.py"}


def test_every_data_table_is_the_plain_one() -> None:
    """Textual's ``DataTable`` parses a str cell as markup; the TUI builds only ``PlainDataTable``."""
    assert not _calls_named("DataTable")


def test_every_notification_is_shown_literally() -> None:
    """``notify`` is called with f-strings of data all over the TUI: the app's one override escapes them all,
    and no other class replaces it."""
    from piqa_tui.tui.app import PiqaApp

    assert "markup_safe" in PiqaApp.notify.__code__.co_names
    overrides = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name in ("notify", "copy_to_clipboard")
    ]
    # The screens' host and its protocol pass notify on to the screen, and so to the app.
    delegates = ["tui/dialogs/asker.py", "tui/screens/host.py", "tui/controllers/sync.py"]
    assert sorted(overrides) == sorted(["tui/app.py", "tui/app.py", *delegates])
