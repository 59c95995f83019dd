"""Assigned items that leave validation leave the validator's queue and the pending counts, and come back.

The Arab-culture round of docs/rounds.md, assigned; the validators vote in their own Project and the lead moves
items between stages in another one on the same workspace file, as two people on two machines would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from textual.pilot import Pilot

from piqa_tui.core.round.recorded import assignment_in_force
from piqa_tui.core.round.stages import set_stage, to_validate
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.screens.progress import ProgressScreen, measured, progress_view
from piqa_tui.tui.state.listing import Filters, filtered_positions
from piqa_tui.tui.state.session import OpenRequest, Session
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported
from tests.tui.conftest import (  # the TUI tests' autouse fixtures, for the Pilot tests below
    _check_at_once,  # noqa: F401
    _codepoint_widths,  # noqa: F401
    curate,
    main_screen,
    wait_for,
)


@pytest.fixture
def culture(tmp_path: Path) -> Path:
    return imported(culture_copy(tmp_path), doc_round(ARAB))


def items_of(dataset: Path, name: str) -> list[str]:
    return assignment_in_force(Project.open(dataset, create=False).workspace).of(name)


def queue(session: Session) -> list[str]:
    """The ids in the session's ``assigned`` queue, as the TUI lists them."""
    session.project.refresh()
    return [session.project.items[pos].id for pos in filtered_positions(session, Filters(queue="assigned"))]


def progress(dataset: Path) -> dict[str, object]:
    code, out, err = cli("progress", dataset, "--json")
    assert code == 0, err
    return json.loads(out)


def row(found: dict[str, object], name: str) -> dict[str, object]:
    return next(a for a in found["annotators"] if a["annotator"] == name)  # type: ignore[union-attr,index]


def test_an_item_sent_back_to_review_leaves_the_queue_and_returns_with_validation(culture: Path) -> None:
    mine = items_of(culture, "karim")
    assert len(mine) == 3  # as docs/rounds.md draws it
    karim = Session.open(OpenRequest(culture, annotator="karim"))
    lead = Project.open(culture, annotator="hala")
    assert queue(karim) == mine and all(to_validate(karim.project, i) for i in mine)
    assert set_stage(lead, [mine[1]], "review") == 1  # another person, another Project
    assert queue(karim) == [mine[0], mine[2]]
    assert not to_validate(karim.project, mine[1]) and to_validate(karim.project, mine[0])
    set_stage(lead, [mine[1]], "draft")
    assert mine[1] not in queue(karim)
    set_stage(lead, [mine[1]], "validation")
    assert queue(karim) == mine
    set_stage(lead, [mine[2]], "done")  # closed by the lead: nothing more to vote on
    assert queue(karim) == [mine[0], mine[1]]


def test_progress_counts_held_back_items_apart_and_keeps_their_votes(culture: Path) -> None:
    karim_items, amina_items = items_of(culture, "karim"), items_of(culture, "amina")
    assert (len(karim_items), len(amina_items)) == (3, 2)
    karim = Project.open(culture, annotator="karim")
    amina = Project.open(culture, annotator="amina")
    karim.vote(karim_items[0], "0")
    amina.vote(amina_items[0], "1")
    lead = Project.open(culture, annotator="hala")
    set_stage(lead, [karim_items[0]], "done")  # voted, then closed: finished work, still done
    set_stage(lead, [karim_items[1]], "review")  # not voted, being rewritten
    set_stage(lead, [amina_items[0]], "review")  # voted, then sent back: neither pending nor done
    found = progress(culture)
    # By hand: karim 3 assigned = 1 done + 1 held (review) + 1 remaining; amina 2 = 0 done + 1 held + 1 remaining.
    k = row(found, "karim")
    assert (k["assigned"], k["done"], k["held"], k["held_by_stage"], k["remaining"]) == (3, 1, 1, {"review": 1}, 1)
    a = row(found, "amina")
    assert (a["assigned"], a["done"], a["held"], a["held_by_stage"], a["remaining"]) == (2, 0, 1, {"review": 1}, 1)
    assert all(r["held"] == 0 for r in found["annotators"] if r["annotator"] not in ("karim", "amina"))
    assert found["items_held_back"] == {"review": 2}
    # The votes stay recorded and count as validations, as they did: both voted items are validated.
    assert karim_items[0] not in found["still_needed"] and amina_items[0] not in found["still_needed"]
    assert found["items_still_needing"] == {"0": 2, "1": found["items"] - 2}
    code, text, _ = cli("progress", culture)
    assert code == 0
    header = next(line for line in text.splitlines() if line.startswith("annotator"))
    assert (
        header.split()
        == "annotator assigned done held back remaining decided stuck items/h median s/item to finish".split()
    )
    assert next(line for line in text.splitlines() if line.startswith("karim ")).split()[1:5] == ["3", "1", "1", "1"]
    assert (
        "held back (assigned, not at validation; not pending, not done): amina 1 in review; karim 1 in review" in text
    )
    assert "items held back before validation — 2 in review" in text
    set_stage(lead, [karim_items[1], amina_items[0]], "validation")  # back: amina's vote counts as done again
    found = progress(culture)
    assert (row(found, "amina")["done"], row(found, "amina")["held"], row(found, "amina")["remaining"]) == (1, 0, 1)
    assert (row(found, "karim")["done"], row(found, "karim")["remaining"]) == (1, 2)
    assert found["items_held_back"] == {}


def test_without_stages_progress_reads_as_before(culture: Path) -> None:
    karim = Project.open(culture, annotator="karim")
    karim.vote(items_of(culture, "karim")[0], "0")
    found = progress(culture)
    assert row(found, "karim")["done"] == 1 and row(found, "karim")["remaining"] == 2
    assert all(r["held"] == 0 and r["held_by_stage"] == {} for r in found["annotators"])
    assert found["items_held_back"] == {}
    code, text, _ = cli("progress", culture)
    assert code == 0 and "held" not in text
    header = next(line for line in text.splitlines() if line.startswith("annotator"))
    assert header.split() == "annotator assigned done remaining decided stuck items/h median s/item to finish".split()


# ------------------------------------------------------------------------------------------------ the TUI


def shown(pilot: Pilot) -> list[str]:
    screen = main_screen(pilot)
    return [screen.project.items[pos].id for pos in screen.host.rows]


async def test_the_tui_queue_follows_a_stage_change_made_in_another_process(culture: Path) -> None:
    mine = items_of(culture, "karim")
    lead = Project.open(culture, annotator="hala")
    async with curate(culture, annotator="karim") as pilot:
        screen = main_screen(pilot)
        await wait_for(pilot, lambda: screen.filtering.filters.queue == "assigned")
        assert sorted(shown(pilot)) == mine
        set_stage(lead, [mine[1]], "review")
        pilot.app.poll()  # what the app's timer does: apply what other processes recorded
        await wait_for(pilot, lambda: mine[1] not in shown(pilot))
        assert sorted(shown(pilot)) == [mine[0], mine[2]] and screen.filtering.filters.queue == "assigned"
        set_stage(lead, [mine[1]], "validation")
        pilot.app.poll()
        await wait_for(pilot, lambda: sorted(shown(pilot)) == mine)


def rendered(body: object, width: int = 160) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(body)
    return console.export_text()


async def test_the_progress_screen_counts_an_item_sent_back_as_held(culture: Path) -> None:
    mine = items_of(culture, "karim")
    lead = Project.open(culture, annotator="hala")
    async with curate(culture, annotator="karim", size=(150, 40)) as pilot:
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ProgressScreen) and pilot.app.screen.counted)
        screen = pilot.app.screen
        assert isinstance(screen, ProgressScreen) and screen.progress is not None
        assert "held" not in rendered(screen.query_one("#progress-body").content)
        counted = screen.counted
        set_stage(lead, [mine[0]], "review")
        pilot.app.poll()
        await wait_for(pilot, lambda: screen.counted > counted)
        text = rendered(screen.query_one("#progress-body").content)
        assert "held back" in text.splitlines()[0]
        karim = next(line for line in text.splitlines() if line.startswith("karim "))
        assert karim.split()[1:6] == ["0", "/", "3", "1", "2"]  # done / assigned, held back, remaining
        assert (
            "Held back: 1 in review; an item comes back to your assigned queue when it returns to validation." in text
        )


def test_a_reviewer_sees_who_has_items_held_back(culture: Path) -> None:
    mine = items_of(culture, "karim")
    set_stage(Project.open(culture, annotator="hala"), [mine[0]], "review")
    session = Session.open(OpenRequest(culture, annotator="hala"), reviewer=True)
    _, found = measured(session)
    assert found is not None
    text = rendered(progress_view(session, found))
    assert "held back (assigned, not at validation; not pending, not done): karim 1 in review" in text
    assert "items held back before validation — 1 in review" in text
