"""Suggestions recorded earlier (a batch job's, a colleague's) reviewed in the TUI: S opens the item's pending
text suggestions as word-level changes against the fields' text now, enter records the decision on those
suggestions (all taken: accept, some: amend, none: reject) as one action that u undoes, escape writes nothing;
the item view says when an item has pending suggestions and the filter's queue lists exactly those items."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from textual.widgets import OptionList, Static

from piqa_tui.core.generation.protocol import ModelSource, Provenance
from piqa_tui.core.text.bidi import BidiMode, layout
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import NewSuggestion, record_suggestions, suggestion_of, suggestions
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.dialogs.suggestion import SuggestionDialog
from piqa_tui.tui.widgets.item.item_view import ItemView

from .conftest import curate, current_id, drawn_lines, main_screen, type_text, wait_for

OLD = "ترشو بقرعة ما وتفتلو بيديك قبل ما تحطو فالكسكاس."  # dz-001's solution0
NEW = "ترشو بشوية ما وتفتلو بيدك قبل ما تحطو فالكسكاس."  # two words changed
HALF = "ترشو بشوية ما وتفتلو بيديك قبل ما تحطو فالكسكاس."  # the first change taken, the second left


def _record(path: Path, wanted: list[tuple[str, str, str]]) -> None:
    """Record suggestions as a batch job would, by the lead, before anyone opens the TUI."""
    lead = Project.open(path, annotator="lead")
    source = ModelSource("SmolLM2-135M-Instruct.Q4_1.gguf", sha256="ab" * 32, backend="local")
    note = Provenance.now(source, by="lead", job="correct").to_json()
    record_suggestions(lead, [NewSuggestion(item, field, value, note) for item, field, value in wanted])
    lead.workspace.close()  # type: ignore[union-attr]


def _toasts(pilot: object) -> list[str]:
    return [n.message for n in pilot.app._notifications]  # type: ignore[attr-defined]


async def test_take_one_change_leave_another_is_an_amend_that_u_undoes(darija: Path) -> None:
    _record(darija, [("dz-001", "solution0", NEW)])
    async with curate(darija, annotator="amina", bidi_mode=BidiMode.APP) as pilot:
        screen = main_screen(pilot)
        title = screen.query_one(ItemView).query_one("#item-title", Static)
        assert current_id(pilot) == "dz-001"
        assert "1 model suggestion pending — S reviews" in drawn_lines(title)
        await pilot.press("S")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SuggestionDialog))
        dialog = pilot.app.screen
        assert isinstance(dialog, SuggestionDialog)
        await wait_for(pilot, lambda: dialog.changes is not None)
        assert dialog.changes is not None and len(dialog.changes.order) == 2
        console = Console(width=90, record=True, color_system=None)
        console.print(dialog.changes.render())
        drawn = console.export_text()
        shown = layout(OLD, 90, BidiMode.APP)[0].text.strip()
        assert shown in drawn and OLD not in drawn  # drawn through the bidi adapter, never as logical text
        await pilot.press("a", "r", "enter")  # take بقرعة → بشوية, leave بيديك → بيدك
        await wait_for(pilot, lambda: screen.project.item("dz-001").solutions[0] == HALF)
        made = suggestions(screen.project)
        assert [(s.status, s.decided_by) for s in made] == [("amend", "amina")]
        edit = [e for e in screen.project.workspace.events(["edit"]) if e.item_id == "dz-001"][-1]  # type: ignore[union-attr]
        assert suggestion_of(edit.note) == made[0].id
        await wait_for(pilot, lambda: "pending" not in drawn_lines(title))
        await pilot.press("u")  # one action: the edit and the decision go back together
        await wait_for(pilot, lambda: screen.project.item("dz-001").solutions[0] == OLD)
        assert [s.status for s in suggestions(screen.project)] == ["pending"]


async def test_none_taken_is_a_reject_and_escape_writes_nothing(darija: Path) -> None:
    _record(darija, [("dz-001", "solution0", NEW)])
    async with curate(darija, annotator="amina") as pilot:
        screen = main_screen(pilot)
        await pilot.press("S")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SuggestionDialog))
        await pilot.press("a", "escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen)
        await pilot.pause()
        assert [s.status for s in suggestions(screen.project)] == ["pending"]
        await pilot.press("S")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SuggestionDialog))
        await pilot.press("r", "r", "enter")
        await wait_for(pilot, lambda: [s.status for s in suggestions(screen.project)] == ["reject"])
        assert screen.project.item("dz-001").solutions[0] == OLD
        await pilot.press("S")  # nothing pending any more: one toast, no dialog
        await wait_for(pilot, lambda: any("no pending model suggestion" in m for m in _toasts(pilot)))
        assert pilot.app.screen is screen


async def test_a_field_changed_since_is_shown_against_its_text_now(darija: Path) -> None:
    older = "ترشو بقرعة ما وتفتلو بيديك قبل ما تحطو فالقدرة."
    _record(darija, [("dz-001", "solution0", older), ("dz-001", "solution0", NEW)])
    lead = Project.open(darija, annotator="lead")
    lead.edit("dz-001", {"solution0": OLD.replace("قبل", "بعد")})  # a person changed the field since
    lead.workspace.close()  # type: ignore[union-attr]
    async with curate(darija, annotator="amina") as pilot:
        screen = main_screen(pilot)
        await pilot.press("S")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SuggestionDialog))
        dialog = pilot.app.screen
        assert isinstance(dialog, SuggestionDialog)
        await wait_for(pilot, lambda: dialog.changes is not None)
        await pilot.pause()
        status = " ".join(drawn_lines(dialog.query_one("#status", Static)).split())
        assert "changed since the suggestion" in status and "1 older suggestion pending" in status
        await pilot.press("A", "enter")  # every change taken: the newest suggestion kept as it was made
        await wait_for(pilot, lambda: screen.project.item("dz-001").solutions[0] == NEW)
        assert [s.status for s in suggestions(screen.project)] == ["pending", "accept"]


async def test_the_queue_lists_the_items_with_pending_suggestions(darija: Path) -> None:
    _record(darija, [("dz-001", "solution0", NEW), ("dz-003", "meta:category", "cooking")])
    async with curate(darija, annotator="amina") as pilot:
        screen = main_screen(pilot)
        await pilot.press("j")  # dz-002: nothing pending, no hint
        await wait_for(pilot, lambda: current_id(pilot) == "dz-002")
        title = screen.query_one(ItemView).query_one("#item-title", Static)
        assert "pending" not in drawn_lines(title)
        await pilot.press("S")
        await wait_for(pilot, lambda: any("no pending model suggestion" in m for m in _toasts(pilot)))
        await pilot.press("j")  # dz-003: a classified value only, which K and Z decide
        await wait_for(pilot, lambda: "1 model suggestion pending — K/Z decide" in drawn_lines(title))
        await pilot.press("F")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        options = pilot.app.screen.query_one(OptionList)
        await type_text(pilot, "suggestions-p")
        await pilot.pause()
        assert options.get_option_at_index(options.highlighted or 0).id == "queue:suggestions-pending"
        await pilot.press("enter")
        await wait_for(pilot, lambda: pilot.app.screen is screen)
        shown = [screen.project.items[p].id for p in screen.item_list.rows]
        assert shown == ["dz-001", "dz-003"]
