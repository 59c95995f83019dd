"""Every screen and dialog draws the data through the bidi display: a walk over all of them (issue 37, item 4).

The screens and dialogs are found, not listed: every ``Screen`` subclass defined in ``piqa_tui.tui`` (walking
the package's modules). The walk then reaches them as a user does: from the main screen it presses the first
key of every action the screen binds, checks what is drawn, and does the same on each screen or dialog that
opens (two levels deep), then goes back; it also edits each field of the item (the metadata columns' dialog)
and opens the conflict dialogs. A screen class the walk never reached fails the test, so a new screen or
dialog is covered, or named, the day it is written.

The workspace holds the data in every place it can come from, in Arabic (then in Tamil): the dataset's text
and metadata columns, a round with its people, countries and question, votes, flags and notes, answers to
the round's question, guidelines with questions and replies, an adjudication and its reason, two conflicts
merged from a laptop (a field and a decision), a stored model run with an Arabic model name, duplicates.

What is checked, on the whole screen as the compositor draws it (borders, titles, footers, toasts, tables,
option lists, select menus included):

* ``--bidi app``: no Arabic letter is drawn in its stored (logical, unshaped) form: the display adapter turns
  every Arabic letter into its presentation form, so a base letter (U+0620–U+064A, U+066E–U+06FF) on screen
  is text that did not go through it; nor is a word of the data drawn shaped but in logical order.
* ``--bidi terminal`` and ``off``: no presentation form is drawn: the adapter keeps logical text there, so a
  shaped letter is a place that lays out for ``app`` whatever the mode.
* Tamil, in every mode: no vowel sign or virama is drawn cut from the letter it belongs to (at a line's or
  a cell's start, or after a character that is not Tamil).
"""

from __future__ import annotations

import importlib
import pkgutil
import shutil
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.screen import Screen

import piqa_tui.tui
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.guidelines import ask_part, guideline_questions, guidelines_part, reply_part
from piqa_tui.core.scoring.backend import ContinuationScore
from piqa_tui.core.scoring.cache import RunRecord, ScoreCache
from piqa_tui.core.scoring.results import item_content_hash
from piqa_tui.core.scoring.templates import DEFAULT_TEMPLATE, get_template
from piqa_tui.core.sync.merge import merge_workspace
from piqa_tui.core.text.bidi import BidiMode, layout
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.screens.main import MainScreen
from tests.conftest import SAMPLES
from tests.test_rounds import cli, round_file

from .conftest import make_app, wait_for

WS = ".piqa.sqlite"


@dataclass(frozen=True)
class Script:
    """The words a workspace is written in: the sample, and what replaces its metadata, names and notes."""

    name: str
    file: str  # the dataset's file name: a name from the data too
    sample: str
    prefix: str  # of the sample's ids
    columns: dict[str, str]  # metadata column -> the value every row gets
    people: tuple[str, str, str, str]  # two writers, a validator, the lead
    country: str
    question: str
    reason: str
    note: str
    guidelines: str
    reply: str
    model: str
    round_name: str


ARABIC = Script(
    "arabic",
    "دارجة.tsv",
    "darija-algerian.tsv",
    "dz",
    {"dialect": "جزائرية", "category": "الطبخ", "source": "مكتوب"},
    ("أمينة", "كريم", "ياسين", "هالة"),
    "الجزائر",
    "هل يعرف هذا الشيء كل الناس في بلدك؟",
    "الما بارد خير من الما السخون",
    "راجع هذا الحل",
    "# دليل الكتابة\n\nاكتب **سؤالا** واضحا عن الحياة اليومية.\n\n- حل صحيح واحد\n- حل خاطئ قريب منه\n",
    "نعم، اكتب بالدارجة",
    "نموذج-عربي.gguf",
    "جولة-الثقافة",
)
TAMIL = Script(
    "tamil",
    "தமிழ்.tsv",
    "tamil.tsv",
    "ta",
    {"category": "சமையல்", "source": "எழுதப்பட்டது"},
    ("அமுதா", "கார்த்திக்", "செல்வி", "முருகன்"),
    "இந்தியா",
    "இது உங்கள் ஊரில் எல்லோருக்கும் தெரியுமா?",
    "இரண்டாவது தீர்வு சரியானது",
    "இந்த தீர்வை சரிபார்க்கவும்",
    "# எழுதும் வழிகாட்டி\n\nஒரு **தெளிவான** கேள்வி எழுதுங்கள்.\n\n- ஒரு சரியான தீர்வு\n- ஒரு தவறான தீர்வு\n",
    "ஆம், தமிழில் எழுதுங்கள்",
    "தமிழ்-மாதிரி.gguf",
    "தமிழ்-சுற்று",
)


def sample_copy(script: Script, folder: Path, rows: int = 24) -> Path:
    """The sample's first ``rows`` items, every metadata column in the script, and an author column."""
    header, *lines = (SAMPLES / script.sample).read_text(encoding="utf-8").splitlines()
    names = header.split("\t")
    out = ["\t".join([*names, "author"])]
    for n, line in enumerate(lines[:rows]):
        cells = line.split("\t")
        cells = [script.columns.get(name, cell) for name, cell in zip(names, cells)]
        out.append("\t".join([*cells, script.people[n % 2]]))
    path = folder / script.file
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def round_text(script: Script) -> str:
    first, second, validator, lead = script.people
    people = "".join(
        f'[[annotator]]\nname = "{name}"\nroles = {roles}\ncountry = "{script.country}"\n\n'
        for name, roles in ((first, '["writer", "validator"]'), (second, '["writer", "validator"]'))
    )
    people += f'[[annotator]]\nname = "{validator}"\nroles = ["validator"]\ncountry = "{script.country}"\n\n'
    people += f'[[annotator]]\nname = "{lead}"\nroles = ["lead", "reviewer"]\n\n'
    question = f'[[question]]\nid = "known"\ntext = "{script.question}"\nkind = "yes/no"\n'
    return f'name = "{script.round_name}"\nseed = 7\nvalidators_per_item = 2\n\n[routing]\nnever = "author"\n\n{people}{question}'


def stored_run(project: Project, model: str, items: list[Item]) -> None:
    """A model run in the workspace, as ``score`` leaves it, for ``items`` (the first solution always wins)."""
    template = get_template(DEFAULT_TEMPLATE)
    cache = ScoreCache(project.workspace.conn)  # type: ignore[union-attr]
    rows = [
        (item_content_hash(item), [ContinuationScore(-1.0 - 2.0 * n, 4) for n in range(len(item.solutions))])
        for item in items
    ]
    cache.store(f"{model}:1:abc", template.key, rows, RunRecord.of(f"{model}:1:abc", model, template))


def seeded(script: Script, folder: Path) -> Path:
    """A workspace with the data in every place it can come from (see the module's docstring)."""
    dataset = sample_copy(script, folder)
    first, second, validator, lead = script.people
    code, _, err = cli("round", dataset, "import", round_file(folder, round_text(script)), "--annotator", lead)
    assert code == 0, err
    code, _, err = cli("assign", dataset, "--annotator", lead)
    assert code == 0, err
    ids = [f"{script.prefix}-{n:03d}" for n in range(1, 9)]
    writer = Project.open(dataset, annotator=first)
    writer.record([ask_part(ids[0], script.question)])
    writer.set_note(ids[0], script.note)
    writer.set_flags(ids[1], {"ambiguous": True}, note=script.note)
    writer.workspace.close()  # type: ignore[union-attr]
    for who, choices in ((second, "0101"), (validator, "1100")):
        project = Project.open(dataset, annotator=who)
        for item_id, choice in zip(ids[2:6], choices):
            project.vote(item_id, choice)
        project.workspace.close()  # type: ignore[union-attr]
    head = Project.open(dataset, annotator=lead)
    head.record([guidelines_part(script.guidelines, head.workspace)])  # type: ignore[arg-type, list-item]
    head.record([reply_part(guideline_questions(head.workspace)[0], script.reply)])
    head.adjudicate(ids[2], 1, script.reason)
    stored_run(head, script.model, head.items[:8])
    head.workspace.close()  # type: ignore[union-attr]
    laptop = folder / "laptop"
    laptop.mkdir()
    for path in folder.glob(dataset.name + "*"):
        if path.is_file():
            shutil.copy(path, laptop / path.name)
    for where, who, label in ((folder, first, 0), (laptop, validator, 1)):
        project = Project.open(where / dataset.name, annotator=who)
        project.edit(ids[0], {"prompt": f"{project.item(ids[0]).prompt} {script.note} {who}"})
        project.adjudicate(ids[3], label, f"{script.reason} {who}")
        project.workspace.close()  # type: ignore[union-attr]
    target = Project.open(dataset, annotator=lead)
    merge_workspace(target.workspace, laptop / (dataset.name + WS))  # type: ignore[arg-type]
    target.workspace.close()  # type: ignore[union-attr]
    merged = Project.open(dataset, annotator=lead)
    assert {c.item_id for c in merged.conflicts()} == {ids[0], ids[3]}
    merged.workspace.close()  # type: ignore[union-attr]
    return dataset


# ----------------------------------------------------------------------------------------------- the screens


def screen_classes() -> set[type[Screen]]:
    """Every screen and dialog class piqa-tui defines: its modules walked, the subclasses of Textual's Screen."""
    for module in pkgutil.walk_packages(piqa_tui.tui.__path__, "piqa_tui.tui."):
        importlib.import_module(module.name)

    def below(cls: type) -> Iterator[type]:
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)

    return {cls for cls in below(Screen) if cls.__module__.startswith("piqa_tui.")}


def drawn(screen: Screen) -> list[str]:
    """The lines the screen draws now, as the compositor sends them to the terminal."""
    return [strip.text for strip in screen._compositor.render_strips()]


ARABIC_LETTERS = [chr(c) for c in range(0x0620, 0x064B)] + [chr(c) for c in range(0x066E, 0x06D4)]
PRESENTATION = [(0xFB50, 0xFDFF), (0xFE70, 0xFEFF)]


def is_base_arabic_letter(ch: str) -> bool:
    return ("\u0620" <= ch <= "\u064a" or "\u066e" <= ch <= "\u06d3") and unicodedata.category(ch).startswith("L")


def is_presentation_form(ch: str) -> bool:
    return any(a <= ord(ch) <= b for a, b in PRESENTATION)


def is_tamil(ch: str) -> bool:
    return "\u0b80" <= ch <= "\u0bff"


def is_tamil_mark(ch: str) -> bool:
    return is_tamil(ch) and unicodedata.category(ch) in ("Mn", "Mc")


@dataclass
class Findings:
    """What the walk saw: the screens reached, and every line drawn wrong, with where."""

    mode: BidiMode
    shaped_in_logical_order: frozenset[str]
    reached: dict[str, int] = field(default_factory=dict)
    wrong: list[str] = field(default_factory=list)
    lines_wrong: set[str] = field(default_factory=set)  # each wrong line once, wherever the walk met it
    script_seen: dict[str, bool] = field(default_factory=dict)

    def look(self, screen: Screen, where: str) -> None:
        name = type(screen).__name__
        self.reached[name] = self.reached.get(name, 0) + 1
        seen = self.script_seen.get(name, False)
        for line in drawn(screen):
            seen = seen or any(is_base_arabic_letter(ch) or is_presentation_form(ch) or is_tamil(ch) for ch in line)
            problem = self.problem(line)
            if problem and f"{name}: {problem}: {line.strip()!r}" not in self.lines_wrong:
                self.lines_wrong.add(f"{name}: {problem}: {line.strip()!r}")
                self.wrong.append(f"{name} after {where}: {problem}: {line.strip()!r}")
        self.script_seen[name] = seen

    def problem(self, line: str) -> str | None:
        if self.mode is BidiMode.APP and any(is_base_arabic_letter(ch) for ch in line):
            return "Arabic drawn raw (logical order, unshaped)"
        if self.mode is BidiMode.APP and any(word in line for word in self.shaped_in_logical_order):
            return "Arabic shaped but in logical order"
        if self.mode is not BidiMode.APP and any(is_presentation_form(ch) for ch in line):
            return f"Arabic shaped by the app under --bidi {self.mode}"
        for n, ch in enumerate(line):
            if is_tamil_mark(ch) and (n == 0 or not is_tamil(line[n - 1])):
                return "a Tamil sign cut from its letter"
        return None


def shaped_words(dataset: Path) -> frozenset[str]:
    """Arabic words of the data, shaped but left in logical order: what a place that reshapes without
    reordering would draw (words of four letters or more, without marks, that do not read alike both ways)."""
    words: set[str] = set()
    for word in dataset.read_text(encoding="utf-8").split():
        if len(word) >= 4 and all(is_base_arabic_letter(ch) for ch in word) and word != word[::-1]:
            visual = layout(word, 40, BidiMode.APP)[0].text
            words.add(visual[::-1])
    return frozenset(words)


# Actions the walk does not take: they leave the app, start another program or a model, or reach the network;
# cycle_bidi changes the mode under test (each mode has its own walk).
NOT_TAKEN = {
    "cycle_bidi",
    "quit",
    "external_editor",
    "editor_external",
    "score_item",
    "score_all",
    "dup_semantic",
    "dup_against",
    "sync",
    "command_palette",
}


def first_keys(screen: Screen, with_app: bool) -> list[tuple[str, str]]:
    """(action id, key) of every piqa-tui action active on the screen (its own, the focused widget's, and the
    app's ``with_app``), one key each, in the order Textual lists them. Textual's own bindings (tab to focus,
    ^c to copy) have no id and are left out."""
    seen: set[str] = set()
    keys = []
    for key, active in screen.active_bindings.items():
        action = active.binding.id
        if action is None or action in NOT_TAKEN or action in seen or (active.node is screen.app and not with_app):
            continue
        seen.add(action)
        keys.append((action, key))
    return keys


async def settle(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.pause(0.05)


async def back_to(pilot: Pilot, depth: int) -> None:
    """Close screens until ``depth`` are left (escape, as a user does; a dialog that keeps it is popped)."""
    app = pilot.app
    for _ in range(4):
        if len(app.screen_stack) <= depth:
            return
        await pilot.press("escape")
        await settle(pilot)
    while len(app.screen_stack) > depth:
        app.pop_screen()
        await settle(pilot)


# The screens that show none of the data wherever the walk opens them: the flag reasons, the keys, and the
# new item's empty form.
# SuggestionDialog: with no writing model in the walk it shows only its status line; the model's Arabic text in
# it is checked in --bidi app by tests/tui/test_writing_assistant_tui.py
NO_DATA = ["FlagDialog", "HelpScreen", "NewItemDialog", "SuggestionDialog"]


def is_close(action: str, key: str) -> bool:
    return key in ("escape", "q") or action.endswith(("_close", "_cancel"))


async def walk_screen(pilot: Pilot, findings: Findings, where: str, level: int) -> None:
    """Press each key the screen on top binds; look at what it draws after each, and walk what opens."""
    app = pilot.app
    screen = app.screen
    depth = len(app.screen_stack)
    findings.look(screen, where)
    keys = first_keys(screen, with_app=level == 1)
    keys.sort(key=lambda pair: is_close(*pair))  # what closes the screen comes last
    for action, key in keys:
        if isinstance(screen, MainScreen):
            await pilot.press("g")  # the first item: the one with a conflict, a question and a note
        await pilot.press(key)
        await settle(pilot)
        here = f"{where} > {action}"
        assert any(isinstance(s, MainScreen) for s in app.screen_stack) or level > 1, f"the app closed after {here}"
        if len(app.screen_stack) > depth and app.screen is not screen:
            if level < 2:
                await walk_screen(pilot, findings, here, level + 1)
            else:
                findings.look(app.screen, here)
            await back_to(pilot, depth)
        elif app.screen is screen:
            findings.look(screen, here)
            if isinstance(screen, MainScreen):
                await pilot.press("escape")  # ends an edit in place, a label choice or a search
                await settle(pilot)
        if app.screen is not screen or len(app.screen_stack) < depth:
            return  # the key closed this screen


async def walk_main(pilot: Pilot, findings: Findings, ids: list[str]) -> None:
    """The main screen's keys, then each field of the first item edited (a metadata column opens its dialog),
    then the second conflict (a decision) resolved with C."""
    app = pilot.app
    base = len(app.screen_stack)
    await walk_screen(pilot, findings, "main", 1)
    assert isinstance(app.screen, MainScreen)
    await pilot.press("g")
    for n in range(16):  # every field the item has, tab by tab, edited with e
        await pilot.press("g", *["tab"] * n, "e")
        await settle(pilot)
        findings.look(app.screen, f"main > {n} tabs > edit")
        await pilot.press("escape")
        await back_to(pilot, base)
    await pilot.press("colon", *ids[3], "enter", "C")
    await settle(pilot)
    findings.look(app.screen, "main > C on the decision conflict")
    await back_to(pilot, base)


async def reload_from_disk(pilot: Pilot, findings: Findings, dataset: Path) -> None:
    """The file changed on disk, then saved: the dialog saying so, and the loading screen while it is read again
    (a screen that goes by itself: looked at once it has been drawn)."""
    app = pilot.app
    before = app.screen
    app.screen_change_signal.subscribe(app, lambda screen: screen.call_after_refresh(findings.look, screen, "shown"))
    dataset.write_text(dataset.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # another program wrote it
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: not isinstance(app.screen, MainScreen))
    await settle(pilot)
    findings.look(app.screen, "save after the file changed on disk")
    await pilot.press("down", "enter")  # reload
    await wait_for(pilot, lambda: isinstance(app.screen, MainScreen) and app.screen is not before)
    await settle(pilot)


async def walk_app(dataset: Path, mode: BidiMode, ids: list[str], lead: str) -> Findings:
    findings = Findings(mode, shaped_words(dataset))
    app = make_app(dataset, annotator=lead, reviewer=True, bidi_mode=mode)
    async with app.run_test(size=(110, 34)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await wait_for(pilot, lambda: app.session is not None and app.session.validation.complete)
        await settle(pilot)
        await walk_main(pilot, findings, ids)
        await reload_from_disk(pilot, findings, dataset)
        app.action_check_terminal()  # bound to no key by default: from the palette
        await settle(pilot)
        await walk_screen(pilot, findings, "check terminal", 2)
    return findings


async def walk_mapping(folder: Path, script: Script, mode: BidiMode, findings: Findings) -> None:
    """A file whose columns are named in the data's language: the mapping dialog asks for their roles."""
    first, second, validator, lead = script.people
    path = folder / f"{script.round_name}.tsv"
    path.write_text(f"{first}\t{second}\t{validator}\n{script.question}\t{script.reason}\t{script.note}\n")
    app = make_app(path, annotator=lead, bidi_mode=mode)
    async with app.run_test(size=(110, 34)) as pilot:
        await wait_for(pilot, lambda: type(app.screen).__name__ == "MappingDialog")
        await settle(pilot)
        await walk_screen(pilot, findings, "mapping", 2)


@pytest.mark.parametrize(
    ("script", "mode"),
    [(ARABIC, BidiMode.APP), (TAMIL, BidiMode.APP), (ARABIC, BidiMode.TERMINAL), (ARABIC, BidiMode.OFF)],
    ids=["arabic-app", "tamil-app", "arabic-terminal", "arabic-off"],
)
async def test_every_screen_and_dialog_draws_the_data_through_the_bidi_display(
    tmp_path: Path, script: Script, mode: BidiMode
) -> None:
    dataset = seeded(script, tmp_path)
    ids = [f"{script.prefix}-{n:03d}" for n in range(1, 9)]
    findings = await walk_app(dataset, mode, ids, script.people[3])
    await walk_mapping(tmp_path, script, mode, findings)
    assert not findings.wrong, "\n".join(findings.wrong)
    missed = {cls.__name__ for cls in screen_classes()} - set(findings.reached)
    assert not missed, f"screens and dialogs the walk never reached: {sorted(missed)}"
    # the loading screen shows the file's name only while the file loads: a quick load may end before it is drawn
    blank = sorted(name for name, seen in findings.script_seen.items() if not seen and name != "LoadingScreen")
    assert blank == NO_DATA, f"screens and dialogs that showed none of the data: {blank}"
