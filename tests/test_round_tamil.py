"""The Tamil round end to end: four native annotators each vote on every item of samples/tamil.tsv
(validators_per_item 4) and an item is decided only when all four agree (policy unanimity:4).

The same votes, with the times they were cast, go into two copies of the sample, one with the round and one
without; the round only says who votes on what, so both releases decide the same labels — those counted here
from the votes. Progress figures are counted by hand from the votes written below.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from tests.conftest import copy_sample
from tests.test_round_arab_culture import piqa, rows
from tests.test_rounds import TAMIL, doc_round, round_file

PEOPLE = ("anbu", "devi", "kavin", "meena")
START = datetime(2026, 11, 26, 9, 0, 0)


def ballots(items: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    """Item id → annotator → solution (0-based). Item n: all four for gold (n % 4 == 0), all four for the other
    solution (1), devi apart from the three others (2), devi not yet (3)."""
    found: dict[str, dict[str, str]] = {}
    for n, item in enumerate(items):
        gold, other = item["label"], str(1 - int(item["label"]))
        votes = {name: [gold, other, gold, gold][n % 4] for name in PEOPLE}
        if n % 4 == 2:
            votes["devi"] = other
        if n % 4 == 3:
            del votes["devi"]
        found[item["id"]] = votes
    return found


def seconds_apart(name: str, k: int) -> int:
    """When ``name`` casts their k-th vote, in seconds after START: anbu every 60 s, devi every 90 s, kavin every
    30 s with a two-hour break after 16 votes, meena 40 s and 80 s in turn."""
    if name == "anbu":
        return 60 * k
    if name == "devi":
        return 90 * k
    if name == "kavin":
        return 30 * k + (7200 if k >= 16 else 0)
    return sum(40 if j % 2 == 0 else 80 for j in range(k))


def votes_file(folder: Path, cast: dict[str, dict[str, str]]) -> Path:
    lines = ["item_id\tannotator\tchoice\ttime"]
    for name in PEOPLE:
        mine = [(item_id, votes[name]) for item_id, votes in cast.items() if name in votes]
        for k, (item_id, choice) in enumerate(mine):
            when = (START + timedelta(seconds=seconds_apart(name, k))).strftime("%Y-%m-%dT%H:%M:%SZ")
            lines.append(f"{item_id}\t{name}\t{choice}\t{when}")
    path = folder / "votes.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def released(dataset: Path, votes: Path) -> list[dict[str, str]]:
    """The votes imported, the policy set to unanimity:4 and the release of the decided items, read back."""
    piqa("votes", "import", dataset, votes, "--annotator", "meena")
    piqa("votes", "policy", dataset, "unanimity:4", "--annotator", "meena")
    out = dataset.parent / "release.tsv"
    piqa("export", dataset, "--decided", "--only-decided", "--to", out)
    return rows(out)


def test_the_tamil_round_decides_what_the_policy_decides_without_it_and_progress_is_counted(tmp_path: Path) -> None:
    (tmp_path / "round").mkdir()
    (tmp_path / "plain").mkdir()
    dataset = copy_sample("tamil.tsv", tmp_path / "round")
    plain = copy_sample("tamil.tsv", tmp_path / "plain")
    items = rows(dataset)
    cast = ballots(items)
    votes = votes_file(tmp_path, cast)

    piqa("round", dataset, "import", round_file(tmp_path, doc_round(TAMIL, whole=True)), "--annotator", "meena")
    out = piqa("assign", dataset, "--annotator", "meena")
    assert "assigned 128 (item, validator) pairs over 32 items" in out
    assert "anbu 32, devi 32, kavin 32, meena 32" in out
    with_round, without = released(dataset, votes), released(plain, votes)

    unanimous = {i: v["anbu"] for i, v in cast.items() if len(v) == 4 and len(set(v.values())) == 1}
    assert len(unanimous) == 16
    assert {row["id"]: row["label"] for row in with_round} == unanimous
    assert with_round == without

    progress = json.loads(piqa("progress", dataset, "--json", "--by", "category"))
    figures = {a["annotator"]: a for a in progress["annotators"]}
    assert {name: (a["assigned"], a["done"], a["remaining"]) for name, a in figures.items()} == {
        "anbu": (32, 32, 0),
        "devi": (32, 24, 8),
        "kavin": (32, 32, 0),
        "meena": (32, 32, 0),
    }
    # anbu: 31 gaps of 60 s; devi: 23 of 90 s, 8 left; kavin: 30 of 30 s (the break left out);
    # meena: 16 of 40 s and 15 of 80 s, median 40, 3600 × 31 / 1840 per hour
    pace = {
        name: (a["median_seconds_per_item"], a["items_per_hour"], a["seconds_to_finish"]) for name, a in figures.items()
    }
    assert pace == {
        "anbu": (60.0, 60.0, 0.0),
        "devi": (90.0, 40.0, 720.0),
        "kavin": (30.0, 120.0, 0.0),
        "meena": (40.0, round(3600 * 31 / 1840, 1), 0.0),
    }
    waiting = {item["id"] for n, item in enumerate(items) if n % 4 == 3}
    assert progress["still_needed"] == dict.fromkeys(sorted(waiting), 1)
    assert progress["items_still_needing"] == {"0": 24, "1": 8}
    by_hand: dict[str, tuple[int, int]] = {}
    for n, item in enumerate(items):
        validated, wanted = by_hand.get(item["category"], (0, 0))
        by_hand[item["category"]] = (validated + (3 if n % 4 == 3 else 4), wanted + 4)
    assert {g["value"]: (g["validated"], g["validations_wanted"]) for g in progress["by"]["category"]} == by_hand
