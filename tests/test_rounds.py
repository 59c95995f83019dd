"""Annotation rounds: the round file, the assignment drawn from it, top-up, undo, and progress figures.

The two rounds are the worked examples of docs/rounds.md, read from that page, so the documentation is what
is tested: the Arab-culture round on a copy of the msa-culture sample with an ``author`` column (two writers
per country, each validating the other's items), and the Tamil round (4 of 4 validators on every item).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sqlite3
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.assignment import draw, eligible
from piqa_tui.core.round.declaration import Round, RoundError, parse_round
from piqa_tui.core.round.progress import round_progress, vote_pace
from piqa_tui.core.round.recorded import assignment_in_force, round_in_force
from piqa_tui.core.workspace import undo
from piqa_tui.core.workspace.log import Change
from piqa_tui.core.workspace.project import Project
from tests.conftest import ROOT, SAMPLES, copy_sample

DOCS = ROOT / "docs" / "rounds.md"


def doc_round(name: str, whole: bool = False) -> str:
    """The TOML block of docs/rounds.md whose ``name`` is ``name``: as written with ``whole``, else without its
    ``shuffle`` line and ``[[question]]`` tables (the round the assignment and queue tests start from)."""
    blocks = re.findall(r"```toml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    block = next(block for block in blocks if tomllib.loads(block).get("name") == name)
    if whole:
        return block
    plain = re.sub(r"(?m)^shuffle\s*=.*\n", "", block.split("[[question]]")[0])
    return plain.rstrip("\n") + "\n"


ARAB = "arab-culture-pilot"
TAMIL = "tamil-unanimous"


def writers(round_text: str) -> dict[str, list[str]]:
    """Country → its two writers, as the round file lists them."""
    found: dict[str, list[str]] = {}
    for person in tomllib.loads(round_text)["annotator"]:
        if "writer" in person["roles"]:
            found.setdefault(person["country"], []).append(person["name"])
    return found


def culture_copy(folder: Path, rows: slice = slice(None)) -> Path:
    """samples/msa-culture.tsv with an ``author`` column: a country's items alternate between its two writers.
    ``rows`` reorders or picks the data rows (the header stays first)."""
    by_country = writers(doc_round(ARAB))
    header, *lines = (SAMPLES / "msa-culture.tsv").read_text(encoding="utf-8").splitlines()
    seen: Counter[str] = Counter()
    out = []
    for line in lines:
        country = line.split("\t")[6]
        out.append(f"{line}\t{by_country[country][seen[country] % 2]}")
        seen[country] += 1
    path = folder / "culture.tsv"
    path.write_text("\n".join([f"{header}\tauthor", *out[rows]]) + "\n", encoding="utf-8")
    return path


def panel_round(name: str, per_item: int, people: list[tuple[str, str]], seed: int = 4) -> str:
    """A round file: ``per_item`` validators on each item, drawn with ``seed`` from ``people``, each a
    ``(name, role)`` in the order the file lists them."""
    head = f'name = "{name}"\nseed = {seed}\nvalidators_per_item = {per_item}\n'
    return head + "".join(f'\n[[annotator]]\nname = "{who}"\nroles = ["{role}"]\n' for who, role in people)


def round_file(folder: Path, text: str, name: str = "round.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def cli(*args: object) -> tuple[int, str, str]:
    """``piqa-tui ARGS`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def imported(dataset: Path, text: str) -> Path:
    """``dataset`` with the round ``text`` imported and assigned through the CLI."""
    code, _, err = cli("round", dataset, "import", round_file(dataset.parent, text), "--annotator", "hala")
    assert code == 0, err
    code, _, err = cli("assign", dataset, "--annotator", "hala")
    assert code == 0, err
    return dataset


def assignment_of(dataset: Path) -> dict[str, list[str]]:
    code, out, err = cli("assign", dataset, "--json")
    assert code == 0, err
    return json.loads(out)["assignment"]


@pytest.fixture
def culture(tmp_path: Path) -> Path:
    return imported(culture_copy(tmp_path), doc_round(ARAB))


@pytest.fixture
def tamil(tmp_path: Path) -> Path:
    return imported(copy_sample("tamil.tsv", tmp_path), doc_round(TAMIL))


# ------------------------------------------------------------------------------- the Arab-culture round


def test_each_writer_validates_the_other_writers_items_of_their_country(culture: Path) -> None:
    project = Project.open(culture, create=False)
    assignment = assignment_in_force(project.workspace)
    by_country = writers(doc_round(ARAB))
    for item in project.items:
        (validator,) = assignment.items[item.id]
        pair = by_country[item.meta["country"]]
        assert validator != item.meta["author"] and validator in pair
    assert set(assignment.items) == {item.id for item in project.items}


def test_the_round_is_recorded_once_and_shown(culture: Path) -> None:
    code, out, _ = cli("round", culture, "import", culture.parent / "round.toml")
    assert code == 0 and "nothing recorded" in out
    code, out, _ = cli("round", culture, "show", "--json")
    shown = json.loads(out)
    assert code == 0 and shown["name"] == ARAB and shown["routing"]["never"] == ["author"]
    assert shown["assigned"]["rep-maghreb"] == 0 and sum(shown["assigned"].values()) == 30
    rounds = Project.open(culture, create=False).workspace.events(kinds=["round"])
    assert len(rounds) == 1 and rounds[0].annotator == "hala"


def test_two_validators_per_item_cannot_be_staffed_and_each_item_says_why(tmp_path: Path) -> None:
    dataset = culture_copy(tmp_path)
    text = doc_round(ARAB).replace("validators_per_item = 1", "validators_per_item = 2")
    assert cli("round", dataset, "import", round_file(tmp_path, text))[0] == 0
    code, out, _ = cli("assign", dataset)
    lines = out.splitlines()
    assert code == 1 and "30 items cannot be fully staffed:" in lines
    jordan = next(line for line in lines if line.strip().startswith("msa-013"))
    assert "needs 2 validators, 1 can take it" in jordan and "2 with country Jordan" in jordan
    assert "add validators with country Jordan" in jordan


def test_a_writer_who_leaves_keeps_what_they_did_and_their_open_items_are_listed(culture: Path) -> None:
    project = Project.open(culture, annotator="karim")
    mine = assignment_in_force(project.workspace).of("karim")
    project.vote(mine[0], "0")
    text = doc_round(ARAB).replace('name = "karim"\n', 'name = "karim"\nactive = false\n')
    assert cli("round", culture, "import", round_file(culture.parent, text, "left.toml"))[0] == 0
    code, out, _ = cli("assign", culture, "--top-up")
    after = assignment_of_top_up(culture)
    assert after[mine[0]] == ["karim"]  # done: stays his
    assert code == 1 and f"{len(mine) - 1} items cannot be fully staffed" in out
    for item_id in mine[1:]:
        assert item_id not in after  # nobody else of Algeria may validate the other writer's items


def test_leaving_out_an_author_who_validates_nothing_says_so(tmp_path: Path) -> None:
    project = Project.open(culture_copy(tmp_path), create=False)
    declared = parse_round(doc_round(ARAB), "round.toml")
    item = next(item for item in project.items if item.meta["country"] == "Jordan")
    _, steps = eligible(declared, item)
    assert steps[-1] == f"1 once the author {item.meta['author']} is left out"
    ghost = Item(item.id, item.prompt, item.solutions, item.label, item.row, item.meta | {"author": "ghost"})
    names, steps = eligible(declared, ghost)
    assert len(names) == 2 and steps[-1] == "2 (the author ghost is not one of them)"  # nobody was left out


def test_a_dry_run_draw_names_the_items_it_would_change_and_records_nothing(tmp_path: Path) -> None:
    dataset = culture_copy(tmp_path)
    assert cli("round", dataset, "import", round_file(tmp_path, doc_round(ARAB)))[0] == 0
    code, out, _ = cli("assign", dataset, "--dry-run", "--json")
    shown = json.loads(out)
    ids = sorted(item.id for item in Project.open(dataset, create=False).items)
    assert code == 0 and shown["dry_run"] and shown["changes_recorded"] == 0 and shown["changes_drawn"] == 30
    assert shown["items_changed"] == ids
    assert not assignment_in_force(Project.open(dataset, create=False).workspace).items
    code, out, _ = cli("assign", dataset, "--dry-run")
    assert "would assign 30 (item, validator) pairs" in out and "none recorded (--dry-run)" in out
    code, out, _ = cli("assign", dataset)
    assert f"validators changed on 30 items: {', '.join(ids[:20])} and 10 more" in out
    assert len(assignment_in_force(Project.open(dataset, create=False).workspace).items) == 30


def assignment_of_top_up(dataset: Path) -> dict[str, list[str]]:
    _, out, _ = cli("assign", dataset, "--top-up", "--json")
    return json.loads(out)["assignment"]


# ------------------------------------------------------------------------------------- determinism


def test_same_round_items_and_seed_give_the_same_assignment_whatever_the_row_order(tmp_path: Path) -> None:
    (tmp_path / "forward").mkdir()
    (tmp_path / "backward").mkdir()
    forward = imported(culture_copy(tmp_path / "forward"), doc_round(ARAB))
    backward = imported(culture_copy(tmp_path / "backward", slice(None, None, -1)), doc_round(ARAB))
    assert assignment_of(forward) == assignment_of(backward)


def test_a_seed_draws_the_same_on_every_run_and_another_seed_draws_otherwise(tmp_path: Path) -> None:
    text = doc_round(TAMIL).replace("validators_per_item = 4", "validators_per_item = 2")
    project = Project.open(copy_sample("tamil.tsv", tmp_path), create=False)
    declared = parse_round(text, "tamil.toml")
    first, again, other = (draw(declared, project.items, seed).assignment for seed in (4, 4, 5))
    assert first == again and first != other
    reversed_items = draw(declared, list(reversed(project.items)), 4).assignment
    assert reversed_items == first


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_load_is_balanced_within_one_pool(tmp_path: Path, seed: int) -> None:
    text = doc_round(TAMIL).replace("validators_per_item = 4", "validators_per_item = 3")
    project = Project.open(copy_sample("tamil.tsv", tmp_path), create=False)
    found = draw(parse_round(text, "tamil.toml"), project.items, seed).assignment
    load = Counter(name for names in found.items.values() for name in names)
    assert sum(load.values()) == 3 * 32 and max(load.values()) - min(load.values()) <= 1
    assert all(len(set(names)) == 3 for names in found.items.values())


def test_no_validator_ever_gets_their_own_item(tmp_path: Path) -> None:
    """Three validators per country with k = 2: the author is never drawn, whatever the seed."""
    dataset = culture_copy(tmp_path)
    text = doc_round(ARAB).replace(
        'name = "rep-maghreb"\nroles = ["reviewer"]', 'name = "rep-maghreb"\nroles = ["validator"]'
    )
    text = text.replace("validators_per_item = 1", "validators_per_item = 2")
    declared = parse_round(text, "round.toml")
    items = Project.open(dataset, create=False).items
    for seed in range(5):
        found = draw(declared, items, seed)
        for item in items:
            names = found.assignment.items.get(item.id, ())
            assert item.meta["author"] not in names
        maghreb = [i for i in items if i.meta["country"] in ("Algeria", "Morocco", "Tunisia")]
        assert all(len(found.assignment.items[i.id]) == 2 for i in maghreb)


def test_validators_come_from_the_items_country_with_balanced_load_in_each(tmp_path: Path) -> None:
    """Without the author rule every writer of a country may take its items: per country, counts differ by ≤ 1."""
    text = doc_round(ARAB).replace('never = "author"', "")
    declared = parse_round(text, "round.toml")
    items = Project.open(culture_copy(tmp_path), create=False).items
    found = draw(declared, items).assignment
    country = {a.name: a.values("country") for a in declared.annotators}
    for item in items:
        (validator,) = found.items[item.id]
        assert item.meta["country"] in country[validator]
    for pair in writers(text).values():
        load = [len(found.of(name)) for name in pair]
        assert max(load) - min(load) <= 1


def test_the_recorded_round_reads_back_as_declared() -> None:
    declared = parse_round(doc_round(ARAB), "round.toml")
    again = Round.from_canonical(declared.canonical())
    assert again.canonical() == declared.canonical()
    assert again.annotator("rep-maghreb").values("country") == ("Algeria", "Morocco", "Tunisia")
    assert [a.name for a in again.validators] == sorted(a.name for a in declared.annotators if a.validates)


# ---------------------------------------------------------------------------------- the Tamil round


def test_the_tamil_round_puts_all_four_on_every_item(tamil: Path) -> None:
    assignment = assignment_of(tamil)
    assert len(assignment) == 32
    assert all(names == ["anbu", "devi", "kavin", "meena"] for names in assignment.values())


def test_top_up_after_one_leaves_moves_only_their_open_items(tmp_path: Path) -> None:
    dataset = copy_sample("tamil.tsv", tmp_path)
    text = doc_round(TAMIL).replace("validators_per_item = 4", "validators_per_item = 2")
    imported(dataset, text)
    before = assignment_of(dataset)
    devi = Project.open(dataset, annotator="devi")
    hers = sorted(item for item, names in before.items() if "devi" in names)
    for item_id in hers[:3]:
        devi.vote(item_id, "1")
    left = text.replace('name = "devi"\n', 'name = "devi"\nactive = false\n')
    assert cli("round", dataset, "import", round_file(tmp_path, left, "left.toml"))[0] == 0
    code, out, err = cli("assign", dataset, "--top-up", "--json")
    assert code == 0, err
    after = json.loads(out)["assignment"]
    for item_id, names in before.items():
        if item_id in hers[:3]:
            assert after[item_id] == names  # her finished items stay as they were
        elif item_id in hers:
            assert "devi" not in after[item_id] and set(names) - {"devi"} <= set(after[item_id])
        else:
            assert after[item_id] == names  # nobody else's items moved
        assert len(after[item_id]) == 2
    assert json.loads(out)["released"] == len(hers) - 3


# --------------------------------------------------------------------------------------------- undo

undoable = pytest.mark.skipif(
    not {"round", "assign"} <= set(undo.UNDOABLE),
    reason="the workspace's undo stack does not list the round kinds yet (core/workspace/undo.py UNDOABLE)",
)


@undoable
def test_undo_takes_back_an_assignment_then_the_round(tamil: Path) -> None:
    project = Project.open(tamil, annotator="hala")
    assert project.undo() is not None
    assert not assignment_in_force(project.workspace)
    assert round_in_force(project.workspace) is not None
    project.undo()
    assert round_in_force(project.workspace) is None
    project.redo()
    assert round_in_force(project.workspace) is not None


# ----------------------------------------------------------------------------------------- progress

VOTES = """item_id\tannotator\tchoice\ttime
ta-001\tanbu\t1\t2026-11-20T09:00:00Z
ta-002\tanbu\t0\t2026-11-20T09:01:00Z
ta-003\tanbu\tskip\t2026-11-20T09:03:00Z
ta-004\tanbu\t1\t2026-11-20T10:00:00Z
ta-005\tanbu\t0\t2026-11-20T10:00:30Z
ta-001\tdevi\t1\t2026-11-20T09:00:00Z
ta-001\tkavin\t1\t2026-11-20T09:00:00Z
ta-001\tmeena\t0\t2026-11-20T09:05:00Z
ta-002\tmeena\t0\t2026-11-20T09:06:30Z
"""


def test_votes_imported_without_times_give_no_pace(tamil: Path) -> None:
    votes = tamil.parent / "untimed.tsv"
    lines = [f"ta-{n:03d}\tanbu\t{n % 2}" for n in range(1, 21)]  # stamped with the import time, 1 µs apart
    votes.write_text("\n".join(["item_id\tannotator\tchoice", *lines]) + "\n", encoding="utf-8")
    assert cli("votes", "import", tamil, votes)[0] == 0
    code, out, err = cli("progress", tamil, "--json")
    anbu = json.loads(out)["annotators"][0]
    assert code == 0 and anbu["done"] == 20, err
    assert (anbu["items_per_hour"], anbu["median_seconds_per_item"], anbu["seconds_to_finish"]) == (None, None, None)
    code, out, err = cli("progress", tamil)
    assert code == 0 and "e+" not in out and "000000" not in out, out  # no pace of a billion votes an hour


def test_progress_figures_match_the_hand_count(tamil: Path) -> None:
    votes = tamil.parent / "votes.tsv"
    votes.write_text(VOTES, encoding="utf-8")
    assert cli("votes", "import", tamil, votes)[0] == 0
    code, out, err = cli("progress", tamil, "--by", "category", "--json")
    assert code == 0, err
    found = json.loads(out)
    anbu, devi, kavin, meena = found["annotators"]
    # anbu: 5 of 32 done (a skip is done); gaps 60, 120, 3420 (a break), 30 s -> 60, 120, 30 kept.
    assert (anbu["assigned"], anbu["done"], anbu["remaining"]) == (32, 5, 27)
    assert anbu["median_seconds_per_item"] == 60.0
    assert anbu["items_per_hour"] == round(3600 * 3 / 210, 1)  # 51.4
    assert anbu["seconds_to_finish"] == 27 * 70.0
    assert (devi["done"], devi["items_per_hour"], devi["seconds_to_finish"]) == (1, None, None)
    assert (meena["done"], meena["median_seconds_per_item"], meena["seconds_to_finish"]) == (2, 90.0, 30 * 90.0)
    # Validations: ta-001 has 4 (done), ta-002 2 (anbu, meena), ta-003 0 (a skip), ta-004 1, ta-005 1.
    assert found["still_needed"]["ta-002"] == 2 and found["still_needed"]["ta-003"] == 4
    assert found["items_still_needing"] == {"0": 1, "1": 0, "2": 1, "3": 2, "4": 28}
    categories = {g["value"]: g for g in found["by"]["category"]}
    project = Project.open(tamil, create=False)
    category = {item.id: item.meta["category"] for item in project.items}
    validated = Counter()
    for item_id, done in {"ta-001": 4, "ta-002": 2, "ta-004": 1, "ta-005": 1}.items():
        validated[category[item_id]] += done
    for value, group in categories.items():
        assert group["validated"] == validated[value]
        assert group["validations_wanted"] == 4 * group["items"] == group["assigned"]
    code, text, _ = cli("progress", tamil)
    assert code == 0 and "anbu" in text and "31 min" in text  # 1890 s
    code, _, err = cli("progress", tamil, "--by", "dialect")
    assert code == 2 and "--by dialect: no such metadata column" in err and err.count("\n") == 1


# ----------------------------------------------------------------------------------- bad round files

BAD = [
    ("seed = 1\nname = \n", "round.toml:2:8: not valid TOML"),
    ('name = "x"\nvalidators_per_item = 2\n', "names no annotators"),
    (
        'name = "x"\nvalidator_per_item = 2\n[[annotator]]\nname = "a"\nroles = ["validator"]\n',
        "unknown key 'validator_per_item'",
    ),
    (
        '[[annotator]]\nname = "a"\nroles = ["validator"]\n\n[[annotator]]\nname = "b"\nroles = ["validater"]\n',
        "round.toml:5: annotator 'b': role 'validater' is not one of",
    ),
    (
        '[[annotator]]\nname = "a"\nroles = ["validator"]\n[[annotator]]\nname = "a"\nroles = ["writer"]\n',
        "round.toml:4: 'a' is named twice",
    ),
    ('[[annotator]]\nroles = ["validator"]\n', "annotator 1 has no name"),
    ('[[annotator]]\nname = "a"\n', "annotator 'a' has no roles"),
    (
        'validators_per_item = -1\n[[annotator]]\nname = "a"\nroles = ["validator"]\n',
        "round.toml:1: validators_per_item = '-1' should be a whole number",
    ),
    (
        '[routing]\nsame = 3\n[[annotator]]\nname = "a"\nroles = ["validator"]\n',
        "round.toml:2: routing same should be text",
    ),
    (
        '[routing]\nnever = "writer"\n[[annotator]]\nname = "a"\nroles = ["validator"]\n',
        "routing names the column 'writer'",
    ),
    ('[[annotator]]\nname = "a"\nroles = ["validator"]\nactive = "no"\n', "active = 'no' should be true or false"),
    ('[[annotator]]\nname = "a"\nroles = ["validator"]\ncountry = 5\n', "annotator 'a': country should be text"),
    (
        'validators_per_item = 1000000000000000\n[[annotator]]\nname = "a"\nroles = ["validator"]\n'
        '[[annotator]]\nname = "b"\nroles = ["validator"]\n',
        "round.toml:1: validators_per_item = 1000000000000000 is more than the round's 2 annotators; give 2 or fewer",
    ),
    (
        "validators_per_item = " + "9" * 4000 + '\n[[annotator]]\nname = "a"\nroles = ["validator"]\n',
        "validators_per_item = a number of over 40 digits is more than the round's 1 annotator",
    ),
    ("seed = " + "9" * 5000 + "\n", "a number too long to read (over 4,300 digits)"),
]


@pytest.mark.parametrize(("text", "expected"), BAD, ids=[e for _, e in BAD])
def test_a_bad_round_file_is_one_line_and_records_nothing(tmp_path: Path, text: str, expected: str) -> None:
    dataset = culture_copy(tmp_path)
    path = round_file(tmp_path, text)
    code, out, err = cli("round", dataset, "import", path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and expected in err and str(path) in err and "Traceback" not in err, err
    workspace = dataset.with_name(dataset.name + ".piqa.sqlite")
    assert not workspace.exists() or round_in_force(Project.open(dataset, create=False).workspace) is None


def test_commands_without_a_round_say_what_to_do(tmp_path: Path) -> None:
    dataset = copy_sample("tamil.tsv", tmp_path)
    for command in (["round", dataset, "show"], ["assign", dataset], ["progress", dataset]):
        code, _, err = cli(*command)
        assert code == 2 and err.count("\n") == 1 and "import one" in err, err
    code, _, err = cli("round", dataset, "import", tmp_path / "missing.toml")
    assert code == 2 and "missing.toml" in err and err.count("\n") == 1


# ----------------------------------------------------------------------------------- sizes a colleague controls


def test_the_panel_may_be_as_large_as_the_round_and_no_larger_whoever_recorded_it() -> None:
    people = "".join(f'[[annotator]]\nname = "p{n}"\nroles = ["validator"]\n' for n in range(3))
    assert parse_round(f"validators_per_item = 3\n{people}", "r.toml").validators_per_item == 3
    recorded = parse_round(people, "r.toml").to_json() | {"validators_per_item": 10**15}
    with pytest.raises(RoundError) as caught:  # as a merged workspace could bring it: refused when read
        Round.from_canonical(json.dumps(recorded))
    assert str(caught.value) == (
        "the workspace's recorded round: validators_per_item = 1000000000000000 is more than the round's "
        "3 annotators; give 3 or fewer, or name more annotators"
    )


def test_a_round_of_thousands_names_the_line_of_each_problem() -> None:
    people = [f'[[annotator]]\nname = "p{n:04d}"\nroles = ["validator"]\ncountry = "DZ"\n' for n in range(3000)]
    declared = parse_round("".join(people), "big.toml")
    assert len(declared.annotators) == 3000 and declared.annotator("p2999") == declared.annotators[-1]
    assert declared.annotator("nobody") is None
    twice = "".join(people) + people[1234]  # the last table names p1234 again: its line is 4 × 3000 + 1
    with pytest.raises(RoundError, match=r"^big\.toml:12001: 'p1234' is named twice"):
        parse_round(twice, "big.toml")
    bad = "".join(people[:2500]) + '[[annotator]]\nname = "x"\nroles = ["writter"]\n'
    with pytest.raises(RoundError, match=r"^big\.toml:10001: annotator 'x': role 'writter'"):
        parse_round(bad, "big.toml")


def test_progress_read_in_one_pass_equals_each_annotator_asked_alone(tamil: Path) -> None:
    votes = tamil.parent / "votes.tsv"
    votes.write_text(VOTES, encoding="utf-8")
    assert cli("votes", "import", tamil, votes)[0] == 0
    project = Project.open(tamil, create=False)
    declared, assignment = round_in_force(project.workspace), assignment_in_force(project.workspace)
    assert declared is not None
    found = round_progress(project, declared, assignment)
    assert [row.name for row in found.annotators] == ["anbu", "devi", "kavin", "meena"]
    for row in found.annotators:
        assert row.pace == vote_pace(project, row.name)
        assert row.assigned == len(assignment.of(row.name)) == len(assignment.by_annotator()[row.name])
    assert assignment.by_annotator() == {name: assignment.of(name) for name in ("anbu", "devi", "kavin", "meena")}


def test_a_recorded_panel_over_the_bound_is_set_aside_and_the_round_before_it_stands(tamil: Path) -> None:
    """A panel larger than the round's annotators can no longer be written or merged (the writers and the gate
    read a round event as ``round_in_force`` does); one an older version let into the log is set aside on
    opening, said once, and the round before it stands."""
    workspace = Project.open(tamil).workspace
    assert workspace is not None
    good = round_in_force(workspace)
    assert good is not None
    forged = json.dumps(good.to_json() | {"validators_per_item": 10**15}, sort_keys=True, separators=(",", ":"))
    with pytest.raises(PiqaError, match="is more than the round's 4 annotators"):
        workspace.append("mallory", "round", [Change(None, "round", good.canonical(), forged)])
    conn = sqlite3.connect(workspace.path)  # as an older version, which checked nothing, would have written it
    with conn:
        conn.execute(
            "INSERT INTO events(time, annotator, kind, field, old, new, uid, clock)"
            " SELECT time, 'mallory', kind, field, new, ?, 'forged-1', (SELECT MAX(clock) + 1 FROM events)"
            " FROM events WHERE kind = 'round' ORDER BY seq DESC LIMIT 1",
            (forged,),
        )
    conn.close()
    workspace.close()
    code, _, err = cli("progress", tamil)
    assert code == 0 and "is more than the round's 4 annotators" in err and "set aside" in err, err
    assert cli("round", tamil, "show")[0] == 0
    assert round_in_force(Project.open(tamil, create=False).workspace) == good
