"""Every key is in the keymap by action id: no binding outside it, every one remappable from the config.

The static test reads every Textual class of the TUI and checks its bindings
against ``keymap.ALL_ACTIONS``; the Pilot tests remap keys of the screens that
once kept their own bindings (agreement, adjudication, the flag dialog, the
terminal check) and press the new keys.
"""

from __future__ import annotations

import importlib
import inspect
import io
import pkgutil
from pathlib import Path

from rich.console import Console
from textual.binding import Binding
from textual.dom import DOMNode

import piqa_tui.tui
from piqa_tui.settings.config import load_config
from piqa_tui.tui.dialogs.flag import FlagDialog
from piqa_tui.tui.keymap import ALL_ACTIONS, SECTIONS
from piqa_tui.tui.screens.adjudication import AdjudicationScreen
from piqa_tui.tui.screens.agreement import AgreementScreen
from piqa_tui.tui.screens.check_terminal import CheckTerminalScreen

from .conftest import curate, main_screen, make_app, wait_for


def tui_classes() -> list[type[DOMNode]]:
    """Every screen, widget and the app defined in the TUI package."""
    found = []
    for module_info in pkgutil.walk_packages(piqa_tui.tui.__path__, "piqa_tui.tui."):
        module = importlib.import_module(module_info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, DOMNode):
                found.append(cls)
    return found


def test_every_binding_of_the_tui_is_an_action_of_the_keymap() -> None:
    known = {a.id: a for a in ALL_ACTIONS}
    classes = tui_classes()
    assert {"MainScreen", "AgreementScreen", "AdjudicationScreen", "FlagDialog", "CheckTerminalScreen"} <= {
        c.__name__ for c in classes
    }
    strays = []
    for cls in classes:
        for binding in cls.__dict__.get("BINDINGS", []):
            assert isinstance(binding, Binding), f"{cls.__name__}: {binding!r}"
            action = known.get(binding.id or "")
            if action is None or action.keys != binding.key:
                strays.append(f"{cls.__name__}: {binding.key} -> {binding.action} (id {binding.id})")
    assert strays == []


def test_ids_are_unique_and_every_table_is_in_the_help(tmp_path) -> None:
    ids = [a.id for a in ALL_ACTIONS]
    assert len(ids) == len(set(ids))
    config = tmp_path / "config.toml"
    config.write_text('[keys]\nagree_close = "x"\nadj_next = "down"\nflag_save = "ctrl+w"\ncheck_apply = "space"\n')
    assert load_config(config, action_ids=ids).keys["adj_next"] == "down"  # every screen's ids can be remapped
    assert sum(len(actions) for _, actions in SECTIONS) == len(ALL_ACTIONS)


async def test_the_review_screens_keys_are_remapped(darija: Path) -> None:
    keys = {"agree_close": "x", "adj_close": "x", "adj_next": "down", "flag_toggle_1": "u", "flag_save": "ctrl+w"}
    async with curate(darija, keys=keys, reviewer=True) as pilot:
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AgreementScreen))
        await pilot.press("x")
        await wait_for(pilot, lambda: pilot.app.screen is main_screen(pilot))

        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, FlagDialog))
        await pilot.press("u", "ctrl+w")  # the first reason, saved
        main = main_screen(pilot)
        await wait_for(pilot, lambda: pilot.app.screen is main)
        assert set(main.project.state.flags["dz-001"]) == {"ungrammatical"}

        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AdjudicationScreen))
        await pilot.press("x")
        await wait_for(pilot, lambda: pilot.app.screen is main)


async def test_the_terminal_checks_keys_are_remapped_and_listed_in_the_help() -> None:
    app = make_app(None, check_terminal=True, keys={"check_next_mode": "n"})
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, CheckTerminalScreen))
        screen = pilot.app.screen
        before = screen.index
        await pilot.press("n")
        assert screen.index == (before + 1) % 4
        await pilot.press("question_mark")
        await pilot.pause()
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(pilot.app.screen._table())
        text = console.export_text()
        for action_id in (
            "check_next_mode",
            "agree_policy",
            "adj_show_done",
            "flag_toggle_7",
            "label_none",
            "editor_del_word",
        ):
            assert action_id in text
        line = next(line for line in text.splitlines() if line.rstrip().endswith("check_next_mode"))
        assert line.split()[0] == "n"  # the key as remapped
