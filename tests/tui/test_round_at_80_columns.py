"""The smaller things a lead met in a round, at 80x24 as annotators run it: the new-item form's checks stay in
view (PgDn scrolls the fields), the item's title wraps instead of cutting "✓ you voted 1" or the stage, ids
written in the workspace keep their distinguishing end in the list, a blind writer sees the gold she typed, and a
validator in a team round is asked before saving (no ``^s save`` in her footer) — a saved file makes
``workspace merge`` refuse her laptop."""

from __future__ import annotations

from pathlib import Path

from textual.containers import VerticalScroll
from textual.widgets import Static

from piqa_tui.core.round.stages import Draft, add_items
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.new_item import NewItemDialog
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.widgets.list.item_list import ItemList, shown_id
from tests.test_rounds import ARAB, culture_copy, doc_round, imported
from tests.tui.test_shuffled_validation import open_item

from .conftest import curate, drawn_lines, main_screen, type_text, wait_for

SIZE = (80, 24)


def culture(folder: Path) -> Path:
    return imported(culture_copy(folder), doc_round(ARAB, whole=True))


def footer_shows(pilot, action: str) -> bool:
    return any(a.binding.action == action and a.binding.show for a in pilot.app.screen.active_bindings.values())


async def test_the_new_item_forms_checks_stay_in_view_and_pgdn_scrolls_the_fields(tmp_path: Path) -> None:
    # a 3-option dataset's form (goal, three solutions, gold) fits at 80x24; a shorter terminal scrolls it
    short = (SIZE[0], 16)
    async with curate(culture(tmp_path), annotator="amina", size=short) as pilot:
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, NewItemDialog))
        await type_text(pilot, "Boil water")
        await pilot.pause()
        dialog = pilot.app.screen
        checks = dialog.query_one("#new-item-checks", Static)
        assert "write at least solutions 1 and 2" in str(checks.render())
        assert 0 <= checks.region.y and checks.region.bottom <= short[1] and checks.region.height >= 1  # on screen
        fields = dialog.query_one("#new-item-fields", VerticalScroll)
        assert fields.max_scroll_y > 0  # 80x16 cannot show every field at once …
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: fields.scroll_y > 0)  # … PgDn reaches the ones below
        gold = dialog.query_one("#new-gold")
        assert fields.region.y <= gold.region.y < fields.region.bottom
        assert checks.region.bottom <= short[1]  # the checks stayed where they were
        await pilot.press("pageup")
        await wait_for(pilot, lambda: fields.scroll_y == 0)


async def test_the_title_wraps_your_vote_and_the_stage_instead_of_cutting_them(tmp_path: Path) -> None:
    dataset = culture(tmp_path)
    project = Project.open(dataset, annotator="amina")
    mine = project.items[8].id
    project.vote(mine, "0")
    project.workspace.close()  # type: ignore[union-attr]
    async with curate(dataset, annotator="amina", size=SIZE) as pilot:
        screen = main_screen(pilot)
        await pilot.press("escape")
        await open_item(pilot, mine)
        title = screen.item_view.title_line
        drawn = " ".join(drawn_lines(title).split())
        shown = screen.session.ballots.shown_choice(mine, "0")  # solution 1 of the file, as her order numbers it
        assert "solutions in your own order" in drawn and f"✓ you voted {shown}" in drawn  # nothing cut
        assert title.size.height >= 2


async def test_ids_written_in_the_workspace_keep_their_end_in_the_list(tmp_path: Path) -> None:
    assert shown_id("new-dccf57fe1965", 7) == "ne…1965" and shown_id("msa-001", 7) == "msa-001"
    dataset = culture(tmp_path)
    project = Project.open(dataset, annotator="amina")
    first, second = add_items(
        project, [Draft("Boil water", ("a kettle", "a fridge"), 0), Draft("Dry figs", ("sun", "rain"), 0)]
    )
    project.workspace.close()  # type: ignore[union-attr]
    async with curate(dataset, annotator="amina", size=SIZE) as pilot:
        await pilot.press("escape")
        await pilot.press("G")
        await pilot.pause()
        lines = drawn_lines(pilot.app.screen.query_one(ItemList))
        for written in (first, second):
            assert written[-4:] in lines  # each new id tells itself apart, whatever the list's width
        assert "new-…  " not in lines


async def test_a_blind_writer_sees_the_gold_she_typed_and_nobody_elses(tmp_path: Path) -> None:
    dataset = culture(tmp_path)
    (hers,) = add_items(Project.open(dataset, annotator="amina"), [Draft("Boil water", ("a kettle", "a fridge"), 0)])
    (his,) = add_items(Project.open(dataset, annotator="karim"), [Draft("Dry figs", ("sun", "rain"), 0)])
    async with curate(dataset, annotator="amina", size=SIZE) as pilot:
        screen = main_screen(pilot)
        session = screen.session
        assert not session.gold_hidden(session.project.item(hers))  # she typed it
        assert session.gold_hidden(session.project.item(his))  # blind, as before her vote
        assert session.gold_hidden(session.project.items[0])


async def test_a_validator_in_a_team_round_is_asked_before_saving(tmp_path: Path) -> None:
    dataset = culture(tmp_path)
    before = dataset.read_bytes()
    async with curate(dataset, annotator="amina", size=SIZE) as pilot:
        screen = main_screen(pilot)
        await pilot.press("1")  # a vote: recorded, the file untouched
        assert not footer_shows(pilot, "save") and footer_shows(pilot, "quit")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        assert "workspace merge refuses" in pilot.app.screen.message
        await pilot.press("enter")  # the first choice: don't save
        await wait_for(pilot, lambda: pilot.app.screen is screen)
        await pilot.pause()
        assert not screen.session.busy
    assert dataset.read_bytes() == before
    async with curate(dataset, annotator="hala", reviewer=True, size=SIZE) as pilot:
        assert footer_shows(pilot, "save")  # the lead saves, unasked


async def test_the_filter_dialog_lists_the_stages_before_the_models_and_takes_type_ahead(tmp_path: Path) -> None:
    from textual.widgets import OptionList

    async with curate(culture(tmp_path), annotator="amina", size=SIZE) as pilot:
        screen = main_screen(pilot)
        await pilot.press("F")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        dialog = pilot.app.screen
        keys = [key for key, _, _ in dialog.choices]
        assert keys.index("queue:stage-validation") < keys.index("queue:needs-votes") < keys.index("queue:model-wrong")
        options = dialog.query_one(OptionList)
        await type_text(pilot, "stage-v")
        await pilot.pause()
        assert options.get_option_at_index(options.highlighted or 0).id == "queue:stage-validation"
        await type_text(pilot, "m")  # "stage-vm" starts nothing: the "m" alone does
        await pilot.pause()
        assert options.get_option_at_index(options.highlighted or 0).id == "queue:model-wrong"
        await type_text(pilot, "x")  # nothing starts with "mx" or "x": the type-ahead starts afresh
        await type_text(pilot, "stage-d")
        await pilot.pause()
        assert options.get_option_at_index(options.highlighted or 0).id == "queue:stage-draft"
        await pilot.press("enter")
        await wait_for(pilot, lambda: pilot.app.screen is screen)
        assert screen.filtering.filters.queue == "stage-draft"


async def test_the_header_counts_a_validators_votes_over_her_assignment(tmp_path: Path) -> None:
    from piqa_tui.tui.widgets.status_header import StatusHeader

    dataset = culture(tmp_path)
    async with curate(dataset, annotator="amina", size=SIZE) as pilot:
        header = pilot.app.screen.query_one(StatusHeader)
        assert "✓0/2 assigned (0%)" in drawn_lines(header)  # amina validates two of the thirty items
        await pilot.press("1")
        await wait_for(pilot, lambda: "✓1/2 assigned (50%)" in drawn_lines(header))
    async with curate(dataset, annotator="hala", reviewer=True, size=SIZE) as pilot:
        assert "assigned" not in drawn_lines(pilot.app.screen.query_one(StatusHeader))  # the lead: every item


async def test_the_adjudication_title_wraps_at_80_columns(tmp_path: Path) -> None:
    """A's title (the counts, why the votes left cannot decide, the policy, who decides) is never cut."""
    from piqa_tui.tui.screens.adjudication import AdjudicationScreen

    async with curate(culture(tmp_path), annotator="hala", reviewer=True, size=SIZE) as pilot:
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AdjudicationScreen))
        await pilot.pause()
        title = pilot.app.screen.query_one("#adjudication-title", Static)
        drawn = " ".join(drawn_lines(title).split())
        assert "cannot decide (under-staffed 30)" in drawn and "you decide as hala" in drawn
        assert title.size.height >= 2
