"""Quitting while keys are still arriving: the keys are ignored, the app exits cleanly, nothing hangs.

The keys are posted to the app in one burst, as a terminal delivers ``q`` and
whatever was typed after it: each one that opens a screen or starts an edit
would otherwise mount widgets on screens that are already closing.
"""

from __future__ import annotations

import pytest
from textual import events

from piqa_tui.tui.screens.main import MainScreen
from tests.tui.conftest import make_app, wait_for

BURSTS = [
    "q a d e ? / 1 2 a e d",
    "q ? a escape d / x enter e",
    "q / e e a d ? 1",
    "q e a",
]
CHARACTERS = {"escape": None, "enter": "\r", "?": "?", "/": "/"}
KEYS = {"?": "question_mark", "/": "slash"}


def burst(keys: str) -> list[events.Key]:
    """The Key events a terminal sends for ``keys`` (space-separated names)."""
    return [events.Key(KEYS.get(key, key), CHARACTERS.get(key, key)) for key in keys.split()]


@pytest.mark.parametrize("attempt", range(30))
async def test_keys_arriving_while_the_app_quits_are_ignored(darija, attempt: int) -> None:
    app = make_app(darija)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        for key in burst(BURSTS[attempt % len(BURSTS)]):
            app.post_message(key)
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0 and app._exception is None


async def test_quit_while_the_dataset_opens_leaves_nothing_open(darija) -> None:
    app = make_app(darija)
    async with app.run_test(size=(100, 30)) as pilot:
        for key in burst("q a e"):
            app.post_message(key)
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 0 and app._exception is None
