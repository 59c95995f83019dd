"""A three-annotator round in the TUI: blind votes, a flag, a policy, an adjudication, then the numbers.

Three app runs with different ``--annotator`` names vote on one copy of the
Darija sample, each blind (gold and the others' votes hidden until they vote);
a reviewer sets the policy and adjudicates a disagreement on its screen. The
exported labels and ``agree --json`` are then checked against the votes as
planned here, and the κ values against the core's function, statsmodels and
scikit-learn on the same votes.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss
from textual.widgets import DataTable, OptionList

from piqa_tui.cli.main import main
from piqa_tui.core.text.bidi import BidiMode, layout
from piqa_tui.core.votes.agreement import fleiss_kappa
from piqa_tui.core.votes.decisions import parse_policy, set_project_policy
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui import app as app_module
from piqa_tui.tui.dialogs.flag import FlagDialog
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, TextPrompt
from piqa_tui.tui.screens.adjudication import AdjudicationScreen
from piqa_tui.tui.screens.agreement import AgreementScreen
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.state.listing import Filters
from piqa_tui.tui.widgets.item.label_line import LabelLine
from piqa_tui.tui.widgets.item.vote_panel import VotePanel
from tests.conftest import copy_sample

from .conftest import curate, current_id, main_screen, make_app, type_text, wait_for

# The round: each annotator's vote on the first six items (0-based choices, "skip" = unsure).
# Gold in the file: dz-001 1, dz-002 0, dz-003 0, dz-004 0, dz-005 1, dz-006 0.
PLAN: dict[str, dict[str, int | str]] = {
    "amina": {"dz-001": 1, "dz-002": 1, "dz-003": 0, "dz-004": 1, "dz-005": 1, "dz-006": 0},
    "karim": {"dz-001": 1, "dz-002": 1, "dz-003": 1, "dz-004": 1, "dz-005": "skip", "dz-006": 0},
    "selma": {"dz-001": 1, "dz-002": 1, "dz-003": 0, "dz-004": 0, "dz-005": 1, "dz-006": 0},
}
ADJUDICATED = ("dz-004", 1, "the bleach version is unsafe; karim and amina are right")


def key_for(choice: int | str) -> str:
    return "s" if choice == "skip" else str(int(choice) + 1)


def panel_text(pilot) -> str:
    return str(main_screen(pilot).item_view.query_one(VotePanel).content)


def gold_text(pilot) -> str:
    return str(main_screen(pilot).item_view.query_one(LabelLine).content)


def gold_marks(pilot) -> list[str]:
    return [str(block.border_subtitle) for block in main_screen(pilot).item_view.solution_blocks if block.display]


def answers_hidden(pilot, others: list[str]) -> bool:
    """Nothing on the item view gives away the gold label or the others' votes."""
    panel = panel_text(pilot)
    return (
        "hidden until you vote" in gold_text(pilot)
        and not any("gold" in mark for mark in gold_marks(pilot))
        and not any(name in panel for name in others)
    )


async def vote_round(path: Path, annotator: str, before: list[str]) -> None:
    """One annotator's run: blind on dz-001 until voting, then the plan by keys."""
    plan = PLAN[annotator]
    async with curate(path, annotator=annotator) as pilot:
        screen = main_screen(pilot)
        assert current_id(pilot) == "dz-001"
        assert answers_hidden(pilot, before)
        assert screen.session.gold_hidden(screen.current)
        for item_id, choice in plan.items():
            assert current_id(pilot) == item_id
            await pilot.press(key_for(choice))  # votes and moves on
        assert current_id(pilot) == "dz-007"
        assert answers_hidden(pilot, before)  # the next item is still blind
        await pilot.press("g")  # back to dz-001: voted, so everything shows
        assert "gold  2 (solution1)" in gold_text(pilot)
        assert gold_marks(pilot)[1] == "✓ gold"
        for other in before:
            assert f"{other} 2" in panel_text(pilot)
        assert "you 2" in panel_text(pilot)
        await pilot.press("q")


async def test_three_annotators_vote_blind_and_a_reviewer_adjudicates(
    darija: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await vote_round(darija, "amina", [])
    await vote_round(darija, "karim", ["amina"])

    # selma votes, changes her mind on dz-005 (withdraw, vote again) and flags dz-006.
    async with curate(darija, annotator="selma") as pilot:
        screen = main_screen(pilot)
        assert answers_hidden(pilot, ["amina", "karim"])
        await pilot.press("2", "2", "1", "1", "1")  # dz-005 gets 1 (solution 0) for now
        assert current_id(pilot) == "dz-006"
        await pilot.press("k", "backspace")
        assert current_id(pilot) == "dz-005"
        assert "dz-005" not in screen.project.state.votes or screen.project.state.votes["dz-005"]["selma"].choice == ""
        assert answers_hidden(pilot, ["amina", "karim"])  # withdrawn: blind again
        await pilot.press("2", "1")  # dz-005 → 2, dz-006 → 1
        await pilot.press("k", "f")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, FlagDialog))
        await pilot.press("2", "tab")  # culturally-wrong; then the note
        await type_text(pilot, "ماشي هكذا فالدزاير")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))
        assert screen.project.state.flags["dz-006"] == {"culturally-wrong": "ماشي هكذا فالدزاير"}
        await pilot.press("A")  # not a reviewer: no adjudication screen
        await pilot.pause()
        assert isinstance(pilot.app.screen, MainScreen)
        await pilot.press("q")

    # The reviewer: unanimity of 3 from the agreement screen, then the adjudication screen.
    async with curate(darija, annotator="lead", reviewer=True) as pilot:
        app = pilot.app
        assert "gold  2 (solution1)" in gold_text(pilot)  # reviewers see everything
        assert "amina 2" in panel_text(pilot) and "karim 2" in panel_text(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AgreementScreen) and app.screen.snapshot is not None)
        agreement = app.screen
        # majority 2 of 3 settles all six (dz-005: 2 of 2 cast); on dz-002 and dz-004 against the gold label
        assert agreement.snapshot.statuses["agreed"] == 4 and agreement.snapshot.statuses["votes-against-gold"] == 2
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceDialog))
        options = app.screen.query_one(OptionList)
        options.highlighted = options.get_option_index("unanimity:3")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: agreement.snapshot is not None and agreement.snapshot.policy == parse_policy("unanimity:3")
        )
        assert agreement.snapshot.statuses == {
            "needs-votes": 31,
            "agreed": 2,
            "disagreement": 2,
            "adjudicated": 0,
            "votes-against-gold": 1,
        }
        await pilot.press("escape")

        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, AdjudicationScreen))
        adjudication = app.screen
        table = adjudication.query_one(DataTable)
        assert adjudication.ids == ["dz-002", "dz-003", "dz-004"]  # dz-002: all three against the gold label
        votes_side_by_side = [str(cell) for cell in table.get_row("dz-004")]
        gold = adjudication.project.item("dz-004").label + 1
        assert votes_side_by_side[:4] == ["dz-004", str(gold), "selma", "amina, karim"]  # id, gold, then votes
        item_id, label, reason = ADJUDICATED
        await pilot.press("j", "j", str(label + 1))
        await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt))
        await type_text(pilot, reason)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is adjudication)
        assert adjudication.ids == ["dz-002", "dz-003"]  # it left the queue
        assert adjudication.project.state.adjudications[item_id][:3] == (str(label), reason, "lead")
        await pilot.press("escape")
        screen = main_screen(pilot)
        screen.filtering.set_filters(Filters(queue="adjudicated"))
        assert [screen.project.items[p].id for p in screen.item_list.rows] == [item_id]
        await pilot.press("q")

    # The exported labels follow the decisions; undecided items keep their gold.
    out = darija.parent / "decided.tsv"
    assert main(["export", str(darija), "--to", str(out), "--decided"]) == 0
    with out.open(encoding="utf-8", newline="") as fh:
        labels = {row["id"]: row["label"] for row in csv.DictReader(fh, delimiter="\t")}
    assert {i: labels[i] for i in PLAN["amina"]} == {
        "dz-001": "1",  # agreed 1 (gold 1)
        "dz-002": "1",  # agreed 1 — the file said 0
        "dz-003": "0",  # disagreement: gold kept
        "dz-004": "1",  # adjudicated 1 — the file said 0
        "dz-005": "1",  # 2 votes of 3: gold kept
        "dz-006": "0",  # agreed 0
    }
    assert len(labels) == 36

    # agree --json against the same votes, computed by the core, statsmodels and scikit-learn.
    capsys.readouterr()
    assert main(["agree", str(darija), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    final = {a: dict(v) for a, v in PLAN.items()}
    final["selma"]["dz-005"] = 1
    final["selma"]["dz-006"] = 0
    triples = [(i, a, c) for a, votes in final.items() for i, c in votes.items() if c != "skip"]
    assert found["fleiss_kappa"] == pytest.approx(fleiss_kappa(triples, 2).value)
    full = sorted({i for i, _, _ in triples if sum(1 for j, _, _ in triples if j == i) == 3})
    counts = np.array([[sum(1 for j, _, c in triples if j == i and c == k) for k in (0, 1)] for i in full])
    assert found["fleiss_kappa"] == pytest.approx(statsmodels_fleiss(counts))
    assert found["fleiss_items_used"] == 5 and found["fleiss_items_left_out"] == 1  # dz-005 has 2 votes
    both = sorted(set(final["amina"]) & {i for i, c in final["karim"].items() if c != "skip"})
    expected_cohen = cohen_kappa_score([final["amina"][i] for i in both], [final["karim"][i] for i in both])
    assert found["cohen_kappa"]["amina"]["karim"] == pytest.approx(expected_cohen)
    assert found["percent_unanimous"] == pytest.approx(100 * 4 / 6)  # dz-001, 002, 005 (1 and 1), 006
    assert found["policy"] == "unanimity:3"
    assert found["status"] == {
        "needs-votes": 31,
        "agreed": 2,
        "disagreement": 1,
        "adjudicated": 1,
        "votes-against-gold": 1,
    }
    assert found["gold_changes"] == [
        {"id": "dz-002", "gold": 0, "decided": 1},
        {"id": "dz-004", "gold": 0, "decided": 1},
    ]


async def test_votes_from_another_process_appear(darija: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "POLL_SECONDS", 0.05)
    async with curate(darija, annotator="amina", reviewer=True) as pilot:
        assert "karim" not in panel_text(pilot)
        other = Project.open(darija, annotator="karim")  # another process on the same workspace
        other.vote("dz-001", "0")
        other.workspace.close()
        await wait_for(pilot, lambda: "karim 1" in panel_text(pilot))
        assert main_screen(pilot).item_list.marks(0, main_screen(pilot).current)[-1] == " "  # 1 vote: needs votes


async def test_voting_in_the_unvoted_queue_moves_to_the_next_unvoted_item(darija: Path) -> None:
    async with curate(darija, annotator="amina") as pilot:
        screen = main_screen(pilot)
        await pilot.press("j", "j", "1")  # vote dz-003 from the full list
        screen.filtering.set_filters(Filters(queue="unvoted"))
        await pilot.press("g")
        assert current_id(pilot) == "dz-001"
        await pilot.press("1", "0")
        assert current_id(pilot) == "dz-004"  # dz-002 voted unsure, dz-003 already voted
        assert [screen.project.items[p].id for p in screen.item_list.rows][:2] == ["dz-004", "dz-005"]
        assert screen.project.state.votes["dz-002"]["amina"].choice == "skip"
        await pilot.press("3")  # a 2-solution item: refused, nothing recorded
        assert "amina" not in screen.project.state.votes.get("dz-004", {})
        await pilot.press("l")  # blind: the gold label can't be opened for editing either
        assert screen.editing is None


async def test_keys_for_voting_are_listed_in_the_help(darija: Path) -> None:
    async with curate(darija) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(pilot.app.screen._table())
        text = console.export_text()
        for action_id in ("vote_1", "vote_unsure", "withdraw_vote", "flag", "agreement", "adjudicate", "set_policy"):
            assert action_id in text


# ------------------------------------------------------------------- snapshots


def voted_copy(tmp_path: Path) -> Path:
    """The Darija sample with the round's votes, a note and a flag recorded (no app involved)."""
    path = copy_sample("darija-algerian.tsv", tmp_path)
    for annotator, votes in PLAN.items():
        project = Project.open(path, annotator=annotator)
        for item_id, choice in votes.items():
            project.vote(item_id, str(choice))
        if annotator == "selma":
            project.set_note("dz-004", "الجافيل خطر")
            project.set_flag("dz-003", "both-correct", note="depends on the tap")
            set_project_policy(project, parse_policy("unanimity:3"))
        project.workspace.close()
    return path


def reviewer_presses(*keys: str, ready):
    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen) and app.session.validation.complete)
        await pilot.press(*keys)
        await wait_for(pilot, lambda: ready(app.screen))
        await pilot.pause(0.1)
        app.clear_notifications()
        await pilot.pause()

    return run_before


def test_adjudication_screen(snap_compare, tmp_path: Path) -> None:
    app = make_app(voted_copy(tmp_path), annotator="lead", reviewer=True)
    run = reviewer_presses("A", "j", ready=lambda s: isinstance(s, AdjudicationScreen))
    assert snap_compare(app, terminal_size=(100, 34), run_before=run)


def test_agreement_screen(snap_compare, tmp_path: Path) -> None:
    app = make_app(voted_copy(tmp_path), annotator="lead", reviewer=True)
    run = reviewer_presses("a", ready=lambda s: isinstance(s, AgreementScreen) and s.snapshot is not None)
    assert snap_compare(app, terminal_size=(100, 40), run_before=run)


async def test_adjudication_screen_keys_reasons_and_gold(tmp_path: Path) -> None:
    """g/G jump, the gold column, the reasons of what was adjudicated, and ? showing this screen's keys only."""
    from piqa_tui.tui.screens.help import HelpScreen

    async with curate(voted_copy(tmp_path), annotator="lead", reviewer=True) as pilot:
        app = pilot.app
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, AdjudicationScreen))
        adjudication = app.screen
        table = adjudication.query_one(DataTable)
        first, last = adjudication.ids[0], adjudication.ids[-1]
        assert len(adjudication.ids) >= 2 and "dz-003" in adjudication.ids
        await pilot.press("G")
        assert adjudication.current_id == last
        await pilot.press("g")
        assert adjudication.current_id == first
        assert [str(c) for c in table.get_row(first)][1] == str(adjudication.project.item(first).label + 1)
        await pilot.press("2")
        await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt))
        await type_text(pilot, "الما بارد خير")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is adjudication)
        await pilot.press("d")  # show the adjudicated ones, with who and why
        row = [str(c) for c in table.get_row(first)]
        assert "2 by lead" in row and layout("الما بارد خير", 40, BidiMode.APP)[0].text in row
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        console = Console(file=io.StringIO(), width=200)
        console.print(app.screen._table())
        shown = console.file.getvalue()
        assert "adj_first" in shown and "Show or hide the items already adjudicated" in shown
        assert "next_item" not in shown and "duplicates" not in shown  # not the whole program's list


async def test_agree_markdown_is_the_report_the_tui_saves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`agree --markdown` prints what the agreement screen's w writes, title, policy and By-column headings included."""
    dataset = voted_copy(tmp_path)
    async with curate(dataset, annotator="lead", reviewer=True) as pilot:
        app = pilot.app
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AgreementScreen) and app.screen.snapshot is not None)
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, TextPrompt))
        await pilot.press("enter")  # the suggested name, beside the dataset
        saved = dataset.with_name(f"{dataset.stem}.agreement.md")
        await wait_for(pilot, saved.exists)
    capsys.readouterr()
    assert main(["agree", str(dataset), "--markdown"]) == 0
    printed = capsys.readouterr().out
    report = saved.read_text(encoding="utf-8")
    assert printed == report + "\n"  # print's own newline
    assert report.startswith(f"## Agreement: {dataset.name}") and "policy unanimity of 3" in report
    assert "### By category" in report
    assert "match the majority of the OTHER annotators' votes" in report  # "% with majority" defined
    assert main(["agree", str(dataset)]) == 0
    assert "OTHER annotators" in capsys.readouterr().out  # and under the terminal tables too
