"""Text as typed: every character an annotator types reaches the workspace and the exported file, byte for byte.

Format characters (ZWNJ, ZWJ, the combining grapheme joiner), variation selectors and combining marks are
typed one key at a time, as key events with their character the way Textual's terminal parser makes them
(``Pilot.press`` names such keys without their character), and pasted, in the field editor, the note editor
and the search bar.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot

from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.widgets.item.field_editor import FieldEditor

from ..conftest import copy_sample
from .conftest import curate, current_id, main_screen, type_text, wait_for

RAB = "র\u200c্যাব"  # Bengali: with the ZWNJ the ya-phala stays visible; without it the word takes a reph
TYPED = [
    RAB,
    " মেহ\u200cদি",  # a Persian-style ZWNJ inside Bengali script
    " क्\u200dष",  # Hindi: a ZWJ asks for the half form
    " a\u034fb",  # the combining grapheme joiner
    " ☺\ufe0f 葛\U000e0100",  # an emoji and an ideographic variation selector
    " كَتَبَ e\u0301",  # Arabic harakat; e + combining acute (stored in NFC as é)
    " \u200e\u061c\u00ad\u2060",  # LRM, ALM, soft hyphen, word joiner
]
WORDS = "".join(TYPED)
STORED = unicodedata.normalize("NFC", WORDS)  # text is stored in NFC; nothing else about it changes


@pytest.fixture
def bengali(tmp_path: Path) -> Path:
    return copy_sample("bengali.tsv", tmp_path)


async def paste(pilot: Pilot, text: str) -> None:
    driver = pilot.app._driver
    assert driver is not None
    event = events.Paste(text)
    event.set_sender(pilot.app)
    driver.send_message(event)
    await pilot.pause()


def focused_editor(pilot: Pilot) -> FieldEditor:
    editor = pilot.app.focused
    assert isinstance(editor, FieldEditor), editor
    return editor


Write = Callable[[Pilot], Awaitable[None]]


async def solution_kept(bengali: Path, tmp_path: Path, write: Write, stored: str) -> tuple[str, bytes, bytes]:
    """Empty bn-001's first solution, ``write`` into it and keep it (waiting until the workspace holds
    ``stored``); returns what the editor held, and the exported file's id and solution cells, as bytes."""
    async with curate(bengali) as pilot:
        await pilot.press("tab", "e", "ctrl+u")
        editor = focused_editor(pilot)
        await write(pilot)
        typed = editor.value
        await pilot.press("enter")
        await wait_for(pilot, lambda: main_screen(pilot).project.item("bn-001").solutions[0] == stored)
    out = tmp_path / "out.tsv"
    Project.open(bengali).export(out)
    row = out.read_bytes().split(b"\n")[1].split(b"\t")
    return typed, row[0], row[2]


async def note_kept(bengali: Path, write: Write, stored: str) -> tuple[str, bytes]:
    """Open bn-001's note, ``write`` into it and keep it (waiting until the workspace holds ``stored``); returns
    what the editor held and the note a fresh open reads, as bytes."""
    async with curate(bengali) as pilot:
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(pilot.app.focused, FieldEditor))
        await write(pilot)
        typed = focused_editor(pilot).value
        await pilot.press("enter")
        await wait_for(pilot, lambda: main_screen(pilot).project.state.notes.get("bn-001") == stored)
    return typed, Project.open(bengali).state.notes["bn-001"].encode("utf-8")


TYPING = {"typed": type_text, "pasted": paste}


@pytest.mark.parametrize("how", list(TYPING))
async def test_a_solution_keeps_every_typed_character_up_to_the_exported_file(
    bengali: Path, tmp_path: Path, how: str
) -> None:
    kept = await solution_kept(bengali, tmp_path, lambda pilot: TYPING[how](pilot, WORDS), STORED)
    assert kept == (STORED, b"bn-001", STORED.encode("utf-8"))


@pytest.mark.parametrize("how", list(TYPING))
async def test_a_note_keeps_every_typed_character(bengali: Path, how: str) -> None:
    assert await note_kept(bengali, lambda pilot: TYPING[how](pilot, WORDS), STORED) == (STORED, STORED.encode("utf-8"))


async def test_search_keeps_every_typed_character(bengali: Path) -> None:
    async with curate(bengali) as pilot:
        await pilot.press("slash")
        await wait_for(pilot, lambda: isinstance(pilot.app.focused, FieldEditor))
        await type_text(pilot, RAB)
        assert focused_editor(pilot).value == RAB
        await paste(pilot, "\u200d\u034f")
        assert focused_editor(pilot).value == RAB + "\u200d\u034f"


def test_a_format_character_is_a_key_textual_calls_unprintable() -> None:
    """Why the editor cannot ask ``Key.is_printable``: it is False for a ZWNJ, which types a character."""
    from textual.keys import _character_to_key

    from piqa_tui.tui.widgets.item.field_editor import typed_character

    for character in "\u200c\u200d\u00ad\u200e":
        key = events.Key(_character_to_key(character), character)
        assert not key.is_printable and typed_character(key) == character
    silent: list[tuple[str, str | None]] = [("tab", "\t"), ("enter", "\r"), ("escape", "\x1b"), ("ctrl+a", "\x01")]
    for name, control in [*silent, ("up", None)]:
        assert typed_character(events.Key(name, control)) is None
    composed = "ক\u09cd\u200dষ"  # an input method's composed text, sent as one key
    assert typed_character(events.Key("composed", composed)) == composed


async def test_keys_that_type_nothing_still_type_nothing(bengali: Path) -> None:
    async with curate(bengali) as pilot:
        await pilot.press("tab", "e", "ctrl+u")
        editor = focused_editor(pilot)
        await pilot.press("a", "tab")  # tab leaves the field for the next one: no tab character is typed
        assert "\t" not in editor.value and editor.value.startswith("a")


# An input method commits a whole syllable or word at once. Each commit below is one such text.
COMMITS = [
    "র\u200c্যাব",  # Bengali: ZWNJ before the virama keeps the ya-phala
    "क्\u200dष",  # Devanagari: ZWJ asks for the half form of the conjunct
    "می\u200cخواهم",  # Arabic script, Persian spelling: ZWNJ between the prefix and the verb
    "a\u034fb",  # the combining grapheme joiner
    "葛\U000e0100☺\ufe0f",  # an ideographic and an emoji variation selector
    "e\u0301\u0323",  # a base letter with two combining marks (NFC: ẹ́, U+1EB9 U+0301)
]
COMMITTED = unicodedata.normalize("NFC", " ".join(COMMITS))


def commit_events(text: str, how: str) -> list[events.Event]:
    """The events an input method's commit of ``text`` reaches the app as.

    ``key``: one key event carrying the whole commit (a driver that passes the commit on as it came);
    ``burst``: its UTF-8 at once on the terminal, through Textual's own parser (a key per code point);
    ``bracketed``: the commit as a bracketed paste, through the same parser.
    """
    from textual._xterm_parser import XTermParser

    if how == "key":
        return [events.Key("composed", text)]
    sent = text if how == "burst" else f"\x1b[200~{text}\x1b[201~"
    return [token for token in XTermParser().feed(sent) if isinstance(token, events.Event)]


async def commit(pilot: Pilot, how: str) -> None:
    """Send every commit of ``COMMITS``, a space between them, as ``how`` delivers an input method's text."""
    driver = pilot.app._driver
    assert driver is not None
    for n, text in enumerate(COMMITS):
        for event in commit_events(text if n == 0 else " " + text, how):
            event.set_sender(pilot.app)
            driver.send_message(event)
    await pilot.pause()


HOWS = ["key", "burst", "bracketed"]


@pytest.mark.parametrize("how", HOWS)
async def test_committed_text_reaches_the_field_and_the_exported_file(bengali: Path, tmp_path: Path, how: str) -> None:
    kept = await solution_kept(bengali, tmp_path, lambda pilot: commit(pilot, how), COMMITTED)
    assert kept == (COMMITTED, b"bn-001", COMMITTED.encode("utf-8"))


@pytest.mark.parametrize("how", HOWS)
async def test_committed_text_reaches_the_note(bengali: Path, how: str) -> None:
    kept = await note_kept(bengali, lambda pilot: commit(pilot, how), COMMITTED)
    assert kept == (COMMITTED, COMMITTED.encode("utf-8"))


@pytest.mark.parametrize("how", HOWS)
async def test_committed_text_reaches_the_search_box_and_finds_the_item(bengali: Path, how: str) -> None:
    Project.open(bengali, annotator="setup").edit("bn-003", {"solution1": f"আগে {COMMITTED} পরে"})
    async with curate(bengali) as pilot:
        await pilot.press("slash")
        await wait_for(pilot, lambda: isinstance(pilot.app.focused, FieldEditor))
        await commit(pilot, how)
        assert focused_editor(pilot).value == COMMITTED
        await pilot.press("enter")
        await wait_for(pilot, lambda: current_id(pilot) == "bn-003")  # the one item holding the text
