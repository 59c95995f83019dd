"""Votes and adjudications moved between machines as files: a stale vote stays stale wherever it is imported,
the lead's decision travels with its text and reason, whatever travels twice counts once, and every file
reads back exactly what it wrote, whatever the ids, names and texts hold."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.core.votes.decisions import decisions
from piqa_tui.core.votes.exchange import export_votes
from piqa_tui.core.votes.files import import_votes, read_votes
from piqa_tui.core.votes.policy import Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.vote_targets import STALE

from .conftest import SAMPLES, copy_sample

SAMPLE_VOTES = SAMPLES / "votes-darija-algerian.tsv"  # no solution column: votes name positions
FORMATS = (".tsv", ".csv", ".jsonl")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "piqa_tui.cli.main", *args], capture_output=True, text=True)
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr
    return done


def agree(path: Path) -> dict:
    return json.loads(cli("agree", str(path), "--json").stdout)


def release(path: Path, out: Path) -> bytes:
    cli("export", str(path), "--to", str(out), "--decided", "--force")
    return out.read_bytes()


# ------------------------------------------------------------------ two machines


def first_machine(folder: Path) -> Path:
    """The lead's machine: the sample's votes, an edit that makes two votes stale, an adjudication, then a save
    (so the file carries the edit and a new workspace on it knows nothing of the old text)."""
    folder.mkdir()
    path = copy_sample("darija-algerian.tsv", folder)
    lead = Project.open(path, annotator="lead")
    import_votes(lead, SAMPLE_VOTES)
    voted = lead.state.votes["dz-011"]
    target = next(int(v.choice) for v in voted.values() if v.choice.isdigit())
    lead.edit("dz-011", {f"solution{target}": lead.item("dz-011").solutions[target] + " (corrected)"})
    assert {a for a, v in Project.open(path).state.votes["dz-011"].items() if v.choice == STALE}
    lead.adjudicate("dz-007", 1, 'the file is right: "pure" water\tonly')
    lead.save()
    return path


@pytest.mark.parametrize("suffix", FORMATS)
def test_two_machines_derive_the_same_statuses_agreement_and_release(tmp_path: Path, suffix: str) -> None:
    machine_a = first_machine(tmp_path / "a")
    (tmp_path / "b").mkdir()
    machine_b = tmp_path / "b" / machine_a.name
    shutil.copy(machine_a, machine_b)  # the saved file, and a workspace of its own
    karim = Project.open(machine_b, annotator="karim")
    karim.vote("dz-011", "0")  # on the corrected text, on B only
    karim.vote("dz-012", "1")

    a_votes, b_votes = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    cli("votes", "export", str(machine_a), str(a_votes))
    cli("votes", "export", str(machine_b), str(b_votes))
    done = cli("votes", "import", str(machine_b), str(a_votes), "--json")
    assert json.loads(done.stdout)["new_adjudications"] == 1
    cli("votes", "import", str(machine_a), str(b_votes))

    on_b = Project.open(machine_b)
    stale = {a for a, v in on_b.state.votes["dz-011"].items() if v.choice == STALE}
    assert stale == {a for a, v in Project.open(machine_a).state.votes["dz-011"].items() if v.choice == STALE}
    assert stale, "the votes cast on the old text must stay stale on B"
    assert on_b.state.adjudications["dz-007"][:3] == ("1", 'the file is right: "pure" water\tonly', "lead")
    assert decisions(on_b)["dz-007"].status is Status.ADJUDICATED
    assert agree(machine_a) == agree(machine_b)
    assert release(machine_a, tmp_path / "release-a.tsv") == release(machine_b, tmp_path / "release-b.tsv")

    again = json.loads(cli("votes", "import", str(machine_b), str(a_votes), "--json").stdout)
    assert again["new"] == 0 and again["bad"] == []  # brought twice, counted once
    assert agree(machine_a) == agree(machine_b)


def test_a_withdrawn_adjudication_travels_too(tmp_path: Path) -> None:
    machine_a = first_machine(tmp_path / "a")
    (tmp_path / "b").mkdir()
    machine_b = tmp_path / "b" / machine_a.name
    shutil.copy(machine_a, machine_b)
    exported = tmp_path / "votes.tsv"
    export_votes(Project.open(machine_a), exported)
    import_votes(Project.open(machine_b), exported)
    assert "dz-007" in Project.open(machine_b).state.adjudications
    Project.open(machine_a, annotator="lead").undo()  # the adjudication
    export_votes(Project.open(machine_a), exported, current_only=True)
    import_votes(Project.open(machine_b), exported)
    assert "dz-007" not in Project.open(machine_b).state.adjudications
    assert decisions(Project.open(machine_b)) == decisions(Project.open(machine_a))


# ------------------------------------------------------------------ hostile values

PIECES = (
    'o"brien', '"', '""', "'", "\t", "\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\\", "\\t", "\\n", "\\\\",
    ",", ";", " ", "\u202e", "\u2067", "\u2069", "\u200b", "\u200c", "\u200d", "\u200e", "\ufeff", "\u00a0",
    "\x1f", "\x1e", "\x0b", "\x0c", "\x1c", "\x00", "\x1b[31m", "=1+1", "#", "سلام", "র\u200c্যাব", "👍🏽", "e\u0301",
    "[bold]", "{}", "null", "skip", "0",
)  # fmt: skip


def hostile(rng: random.Random, taken: set[str]) -> str:
    """A new string of one to four hostile pieces, never blank."""
    while True:
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4)))
        if text not in taken and text.strip(" "):
            taken.add(text)
            return text


def hostile_dataset(folder: Path, rng: random.Random) -> Path:
    """A JSONL dataset whose ids and solution texts are hostile strings."""
    folder.mkdir()
    ids: set[str] = set()
    rows = [
        {"id": hostile(rng, ids), "prompt": f"prompt {k}", "solution0": hostile(rng, set()) + " a", "solution1": "b"}
        | {"label": k % 2}
        for k in range(40)
    ]
    path = folder / "hostile.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def recorded(path: Path) -> tuple[list[tuple], list[tuple]]:
    """Every vote event and every adjudication event of a workspace, as sorted tuples."""
    project = Project.open(path)
    assert project.workspace is not None
    votes = sorted((e.item_id, e.annotator, e.new, e.time, e.old) for e in project.workspace.events(["vote"]))
    decided = sorted(
        (e.item_id, e.annotator, e.new, e.time, e.old, e.note) for e in project.workspace.events(["adjudicate"])
    )
    return votes, decided


@pytest.mark.parametrize("suffix", FORMATS)
def test_every_format_reads_back_hostile_ids_names_and_texts(tmp_path: Path, suffix: str) -> None:
    rng = random.Random(23)
    source = hostile_dataset(tmp_path / "a", rng)
    (tmp_path / "b").mkdir()
    target = tmp_path / "b" / source.name
    shutil.copy(source, target)
    names: set[str] = set()
    annotators = [hostile(rng, names) for _ in range(12)]
    project = Project.open(source, annotator=annotators[0])
    items = project.items
    for k, name in enumerate(annotators):
        voter = Project.open(source, annotator=name)
        for item in rng.sample(items, 8):
            voter.vote(item.id, rng.choice(["0", "1", "skip"]))
        voter.vote(items[k].id, "")  # a withdrawal
    lead = Project.open(source, annotator=annotators[1])
    lead.adjudicate(items[0].id, 0, hostile(rng, set()))
    lead.swap_solutions(items[0].id, 0, 1)  # the decision follows its text to solution 2
    lead.adjudicate(items[1].id, 1, hostile(rng, set()))
    Project.open(source, annotator=annotators[2]).vote(items[2].id, "1")

    exported = tmp_path / f"votes{suffix}"
    written = export_votes(Project.open(source), exported)
    found = read_votes(Project.open(target), exported)
    assert found.bad == [] and len(found.votes) + len(found.adjudications) == written
    cli("votes", "import", str(target), str(exported))
    lead_target = Project.open(target, annotator=annotators[1])
    lead_target.swap_solutions(items[0].id, 0, 1)  # the same swap on B: same texts, same positions
    votes_a, decided_a = recorded(source)
    votes_b, decided_b = recorded(target)
    assert {v[:4] for v in votes_a} == {v[:4] for v in votes_b}
    assert [d[:4] + d[5:] for d in decided_a] == [d[:4] + d[5:] for d in decided_b]
    assert [d[4] for d in decided_a] == [d[4] for d in decided_b]  # the texts chosen, byte for byte
    assert decisions(Project.open(source)) == decisions(Project.open(target))
    assert {(item, a, v.choice) for item, by in Project.open(source).state.votes.items() for a, v in by.items()} == {
        (item, a, v.choice) for item, by in Project.open(target).state.votes.items() for a, v in by.items()
    }


def test_tsv_and_jsonl_exports_escape_what_would_cut_a_line(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    Project.open(path, annotator='o"brien\t\u2028x\x85y\\n').vote("dz-001", "0")
    for suffix in (".tsv", ".jsonl"):
        exported = tmp_path / f"votes{suffix}"
        export_votes(Project.open(path), exported)
        text = exported.read_text(encoding="utf-8")
        assert len(text.split("\n")) == (3 if suffix == ".tsv" else 2) and "\r" not in text  # a header, a row
        if suffix == ".jsonl":  # readers that split lines as str.splitlines does would cut these
            assert "\u2028" not in text and "\x85" not in text
        if suffix == ".tsv":
            assert 'o"brien\\t' in text  # no CSV quoting in TSV: a quote is a quote, a tab an escape
        assert read_votes(Project.open(path), exported).votes[0][1] == 'o"brien\t\u2028x\x85y\\n'


def test_a_lone_surrogate_is_one_bad_line_and_the_good_lines_are_imported(tmp_path: Path) -> None:
    path = copy_sample("darija-algerian.tsv", tmp_path)
    votes = tmp_path / "votes.jsonl"
    votes.write_text(
        '{"item_id": "dz-001", "annotator": "amina", "choice": 0, "time": "2026-11-20T09:00:00Z"}\n'
        '{"item_id": "dz-002", "annotator": "am\\ud800ina", "choice": 0, "time": "2026-11-20T09:00:00Z"}\n'
        '{"item_id": "dz-00\\udfff", "annotator": "amina", "choice": 0, "time": "2026-11-20T09:00:00Z"}\n'
        '{"item_id": "dz-004", "annotator": "sara", "choice": 1, "time": "2026-11-20T09:00:00Z"}\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "votes", "import", str(path), str(votes)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "line 2: annotator 'am\\ud800ina' holds a lone surrogate" in done.stderr
    assert "line 3: item id 'dz-00\\udfff' holds a lone surrogate" in done.stderr
    assert "2 new" in done.stdout and "2 rejected" in done.stdout
    wide = tmp_path / "wide.jsonl"
    wide.write_text('{"id": "dz-005", "amina": 1, "s\\udc00ra": 0}\n', encoding="utf-8")
    found = read_votes(Project.open(path), wide)
    assert [v[:3] for v in found.votes] == [("dz-005", "amina", "1")] and len(found.bad) == 1
    assert set(Project.open(path).state.votes) == {"dz-001", "dz-004"}
