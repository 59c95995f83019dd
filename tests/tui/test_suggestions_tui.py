"""A person decides the model's suggestions in the TUI: K keeps the pending suggestion for the current item's
metadata column (an ordinary edit naming it), Z turns the next one down, u takes a decision back; nothing
reaches the item without a key press."""

from __future__ import annotations

from pathlib import Path

from piqa_tui.core.generation.protocol import ModelSource, Provenance
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import NewSuggestion, record_suggestions, suggestion_of, suggestions
from tests.conftest import copy_sample

from .conftest import curate, current_id, main_screen, wait_for

DATA = "darija-algerian.tsv"


async def test_k_keeps_z_turns_down_and_u_undoes(tmp_path: Path) -> None:
    path = copy_sample(DATA, tmp_path)
    lead = Project.open(path, annotator="lead")
    source = ModelSource("gemma-3-270m.gguf", sha256="cd" * 32, backend="local")
    note = Provenance.now(source, by="lead", job="classify").to_json()
    first = lead.items[0].id
    before = lead.items[0].meta["category"]
    record_suggestions(lead, [NewSuggestion(first, "meta:category", v, note) for v in ("transport", "health")])
    lead.workspace.close()  # type: ignore[union-attr]

    async with curate(path, annotator="amina") as pilot:
        screen = main_screen(pilot)
        assert current_id(pilot) == first and screen.project.item(first).meta["category"] == before
        await pilot.press("K")
        await wait_for(pilot, lambda: screen.project.item(first).meta["category"] == "transport")
        await wait_for(
            pilot, lambda: any("kept" in n.message and "1 more pending" in n.message for n in pilot.app._notifications)
        )
        await pilot.press("Z")
        await wait_for(pilot, lambda: [s.status for s in suggestions(screen.project)] == ["accept", "reject"])
        assert screen.project.item(first).meta["category"] == "transport"  # turning one down changes nothing
        await pilot.press("u")
        await wait_for(pilot, lambda: [s.status for s in suggestions(screen.project)] == ["accept", "pending"])
        await pilot.press("Z", "Z")
        await wait_for(pilot, lambda: any("no pending suggestion" in n.message for n in pilot.app._notifications))

    project = Project.open(path)
    edit = [e for e in project.workspace.events(["edit"]) if e.item_id == first][-1]  # type: ignore[union-attr]
    assert suggestion_of(edit.note) == suggestions(project)[0].id and edit.annotator == "amina"
