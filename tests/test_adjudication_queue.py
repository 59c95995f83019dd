"""Every undecided item reaches the lead: with two validators per item under majority 2 of 3, a 1–1 split with
nobody left to vote, an item only one validator can take, an unsure vote under unanimity and an adjudication
set aside by a later edit are all listed to adjudicate, with why, by core (``to_adjudicate``), ``agree`` and
``progress``; ``round import`` warns that the panel can tie; the lead settles them without voting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.core.round.adjudication_queue import Why, panel_warning, to_adjudicate
from piqa_tui.core.round.recorded import assignment_in_force
from piqa_tui.core.votes.decisions import decide, parse_policy, project_policy, set_project_policy
from piqa_tui.core.votes.policy import SKIP, Status
from piqa_tui.core.workspace.project import Project
from tests.conftest import copy_sample
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, panel_round, round_file

PAIRS = panel_round("tamil-pairs", 2, [("anbu", "validator"), ("devi", "validator"), ("meena", "lead")])
UNANIMOUS = panel_round(
    "tamil-four", 3, [("anbu", "validator"), ("devi", "validator"), ("meena", "lead"), ("kavin", "validator")]
)


def with_round(dataset: Path, text: str) -> tuple[int, str]:
    """Import the round ``text`` and assign it; the import's exit code and stderr."""
    code, _, err = cli("round", dataset, "import", round_file(dataset.parent, text), "--annotator", "meena")
    assert cli("assign", dataset, "--annotator", "meena")[0] in (0, 1)  # 1: some items cannot be fully staffed
    return code, err


def vote(dataset: Path, who: str, item_id: str, choice: str) -> None:
    project = Project.open(dataset, annotator=who)
    project.vote(item_id, choice)
    project.workspace.close()


@pytest.fixture
def tamil(tmp_path: Path) -> Path:
    return copy_sample("tamil.tsv", tmp_path)


def test_a_split_with_nobody_left_to_vote_goes_to_the_lead(tamil: Path) -> None:
    code, err = with_round(tamil, PAIRS)
    assert code == 0 and "1–1 split ends undecided" in err and "unanimity:2" in err  # round import warns
    split, agreed, waiting = "ta-001", "ta-002", "ta-003"
    vote(tamil, "anbu", split, "0")
    vote(tamil, "devi", split, "1")
    vote(tamil, "anbu", agreed, "0")
    vote(tamil, "devi", agreed, "0")
    vote(tamil, "anbu", waiting, "0")  # devi has still to vote: not stuck
    project = Project.open(tamil, annotator="meena")
    assert decide(project, split, project_policy(project)).status is Status.NEEDS_VOTES  # the policy waits
    found = to_adjudicate(project)
    assert found[split].why is Why.SPLIT and "split 1–1, no validator left to vote" in found[split].detail
    assert agreed not in found and waiting not in found
    code, out, _ = cli("agree", tamil, "--json")
    listed = json.loads(out)["to_adjudicate"]
    assert code == 0 and listed["by_reason"] == {"split": 1} and listed["items"][0]["id"] == split
    code, out, _ = cli("progress", tamil)
    assert code == 0 and "1 to adjudicate (split 1) by the lead" in out
    project.adjudicate(split, 1, "solution 2 is what a Tamil cook does")  # the lead decides, never votes
    assert split not in to_adjudicate(project) and "meena" not in project.state.votes.get(split, {})


def test_items_only_one_validator_can_take_are_under_staffed(tmp_path: Path) -> None:
    dataset = culture_copy(tmp_path)
    code, err = with_round(dataset, doc_round(ARAB).replace("validators_per_item = 1", "validators_per_item = 2"))
    assert code == 0 and "waits for 3 votes" in err
    project = Project.open(dataset, annotator="hala", create=False)
    item = project.items[0]
    (validator,) = assignment_in_force(project.workspace).items[item.id]  # the other writer of its country
    found = to_adjudicate(project)
    assert found[item.id].why is Why.UNDERSTAFFED
    assert found[item.id].detail == "1 validator can take it, majority:2/3 needs 2"
    assert len(found) == len(project.items)  # every item: one writer of its country is left out as its author
    vote(dataset, validator, item.id, "0")
    assert to_adjudicate(Project.open(dataset, create=False))[item.id].why is Why.UNDERSTAFFED


def test_an_unsure_vote_under_unanimity_goes_to_the_lead(tamil: Path) -> None:
    with_round(tamil, UNANIMOUS)
    project = Project.open(tamil, annotator="meena")
    set_project_policy(project, parse_policy("unanimity:3"))
    assert panel_warning(project_policy(project), 3) is None  # three validators, unanimity of three: it fits
    vote(tamil, "anbu", "ta-001", "0")
    vote(tamil, "devi", "ta-001", SKIP)
    found = to_adjudicate(Project.open(tamil, create=False))
    assert found["ta-001"].why is Why.UNSURE and found["ta-001"].detail.startswith("1 unsure, 1 for a solution")
    assert "ta-002" not in found  # nobody voted yet: three votes can still come


def test_an_adjudication_set_aside_by_an_edit_goes_back_to_the_lead(tamil: Path) -> None:
    project = Project.open(tamil, annotator="meena")
    set_project_policy(project, parse_policy("unanimity:2"))
    vote(tamil, "anbu", "ta-001", "0")
    vote(tamil, "devi", "ta-001", "1")
    project.refresh()
    assert to_adjudicate(project)["ta-001"].why is Why.SPLIT  # no round: the policy's own disagreement
    project.adjudicate("ta-001", 0, "the first is the custom")
    assert "ta-001" not in to_adjudicate(project)
    project.edit("ta-001", {"solution0": project.item("ta-001").solutions[0] + " இரவு"}, stale_ok=["anbu"])
    assert decide(project, "ta-001", project_policy(project)).status is Status.NEEDS_VOTES  # devi's vote alone
    found = to_adjudicate(project)
    assert found["ta-001"].why is Why.SET_ASIDE and "adjudicate anew" in found["ta-001"].detail


def test_the_panel_warning_names_a_policy_that_fits() -> None:
    majority = parse_policy("majority:2/3")
    assert "unanimity:2" in (panel_warning(majority, 2) or "")
    assert "unanimity:1" in (panel_warning(majority, 1) or "") and "needs 2 votes" in (panel_warning(majority, 1) or "")
    assert panel_warning(majority, 3) is None and panel_warning(parse_policy("unanimity:2"), 2) is None
    assert "majority:3/4" in (panel_warning(parse_policy("majority:3/5"), 4) or "")
