"""The Arab-culture round end to end, as a lead and twelve writers run it: the round file of docs/rounds.md
(two writers per country, a representative reviewing, the lead; one validator per item from the item's
country, never its writer; shuffled options; the country question, decided by any-yes) imported through the
real command line, guidelines recorded, items sent to review and on to validation, assigned, voted on and
answered by the validators in the order each was shown, then progress, agreement, the release and its card.
Then the same round's key steps in the TUI for one validator.

The expected figures are counted here from the data file and the votes cast, not read back from the code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

from piqa_tui.core.round.order import ORDER_KIND, orders_in_force
from piqa_tui.core.round.questions import Question, answers_in_force, record_answer
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.workspace.log import Event
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.questions import AnswerDialog
from tests.conftest import ROOT, cast_in_order
from tests.test_questions import RELEVANT, doc_questions
from tests.test_rounds import ARAB, culture_copy, doc_round, round_file, writers
from tests.tui.conftest import (  # the TUI tests' autouse fixtures, for the Pilot test below
    _check_at_once,  # noqa: F401
    _codepoint_widths,  # noqa: F401
    curate,
    current_id,
    main_screen,
    wait_for,
)

ROUND = doc_round(ARAB, whole=True)
LEAD = "hala"
MAGHREB = ("Algeria", "Morocco", "Tunisia")
GUIDELINES = (
    "# Guidelines\n\nChoose the ending a person of the item's country would expect.\n\nاختر النهاية المتوقعة.\n"
)
LETTERS = "ABC"


def piqa(*args: object, expect: int = 0) -> str:
    """``python -m piqa_tui.cli.main ARGS`` in a process of its own; its stdout (the exit code checked)."""
    return piqa_run(*args, expect=expect).stdout


def piqa_run(*args: object, expect: int = 0) -> subprocess.CompletedProcess[str]:
    """``python -m piqa_tui.cli.main ARGS`` in a process of its own, its exit code checked."""
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == expect, f"piqa-tui {' '.join(map(str, args))}: {done.stderr}"
    assert "Traceback" not in done.stderr
    return done


def rows(dataset: Path) -> list[dict[str, str]]:
    header, *lines = [line.split("\t") for line in dataset.read_text(encoding="utf-8").splitlines()]
    return [dict(zip(header, line, strict=True)) for line in lines]


def country_question(project: Project) -> Question:
    """The round's country question, as the project's workspace records it."""
    declared = round_in_force(project.workspace)
    assert declared is not None
    question = declared.question(RELEVANT)
    assert question is not None
    return question


def order_events(project: Project) -> list[Event]:
    assert project.workspace is not None
    return list(project.workspace.events(kinds=[ORDER_KIND]))


def other_writer(row: dict[str, str]) -> str:
    """The writer of the item's country who did not write it: the one validator the rules leave."""
    (found,) = [name for name in writers(ROUND)[row["country"]] if name != row["author"]]
    return found


def prepared(folder: Path) -> Path:
    """The dataset with the round imported, guidelines recorded, every item reviewed and the assignment drawn:
    the representative passes the Maghreb items to validation first, the lead the rest later (a top-up)."""
    dataset = culture_copy(folder)
    done = piqa_run("round", dataset, "import", round_file(folder, ROUND), "--annotator", LEAD)
    assert "solutions shuffled per validator" in done.stdout
    assert "policy majority:2/3 needs 2 votes" in done.stderr  # one validator per item cannot decide under it
    (folder / "guidelines.md").write_text(GUIDELINES, encoding="utf-8")
    assert "version 1" in piqa("round", dataset, "guidelines", folder / "guidelines.md", "--annotator", LEAD)
    piqa("stage", dataset, "--from", "validation", "--to", "review", "--annotator", LEAD)
    assert json.loads(piqa("stage", dataset, "--json"))["stages"] == {
        "draft": 0,
        "review": 30,
        "validation": 0,
        "done": 0,
    }
    drawn = json.loads(piqa("assign", dataset, "--json", "--annotator", LEAD))
    assert drawn["assignment"] == {} and drawn["not_at_validation"] == 30  # nothing is ready yet
    for country in MAGHREB:
        piqa("stage", dataset, "--where", f"country={country}", "--to", "validation", "--annotator", "rep-maghreb")
    maghreb = {row["id"] for row in rows(dataset) if row["country"] in MAGHREB}
    out = piqa("assign", dataset, "--annotator", LEAD)
    assert f"{30 - len(maghreb)} items not at stage validation left out" in out
    assert set(json.loads(piqa("assign", dataset, "--json"))["assignment"]) == maghreb
    piqa("stage", dataset, "--from", "review", "--to", "validation", "--annotator", LEAD)
    out = piqa("assign", dataset, "--top-up", "--annotator", LEAD)
    assert f"kept {len(maghreb)}" in out and f"{30 - len(maghreb)} changes recorded" in out
    return dataset


def check_assignment(dataset: Path) -> dict[str, list[str]]:
    """Every item has one validator: the other writer of its country, never its author; returns the assignment."""
    assignment = json.loads(piqa("assign", dataset, "--json", "--top-up"))["assignment"]
    people = {p["name"]: p for p in tomllib.loads(ROUND)["annotator"]}
    for row in rows(dataset):
        assert assignment[row["id"]] == [other_writer(row)]
        (validator,) = assignment[row["id"]]
        assert validator != row["author"] and people[validator]["country"] == row["country"]
    return assignment


def shown_place(name: str, n: int) -> int:
    """The place (0-based, as shown) a validator picks on their n-th item: amina always the first, others vary."""
    return 0 if name == "amina" else n % 3


def validate(dataset: Path, assignment: dict[str, list[str]], skip: tuple[str, str]) -> dict[str, tuple[str, str]]:
    """Each validator votes for the solution at ``shown_place`` in their own order and answers the country question
    (yes on every third item by id); ``skip`` (validator, item) is left for later. Returns item → (text, answer)."""
    question = country_question(Project.open(dataset, create=False))
    by_validator: dict[str, list[str]] = {}
    for item_id, (name,) in sorted(assignment.items()):
        by_validator.setdefault(name, []).append(item_id)
    given = {}
    ids = sorted(assignment)
    for name, items in sorted(by_validator.items()):
        project = Project.open(dataset, annotator=name)
        for n, item_id in enumerate(items):
            if (name, item_id) == skip:
                continue
            given[item_id] = cast(
                project, item_id, shown_place(name, n), "yes" if ids.index(item_id) % 3 == 0 else "no"
            )
            record_answer(project, item_id, question, given[item_id][1])
    return given


def cast(project: Project, item_id: str, place: int, answer: str) -> tuple[str, str]:
    """The project's annotator votes for the solution shown at ``place``; the text it names, and ``answer``."""
    item = project.item(item_id)
    order = orders_in_force(project).of(project.annotator, item_id, len(item.solutions))
    assert order is not None and sorted(order) == [0, 1, 2]
    cast_in_order(project, item_id, str(order[place]), order)
    return item.solutions[order[place]], answer


def test_the_arab_culture_round_runs_end_to_end_through_the_command_line(tmp_path: Path) -> None:
    assert doc_questions() in ROUND  # the page's question is the round's
    dataset = prepared(tmp_path)
    assignment = check_assignment(dataset)
    table = rows(dataset)
    karim_last = max(row["id"] for row in table if other_writer(row) == "karim")
    piqa("votes", "policy", dataset, "unanimity:1", "--annotator", LEAD)  # one validator: their vote decides
    given = validate(dataset, assignment, skip=("karim", karim_last))

    progress = json.loads(piqa("progress", dataset, "--json"))
    assigned = Counter(other_writer(row) for row in table)  # counted from the file: each item, its other writer
    expected = {name: (n, n - (name == "karim")) for name, n in assigned.items()}
    found = {a["annotator"]: (a["assigned"], a["done"]) for a in progress["annotators"]}
    assert found == expected
    assert progress["items_still_needing"] == {"0": 29, "1": 1} and progress["still_needed"] == {karim_last: 1}
    by_country = Counter(row["country"] for row in table)
    karim_country = next(row["country"] for row in table if row["id"] == karim_last)
    assert {g["value"]: (g["validated"], g["validations_wanted"]) for g in progress["by"]["country"]} == {
        country: (n - (country == karim_country), n) for country, n in by_country.items()
    }
    karim = Project.open(dataset, annotator="karim")
    given[karim_last] = cast(karim, karim_last, 2, "yes")
    record_answer(karim, karim_last, country_question(karim), "yes")

    lead = Project.open(dataset, create=False)
    for item_id, (text, _) in given.items():  # every vote names the text shown at the place picked
        (name,) = assignment[item_id]
        assert lead.item(item_id).solutions[int(lead.state.votes[item_id][name].choice)] == text
    orders = {(e.annotator, e.item_id) for e in order_events(lead)}
    assert orders == {(names[0], item_id) for item_id, names in assignment.items()}  # each order recorded

    agree = json.loads(piqa("agree", dataset, "--json", "--resamples", "0"))
    (question,) = agree["questions"]
    assert question["question"] == RELEVANT and question["kind"] == "yes/no" and question["answers"] == 30
    assert question["items"] == 0  # one validator per item: no item has two answers to agree on
    places: dict[str, list[int]] = {}
    for name in assigned:
        places[name] = [0, 0, 0]
        mine = sorted(item_id for item_id, names in assignment.items() if names == [name])
        for n, item_id in enumerate(mine):
            places[name][2 if item_id == karim_last else shown_place(name, n)] += 1
    assert {p["annotator"]: p["counts"]["3"] for p in agree["position_preference"]} == places
    amina = next(p for p in agree["position_preference"] if p["annotator"] == "amina")
    assert amina["position"] == 1 and amina["share"] == 1.0

    release, readme = tmp_path / "release.tsv", tmp_path / "README.md"
    piqa("export", dataset, "--decided", "--to", release, "--card", readme)
    released = {row["id"]: row for row in rows(release)}
    any_yes = {item_id: "yes" if answer == "yes" else "no" for item_id, (_, answer) in given.items()}
    assert {i: row[RELEVANT] for i, row in released.items()} == any_yes
    assert {i: json.loads(row[f"{RELEVANT}_votes"]) for i, row in released.items()} == {
        i: [answer] for i, (_, answer) in given.items()
    }
    for item_id, (text, _) in given.items():  # the decided label is the text the validator chose
        row = released[item_id]
        assert row[f"option_{row['answer'].lower()}"] == text

    card = tmp_path / "card.md"
    piqa("card", dataset, "--to", card)
    text = card.read_text(encoding="utf-8")
    section = text.split("### Annotation round")[1].split("\n## ")[0]
    assert f"`{ARAB}`" in section and f"`{RELEVANT}`" in section and "any-yes" in section
    assert "guidelines recorded in the workspace, version 1" in section and "in an order of their own" in section
    assert text.split("### Annotation round")[1] == readme.read_text(encoding="utf-8").split("### Annotation round")[1]


async def test_a_validator_works_the_round_in_the_tui(tmp_path: Path) -> None:
    dataset = prepared(tmp_path)
    mine = sorted(row["id"] for row in rows(dataset) if other_writer(row) == "karim")
    async with curate(dataset, annotator="karim") as pilot:
        screen = main_screen(pilot)
        await wait_for(pilot, lambda: screen.filtering.filters.queue == "assigned")
        assert sorted(screen.project.items[pos].id for pos in screen.host.rows) == mine
        item_id = current_id(pilot)
        item = screen.project.item(item_id)
        order = orders_in_force(screen.project).of("karim", item_id, 3)
        assert order is not None
        shown = [b.text for b in screen.item_view.solution_blocks if b.display]
        assert shown == [item.solutions[i] for i in order]
        assert "your own order" in str(screen.item_view.title_line.content)
        await pilot.press("Q")  # the one question: its dialog at once
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AnswerDialog))
        await pilot.press("y")
        await wait_for(pilot, lambda: not isinstance(pilot.app.screen, AnswerDialog))
        await pilot.press("2")  # the second solution shown
        await wait_for(pilot, lambda: "karim" in screen.project.state.votes.get(item_id, {}))
        await wait_for(pilot, lambda: len(screen.host.rows) == len(mine) - 1)  # it left his queue
    lead = Project.open(dataset, create=False)
    assert item.solutions[int(lead.state.votes[item_id]["karim"].choice)] == shown[1]
    recorded = [e.new for e in order_events(lead) if e.item_id == item_id]
    assert recorded == [",".join(map(str, order))]
    assert answers_in_force(lead.workspace).of(RELEVANT, item_id) == {"karim": "yes"}


def test_an_item_past_validation_keeps_only_the_validator_who_voted(tmp_path: Path) -> None:
    dataset = culture_copy(tmp_path)
    piqa("round", dataset, "import", round_file(tmp_path, ROUND), "--annotator", LEAD)
    first = json.loads(piqa("assign", dataset, "--json", "--annotator", LEAD))["assignment"]
    voted, unvoted = sorted(first)[:2]
    validator = Project.open(dataset, annotator=first[voted][0])
    cast_in_order(validator, voted, "0", orders_in_force(validator).of(validator.annotator, voted, 3))
    piqa("stage", dataset, voted, unvoted, "--to", "done", "--annotator", LEAD)
    after = json.loads(piqa("assign", dataset, "--json", "--top-up", "--annotator", LEAD))
    assert after["assignment"][voted] == first[voted] and unvoted not in after["assignment"]
    assert after["released"] == 1 and after["not_at_validation"] == 2
    fresh = json.loads(piqa("assign", dataset, "--json", "--annotator", LEAD))  # a fresh draw, the same
    assert fresh["assignment"][voted] == first[voted] and len(fresh["assignment"]) == 29
