"""Shuffled validation in core: each validator's own order of an item's solutions, recorded with the first vote
cast in it, the vote on the text shown, and position preference per annotator against chance.

The round is the Arab-culture worked example of docs/rounds.md (three solutions per item) with ``shuffle = true``
added; the p-values are checked against scipy's exact binomial test and statsmodels' Holm adjustment.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from piqa_tui.core.round.declaration import Round, RoundError, parse_round
from piqa_tui.core.round.order import (
    ORDER_KIND,
    derived_order,
    orders_in_force,
    parse_order,
)
from piqa_tui.core.round.positions import position_preference, shown_positions
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.workspace.project import Project
from tests.conftest import cast_in_order
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported, round_file

SHUFFLED = "shuffle = true\n" + doc_round(ARAB)


@pytest.fixture
def shuffled(tmp_path: Path) -> Path:
    return imported(culture_copy(tmp_path), SHUFFLED)


def as_annotator(dataset: Path, name: str) -> Project:
    return Project.open(dataset, annotator=name)


def test_the_order_is_sha256_of_seed_annotator_and_item_the_same_every_time() -> None:
    def by_hand(seed: int, who: str, item: str, n: int) -> tuple[int, ...]:
        spelled = [json.dumps([seed, who, item, i], separators=(",", ":")) for i in range(n)]
        keys = [hashlib.sha256(s.encode()).hexdigest() for s in spelled]
        return tuple(sorted(range(n), key=keys.__getitem__))

    for item in ("msa-001", "msa-002", "dz-017"):
        assert derived_order(2026, "amina", item, 3) == by_hand(2026, "amina", item, 3)
        assert derived_order(2026, "amina", item, 3) == derived_order(2026, "amina", item, 3)
    orders = {derived_order(2026, "amina", f"msa-{n:03d}", 3) for n in range(1, 31)}
    assert len(orders) == 6  # every order of three solutions turns up over thirty items


def test_orders_are_stable_per_annotator_and_item_and_differ_between_annotators(shuffled: Path) -> None:
    amina, karim = as_annotator(shuffled, "amina"), as_annotator(shuffled, "karim")
    items = amina.items
    mine = [orders_in_force(amina).of("amina", item.id, 3) for item in items]
    assert all(order is not None and sorted(order) == [0, 1, 2] for order in mine)
    assert mine == [orders_in_force(as_annotator(shuffled, "amina")).of("amina", i.id, 3) for i in items]
    theirs = [orders_in_force(karim).of("karim", item.id, 3) for item in items]
    assert sum(a != b for a, b in zip(mine, theirs, strict=True)) >= len(items) // 2


def test_two_validators_pressing_1_vote_for_the_texts_they_each_saw_and_the_order_is_recorded(shuffled: Path) -> None:
    amina, karim = as_annotator(shuffled, "amina"), as_annotator(shuffled, "karim")
    item = next(
        i
        for i in amina.items
        if orders_in_force(amina).of("amina", i.id, 3)[0] != orders_in_force(karim).of("karim", i.id, 3)[0]
    )
    seen = {}
    for project in (amina, karim):
        order = orders_in_force(project).of(project.annotator, item.id, 3)
        seen[project.annotator] = item.solutions[order[0]]
        cast_in_order(project, item.id, str(order[0]), order)  # the key 1: the first solution shown
    project = as_annotator(shuffled, "hala")
    votes = project.state.votes[item.id]
    for name in ("amina", "karim"):
        assert item.solutions[int(votes[name].choice)] == seen[name]
    assert seen["amina"] != seen["karim"]
    recorded = [e for e in project.workspace.events(kinds=[ORDER_KIND]) if e.item_id == item.id]
    assert sorted(e.annotator for e in recorded) == ["amina", "karim"]
    assert all(parse_order(e.new, 3) == orders_in_force(project).of(e.annotator, item.id, 3) for e in recorded)
    assert shown_positions(project)[("amina", item.id)] == (0, 3)
    cast_in_order(
        amina,
        item.id,
        str(orders_in_force(amina).of("amina", item.id, 3)[1]),
        orders_in_force(amina).of("amina", item.id, 3),
    )
    assert len(amina.workspace.events(kinds=[ORDER_KIND])) == 2  # a second vote in the same order records none


def test_a_shuffled_vote_and_its_order_are_one_action_and_one_undo_step(shuffled: Path) -> None:
    """One key press, one transaction: the order is recorded with the vote, and an undo takes back the vote alone
    (what was shown stays a fact of the log); a second undo has nothing of that key press left to undo."""
    amina = as_annotator(shuffled, "amina")
    item = amina.items[0]
    order = orders_in_force(amina).of("amina", item.id, 3)
    cast_in_order(amina, item.id, str(order[0]), order)
    vote = [e for e in amina.workspace.events(kinds=["vote"]) if e.item_id == item.id]
    shown = [e for e in amina.workspace.events(kinds=[ORDER_KIND]) if e.item_id == item.id]
    assert len(vote) == 1 and len(shown) == 1 and vote[0].action == shown[0].action == vote[0].seq
    assert vote[0].time == shown[0].time
    assert amina.undo() == item.id
    assert "amina" not in amina.state.votes.get(item.id, {}) or amina.state.votes[item.id]["amina"].choice == ""
    assert orders_in_force(amina).of("amina", item.id, 3) == order  # the order it was shown in stays recorded
    assert len(amina.workspace.events(kinds=[ORDER_KIND])) == 1
    assert amina.undo() is None  # the vote and its order were one step
    assert amina.redo() == item.id
    assert item.solutions[int(amina.state.votes[item.id]["amina"].choice)] == item.solutions[order[0]]


def test_a_recorded_order_holds_when_the_round_changes_its_seed(shuffled: Path) -> None:
    amina = as_annotator(shuffled, "amina")
    first, second = amina.items[0], amina.items[1]
    order = orders_in_force(amina).of("amina", first.id, 3)
    cast_in_order(amina, first.id, str(order[2]), order)
    untouched = orders_in_force(amina).of("amina", second.id, 3)
    reseeded = SHUFFLED.replace("seed = 2026", "seed = 7")
    code, _, err = cli("round", shuffled, "import", round_file(shuffled.parent, reseeded, "again.toml"))
    assert code == 0, err
    again = as_annotator(shuffled, "amina")
    assert orders_in_force(again).of("amina", first.id, 3) == order  # voted on: the order stays
    assert orders_in_force(again).of("amina", second.id, 3) == derived_order(7, "amina", second.id, 3)
    assert untouched == derived_order(2026, "amina", second.id, 3)


def test_without_shuffle_every_order_is_the_files_and_nothing_more_is_recorded(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    amina = as_annotator(dataset, "amina")
    assert all(orders_in_force(amina).of("amina", item.id, 3) is None for item in amina.items)
    cast_in_order(amina, amina.items[0].id, "1", None)
    assert amina.workspace.events(kinds=[ORDER_KIND]) == []
    assert shown_positions(amina)[("amina", amina.items[0].id)] == (1, 3)
    assert "shuffle" not in round_in_force(amina.workspace).canonical()  # an old round keeps its recorded text


def test_the_round_file_key_is_checked_and_roles_decide_who_sees_a_shuffle() -> None:
    declared = parse_round(SHUFFLED, "round.toml")
    assert declared.shuffle and Round.from_canonical(declared.canonical()).shuffle
    assert declared.shuffles_for("amina") and declared.shuffles_for("someone-not-named")
    assert not declared.shuffles_for("rep-maghreb") and not declared.shuffles_for("hala")  # reviewer, lead
    assert not parse_round(doc_round(ARAB), "round.toml").shuffle
    with pytest.raises(RoundError, match=r"round.toml:1: shuffle = 'yes' should be true or false"):
        parse_round('shuffle = "yes"\n' + doc_round(ARAB), "round.toml")


def test_position_preference_finds_the_annotator_who_always_takes_the_first_solution(shuffled: Path) -> None:
    amina, karim = as_annotator(shuffled, "amina"), as_annotator(shuffled, "karim")
    for n, item in enumerate(amina.items):
        for project, place in ((amina, 0), (karim, n % 3)):  # amina: always the first shown; karim: in turn
            order = orders_in_force(project).of(project.annotator, item.id, 3)
            cast_in_order(project, item.id, str(order[place]), order)
    found = {p.annotator: p for p in position_preference(as_annotator(shuffled, "hala"))}
    n = len(amina.items)
    first = found["amina"]
    assert (first.position, first.solutions, first.counts, first.share) == (0, 3, {3: (n, 0, 0)}, 1.0)
    raw = [binomtest(k, n, 1 / 3).pvalue for k in (n, 0, 0)]
    assert first.p_value == pytest.approx(multipletests(raw, method="holm")[1][0], rel=1e-9)
    assert first.preferred and first.p_value < 1e-10
    # the shuffle spread her preference over the file's solutions: it does not go into the votes
    chosen = [int(v["amina"].choice) for v in amina.state.votes.values() if "amina" in v]
    assert max(chosen.count(i) for i in range(3)) < n
    even = found["karim"]
    assert even.counts == {3: (n // 3, n // 3, n // 3)} and not even.preferred and even.p_value == 1.0
    assert "position 1 of 3 in 100%" in first.describe() and "a position preference" in first.describe()
    assert first.to_json()["position"] == 1 and first.to_json()["counts"] == {"3": [n, 0, 0]}


def test_position_preference_reaches_agree_json_and_text(shuffled: Path) -> None:
    amina = as_annotator(shuffled, "amina")
    for item in amina.items:
        order = orders_in_force(amina).of("amina", item.id, 3)
        cast_in_order(amina, item.id, str(order[0]), order)
    code, out, _ = cli("agree", shuffled, "--json", "--resamples", "0")
    assert code == 0
    (only,) = json.loads(out)["position_preference"]
    assert only["annotator"] == "amina" and only["preferred"] and only["position"] == 1
    code, out, _ = cli("agree", shuffled, "--resamples", "0")
    assert code == 0 and "position preference" in out and "amina: position 1 of 3" in out


def test_round_show_says_the_solutions_are_shuffled(shuffled: Path, tmp_path: Path) -> None:
    code, out, _ = cli("round", shuffled, "show")
    assert code == 0 and "solutions shuffled per validator" in out.splitlines()[0]
    folder = tmp_path / "plain"
    folder.mkdir()
    plain = imported(culture_copy(folder), doc_round(ARAB))
    code, out, _ = cli("round", plain, "show")
    assert code == 0 and "shuffled" not in out


def test_undo_takes_back_the_vote_and_keeps_the_order_it_was_shown_in(shuffled: Path) -> None:
    amina = as_annotator(shuffled, "amina")
    item = amina.items[0]
    order = orders_in_force(amina).of("amina", item.id, 3)
    cast_in_order(amina, item.id, str(order[0]), order)
    assert amina.undo() == item.id
    assert "amina" not in amina.state.votes.get(item.id, {}) or amina.state.votes[item.id]["amina"].choice == ""
    assert [e.new for e in amina.workspace.events(kinds=[ORDER_KIND])] == [",".join(map(str, order))]
    assert ("amina", item.id) not in shown_positions(amina)


def test_without_orders_the_last_vote_counts_and_an_undone_one_leaves_the_one_before(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    amina = as_annotator(dataset, "amina")
    first, second = amina.items[0], amina.items[1]
    before = shown_positions(amina).get(("amina", second.id))
    cast_in_order(amina, first.id, "2", None)
    cast_in_order(amina, first.id, "0", None)
    cast_in_order(amina, second.id, "1", None)
    assert shown_positions(amina)[("amina", second.id)] == (1, 3)
    amina.undo()
    shown = shown_positions(amina)
    assert shown[("amina", first.id)] == (0, 3)  # file order: the position is the index voted, the last vote counts
    assert shown.get(("amina", second.id)) == before


def test_imported_votes_without_orders_count_each_annotators_positions_as_recorded(tmp_path: Path) -> None:
    data = tmp_path / "pairs.tsv"
    rows = [f"p{i}\tHow to do {i}?\tone way {i}\tanother way {i}\t0" for i in range(6)]
    data.write_text("id\tprompt\tsolution0\tsolution1\tlabel\n" + "\n".join(rows) + "\n", encoding="utf-8")
    votes = tmp_path / "votes.tsv"
    picks = {"amina": "000001", "sara": "1s1110"}  # per item in order; s: unsure, no position
    lines = [
        f"p{i}\t{name}\t{'skip' if c == 's' else c}\t2026-11-20T09:00:0{i}Z"
        for name, row in picks.items()
        for i, c in enumerate(row)
    ]
    votes.write_text("item_id\tannotator\tchoice\ttime\n" + "\n".join(lines) + "\n", encoding="utf-8")
    assert cli("votes", "import", data, votes)[0] == 0
    found = {p.annotator: p.counts for p in position_preference(Project.open(data, annotator="lead"))}
    assert found == {"amina": {2: (5, 1)}, "sara": {2: (1, 4)}}
    project = Project.open(data, annotator="sara")
    project.vote("p0", "0")  # a second vote on p0: the last one counts
    project.vote("p2", "")  # and a withdrawal: no position
    expected = {"amina": {2: (5, 1)}, "sara": {2: (2, 2)}}
    assert {p.annotator: p.counts for p in position_preference(project)} == expected
    again = Project.open(data, annotator="lead", create=False)  # counted column-wise from the votes in force
    assert again.state.current_votes is not None and again.state.current_votes.events > len(again.state.current_votes)
    assert {p.annotator: p.counts for p in position_preference(again)} == expected
    counted: dict[str, list[int]] = {}
    for (name, _), (position, _) in shown_positions(again).items():  # the same from the votes one by one
        counted.setdefault(name, [0, 0])[position] += 1
    assert {name: {2: tuple(c)} for name, c in counted.items()} == expected


def test_a_vote_and_its_order_reaching_a_machine_in_either_order_count_the_same_position(
    shuffled: Path, tmp_path: Path
) -> None:
    """amina votes in her shuffled order on the laptop; the server gets the vote from her votes file (which
    carries no order) and the order later, with a merge, stamped with the laptop's clock, which is ahead: in the
    server's log the order follows the vote. The vote maps through the order recorded before it by time, so both
    machines count the position she was shown."""
    import shutil
    import sqlite3

    workspace = Path(f"{shuffled}.piqa.sqlite")
    with sqlite3.connect(workspace) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    shutil.copy(shuffled, laptop / shuffled.name)
    shutil.copy(workspace, laptop / workspace.name)
    mine = as_annotator(laptop / shuffled.name, "amina")
    for n in range(12):  # the laptop's clock moves ahead of the server's (notes travel in no votes file)
        mine.set_note(mine.items[n].id, f"checked {n}")
    item = next(i for i in mine.items if orders_in_force(mine).of("amina", i.id, 3)[0] != 0)
    order = orders_in_force(mine).of("amina", item.id, 3)
    cast_in_order(mine, item.id, str(order[0]), order)  # the first solution shown, not the file's first
    votes = tmp_path / "votes.tsv"
    code, _, err = cli("votes", "export", laptop / shuffled.name, votes)
    assert code == 0, err
    code, _, err = cli("votes", "import", shuffled, votes)
    assert code == 0, err
    code, _, err = cli("workspace", "merge", shuffled, laptop / workspace.name)
    assert code == 0, err
    on_server = as_annotator(shuffled, "hala")
    held = [e.kind for e in on_server.workspace.events(kinds=["vote", ORDER_KIND]) if e.item_id == item.id]
    assert held == ["vote", ORDER_KIND]  # in the server's log (canonical order) the order follows the vote
    found = [shown_positions(p)[("amina", item.id)] for p in (as_annotator(laptop / shuffled.name, "hala"), on_server)]
    assert found == [(0, 3), (0, 3)]


def test_shuffled_positions_counted_column_wise_equal_the_votes_one_by_one(shuffled: Path) -> None:
    """Position preference counts a shuffled round's votes in force column-wise, each through the order recorded
    before it by time; the same as taking the votes in force one by one (``shown_positions``), re-votes and a
    withdrawal included."""
    for name, picks in (("amina", "0120"), ("karim", "2201"), ("mona", "1112")):
        project = as_annotator(shuffled, name)
        for item, pick in zip(project.items[:4], picks, strict=True):
            order = orders_in_force(project).of(name, item.id, 3)
            cast_in_order(project, item.id, pick, order)
        order = orders_in_force(project).of(name, project.items[0].id, 3)
        cast_in_order(project, project.items[0].id, "2", order)  # a re-vote in the same order
    as_annotator(shuffled, "karim").vote(as_annotator(shuffled, "karim").items[1].id, "")  # a withdrawal
    fresh = Project.open(shuffled, annotator="hala", create=False)
    assert fresh.state.current_votes is not None
    column_wise = {p.annotator: p.counts for p in position_preference(fresh)}
    one_by_one: dict[str, list[int]] = {}
    for (name, _), (position, k) in shown_positions(fresh).items():
        one_by_one.setdefault(name, [0] * k)[position] += 1
    assert column_wise == {name: {3: tuple(c)} for name, c in one_by_one.items()}
    assert sum(sum(c[3]) for c in column_wise.values()) == 11  # 12 items voted, one withdrawn
