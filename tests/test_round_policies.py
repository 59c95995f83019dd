"""A whole round at two validators per item under each policy the TUI offers (``COMMON_POLICIES``): once every
validator has voted, every item is decided or listed to adjudicate with its reason — the same list in ``agree
--json`` and ``progress --json`` — and once the lead adjudicates the listed items (without voting), every item is
decided, she is no annotator in the agreement, and ``export --decided`` releases them all.

The votes follow five patterns over the Tamil sample's items (both on gold; a split; unsure and gold; both on
another solution; both unsure), so each reason a policy can give turns up; the reasons expected are written out
per policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.core.round.recorded import assignment_in_force
from piqa_tui.core.votes.decisions import decisions, parse_policy
from piqa_tui.core.votes.policy import SKIP, Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.state.ballots import COMMON_POLICIES
from tests.conftest import copy_sample
from tests.test_rounds import cli, panel_round, round_file

ROUND = panel_round(
    "tamil-pairs", 2, [("anbu", "validator"), ("devi", "validator"), ("kavin", "validator"), ("meena", "lead")]
)

GOLD, SPLIT, UNSURE_GOLD, AGAINST, BOTH_UNSURE = range(5)  # the vote patterns, by item position modulo 5
DECIDED = "decided"
# Per policy, what each pattern ends as once both validators voted: decided, or the reason it needs the lead.
# A policy that waits for more votes than the panel of two can give finds an item under-staffed, unless a split or
# an unsure vote says more about it.
EXPECTED: dict[str, dict[int, str]] = {
    "majority:2/3": {
        GOLD: DECIDED,
        SPLIT: "split",
        UNSURE_GOLD: "unsure",
        AGAINST: "votes against gold",
        BOTH_UNSURE: "unsure",
    },
    "unanimity:2": {
        GOLD: DECIDED,
        SPLIT: "split",
        UNSURE_GOLD: "unsure",
        AGAINST: "votes against gold",
        BOTH_UNSURE: "unsure",
    },
    **{
        spec: {
            GOLD: "under-staffed",
            SPLIT: "split",  # a split is said as such, whatever else is missing
            UNSURE_GOLD: "unsure",  # an unsure vote took one of the two places
            AGAINST: "under-staffed",
            BOTH_UNSURE: "unsure",
        }
        for spec in ("majority:3/4", "majority:3/5", "unanimity:3", "unanimity:4")
    },
}


def choice(pattern: int, first: bool, gold: int) -> str:
    other = str(1 - gold)
    return {
        GOLD: str(gold),
        SPLIT: str(gold) if first else other,
        UNSURE_GOLD: SKIP if first else str(gold),
        AGAINST: other,
        BOTH_UNSURE: SKIP,
    }[pattern]


def round_voted(folder: Path, spec: str) -> tuple[Path, dict[str, int]]:
    """The Tamil sample with the round imported and drawn under ``spec``, every validator's votes cast; returns
    the dataset and each item's pattern."""
    dataset = copy_sample("tamil.tsv", folder)
    assert cli("round", dataset, "import", round_file(folder, ROUND), "--annotator", "meena")[0] == 0
    assert cli("assign", dataset, "--annotator", "meena")[0] == 0
    assert cli("votes", "policy", dataset, spec)[0] == 0
    project = Project.open(dataset, annotator="meena")
    assignment = assignment_in_force(project.workspace)
    patterns = {item.id: n % 5 for n, item in enumerate(project.items)}
    people = {name: Project.open(dataset, annotator=name) for name in ("anbu", "devi", "kavin")}
    for item in project.items:
        first, second = assignment.items[item.id]
        for name, is_first in ((first, True), (second, False)):
            people[name].vote(item.id, choice(patterns[item.id], is_first, item.label or 0))
    for opened in (project, *people.values()):
        opened.workspace.close()  # type: ignore[union-attr]
    return dataset, patterns


def listed(dataset: Path, command: str) -> dict[str, dict[str, str]]:
    code, out, err = cli(command, dataset, "--json")
    assert code in (0, 1), err
    return {row["id"]: row for row in json.loads(out)["to_adjudicate"]["items"]}


@pytest.mark.parametrize("spec", [spec for spec, _ in COMMON_POLICIES])
def test_every_item_ends_decided_or_with_the_lead_under_each_policy(tmp_path: Path, spec: str) -> None:
    dataset, patterns = round_voted(tmp_path, spec)
    stuck = listed(dataset, "agree")
    assert listed(dataset, "progress") == stuck  # one answer, wherever the lead looks
    project = Project.open(dataset, create=False)
    found = decisions(project, parse_policy(spec))
    for item_id, pattern in patterns.items():
        decided = found[item_id].status in (Status.AGREED, Status.ADJUDICATED)
        ends = DECIDED if decided and item_id not in stuck else stuck.get(item_id, {}).get("why", "nowhere")
        assert ends == EXPECTED[spec][pattern], (item_id, pattern, ends, stuck.get(item_id))
        assert item_id not in stuck or stuck[item_id]["detail"]  # with what the votes are

    lead = Project.open(dataset, annotator="meena")  # the lead settles every listed item without voting
    for item_id in stuck:
        lead.adjudicate(item_id, lead.item(item_id).label or 0, "read against the guidelines")
    lead.workspace.close()  # type: ignore[union-attr]
    code, out, err = cli("agree", dataset, "--json")
    agreement = json.loads(out)
    assert agreement["to_adjudicate"]["count"] == 0
    assert agreement["status"]["agreed"] + agreement["status"]["adjudicated"] == len(patterns)
    assert "meena" not in agreement["annotators"]
    code, out, err = cli("export", dataset, "--to", tmp_path / "release.tsv", "--decided", "--json")
    assert code == 0, err
    assert len((tmp_path / "release.tsv").read_text(encoding="utf-8").splitlines()) == len(patterns) + 1
