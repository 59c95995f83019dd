"""Helpers to drive piqa-tui with Pilot the way an annotator does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual import events
from textual.keys import _character_to_key
from textual.pilot import Pilot
from textual.widget import Widget

from piqa_tui.core.text.bidi import BidiMode
from piqa_tui.core.text.graphemes import WidthPolicy, get_width_policy, set_width_policy
from piqa_tui.tui import app as app_module
from piqa_tui.tui.app import AppSettings, PiqaApp
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.state.session import OpenRequest
from piqa_tui.tui.terminal import cell_widths
from tests.conftest import copy_sample


@pytest.fixture(autouse=True)
def _check_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start the background validation at once (the app waits for its first frame)."""
    monkeypatch.setattr(app_module, "CHECK_DELAY", 0.001)


@pytest.fixture(autouse=True)
def _codepoint_widths():
    """Lay text out as xterm, VTE and tmux draw it, whatever the machine's config says."""
    before = get_width_policy()
    cell_widths.install(WidthPolicy("codepoint"))
    yield
    set_width_policy(before)
    cell_widths.uninstall()  # the rest of the suite measures with Rich's own tables


@pytest.fixture
def darija(tmp_path: Path) -> Path:
    return copy_sample("darija-algerian.tsv", tmp_path)


@pytest.fixture
def tamil(tmp_path: Path) -> Path:
    return copy_sample("tamil.tsv", tmp_path)


@pytest.fixture
def headless(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PiqaApp.run`` drives the app under Pilot until it exits on its own, as a launch that fails makes it do:
    ``main([...])`` then runs the whole TUI without a terminal."""

    def run_headless(self: PiqaApp) -> None:
        async def go() -> None:
            async with self.run_test() as pilot:
                await wait_for(pilot, lambda: self._exit)

        asyncio.run(go())

    monkeypatch.setattr(PiqaApp, "run", run_headless)


def make_app(
    path: Path | None, *, annotator: str = "tester", keys: dict[str, str] | None = None, **settings
) -> PiqaApp:
    directions = settings.pop("directions", None)
    request = OpenRequest(path, annotator=annotator) if path is not None else None
    if request is not None and directions is not None:
        request.directions = directions
    return PiqaApp(AppSettings(request, bidi_mode=settings.pop("bidi_mode", BidiMode.APP), keys=keys or {}, **settings))


async def wait_for(pilot: Pilot, condition: Callable[[], object], timeout: float = 10.0) -> None:
    """Let the app run until ``condition()`` holds (workers finish, screens change)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.02)


def settled_after(step: Callable[[Pilot], Awaitable[object]]) -> Callable[[Pilot], Awaitable[None]]:
    """A snapshot's ``run_before``: once the first checks are done, ``step`` (open a screen), then a pause and
    no notifications (when they fade would otherwise decide what the snapshot shows)."""

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, PiqaApp)
        await wait_for(pilot, lambda: app.session is not None and app.session.validation.complete)
        await step(pilot)
        await pilot.pause(0.1)
        app.clear_notifications()
        await pilot.pause()

    return run_before


@asynccontextmanager
async def curate(
    path: Path, size: tuple[int, int] = (100, 30), *, toasts: bool = False, **options
) -> AsyncIterator[Pilot]:
    """Open ``path`` in the app and wait until its first item is on screen (and checks are done); ``toasts``:
    draw notifications (Textual's test harness leaves them undrawn unless asked)."""
    app = make_app(path, **options)
    async with app.run_test(size=size, notifications=toasts) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await wait_for(pilot, lambda: app.session is not None and app.session.validation.complete)
        await pilot.pause()
        yield pilot


def main_screen(pilot: Pilot) -> MainScreen:
    screen = pilot.app.screen
    assert isinstance(screen, MainScreen), screen
    return screen


def current_id(pilot: Pilot) -> str:
    item = main_screen(pilot).current
    assert item is not None
    return item.id


async def run_from_palette(pilot: Pilot, words: str) -> None:
    """Open the command palette, type ``words``, run the first hit, and wait for the main screen again."""
    from textual.command import CommandPalette

    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    await type_text(pilot, words)
    await pilot.pause(0.3)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))
    await pilot.pause()


async def type_text(pilot: Pilot, text: str) -> None:
    """Type ``text`` one code point at a time, as a terminal sends it.

    ``Pilot.press`` cannot derive the character of keys such as a Tamil pulli
    (its name has spaces), so the key events are made here with the character.
    """
    driver = pilot.app._driver
    assert driver is not None
    for ch in text:
        event = events.Key(_character_to_key(ch), ch)
        event.set_sender(pilot.app)
        driver.send_message(event)  # queued in order, like a fast typist
    await pilot.pause()


# The keys a burst names in angle brackets, with the character a terminal sends for each.
NAMED_KEYS = {
    "tab": "\t",
    "shift+tab": None,
    "enter": "\r",
    "escape": "\x1b",
    "backspace": "\x7f",
    "ctrl+u": "\x15",
    "ctrl+s": "\x13",
    "space": " ",
}


def burst(pilot: Pilot, *parts: str | events.Paste) -> None:
    """Send ``parts`` to the app at once, as a slow connection delivers what was typed ahead.

    A part in angle brackets is a named key (``"<tab>"``, ``"<ctrl+u>"``), a ``Paste`` is a paste, any other is
    text typed one code point at a time. Nothing waits between them: the app receives them all before it handles
    the first.
    """
    driver = pilot.app._driver
    assert driver is not None
    for part in parts:
        keys: list[events.Key] | list[events.Paste]
        if isinstance(part, events.Paste):
            keys = [part]
        elif part.startswith("<") and part.endswith(">") and part[1:-1] in NAMED_KEYS:
            keys = [events.Key(part[1:-1], NAMED_KEYS[part[1:-1]])]
        else:
            keys = [events.Key(_character_to_key(ch), ch) for ch in part]
        for key in keys:
            key.set_sender(pilot.app)
            driver.send_message(key)


async def write_item(pilot: Pilot, goal: str, *solutions: str) -> None:
    """Write a new item as a writer does: ``I``, the goal, tab and each solution, enter."""
    from piqa_tui.tui.dialogs.new_item import NewItemDialog

    await pilot.press("I")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, NewItemDialog))
    await type_text(pilot, goal)
    for solution in solutions:
        await pilot.press("tab")
        await type_text(pilot, solution)
    await pilot.press("enter")


def drawn_lines(widget: Widget) -> str:
    """What ``widget`` draws now, its lines as text (after the app has repainted: ``await pilot.pause()``)."""
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))
