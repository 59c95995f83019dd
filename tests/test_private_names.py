"""The private names of Rich and Textual that piqa-tui patches or reads are still there.

``tui/cell_widths.py`` replaces Rich's and Textual's cell-width functions, the app appends a line
filter to ``App._filters`` and suspends through ``App._driver``, and the TUI tests type through the
driver and read the app's notifications and the screen's compositor; the main screen reads its binding
chain to say why a key does nothing while a large file is read. None of that is public API,
so ``pyproject.toml`` bounds textual and rich to the versions these names were tested on; when a
new version is allowed and a name is gone, this test names it instead of the screen drawing crooked
or a key press raising AttributeError. Read-only: nothing is patched here.
"""

from __future__ import annotations

import importlib

import pytest
from textual.app import App
from textual.screen import Screen

# (module, attribute path): what cell_widths.install replaces, one per line.
PATCHED = [
    ("rich.cells", "_cell_len"),
    ("rich.cells", "cached_cell_len"),
    ("rich.cells", "split_graphemes"),
    ("rich.cells", "get_character_cell_size"),
    ("rich.segment", "get_character_cell_size"),
    ("rich.segment", "Segment._split_cells"),
    ("textual._wrap", "get_character_cell_size"),
    ("textual.widgets._input", "get_character_cell_size"),
]

# Attributes a Textual object sets in its constructor: the app's and the tests' private reads.
APP_ATTRIBUTES = ["_filters", "_driver", "_notifications"]
SCREEN_ATTRIBUTES = ["_compositor"]


@pytest.mark.parametrize(("module", "path"), PATCHED, ids=[f"{m}.{p}" for m, p in PATCHED])
def test_a_patched_function_is_still_there(module: str, path: str) -> None:
    try:
        owner = importlib.import_module(module)
    except ImportError as exc:
        pytest.fail(f"{module} is gone ({exc}); tui/cell_widths.py patches {module}.{path}")
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    assert hasattr(owner, name), f"{module}.{path} is gone; tui/cell_widths.py patches it"
    assert callable(getattr(owner, name)), f"{module}.{path} is no longer a function"


def test_the_app_attributes_read_by_piqa_tui_are_still_there() -> None:
    app = App()
    missing = [name for name in APP_ATTRIBUTES if not hasattr(app, name)]
    assert missing == [], f"textual.app.App no longer sets {missing}"
    assert isinstance(app._filters, list), "App._filters is no longer a list: the control-character filter cannot join"


def test_the_screen_attributes_read_by_the_tests_are_still_there() -> None:
    screen: Screen[None] = Screen()
    missing = [name for name in SCREEN_ATTRIBUTES if not hasattr(screen, name)]
    assert missing == [], f"textual.screen.Screen no longer sets {missing}"


def test_the_binding_chain_read_by_the_main_screen_is_still_there() -> None:
    assert isinstance(getattr(Screen, "_modal_binding_chain", None), property), (
        "textual.screen.Screen._modal_binding_chain is gone: the main screen reads it to refuse keys during loading"
    )
