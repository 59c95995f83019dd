"""What a votes file does not carry, said where it matters: ``votes export`` names the edits, swaps, orders, flags
and notes it leaves behind; ``votes import`` names the votes and adjudications cast on solution texts this copy
never had (never "edited since" for a text it never held); and position preference on a copy whose shuffled
votes came by file counts them apart instead of calling file order the order each annotator saw.

Real files and real workspaces: a lead's machine and a second copy fed only by files, as a team does it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from piqa_tui.core.round.order import orders_in_force
from piqa_tui.core.round.positions import position_preference, unordered_votes
from piqa_tui.core.votes.files import import_votes
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.state.ballots import Ballots
from tests.conftest import SAMPLES, cast_in_order, copy_sample
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported

SAMPLE_VOTES = SAMPLES / "votes-darija-algerian.tsv"


def lead_machine(folder: Path) -> Path:
    """The lead's copy: the sample's votes, then an edit, a swap, a flag and a note, none of them saved."""
    folder.mkdir()
    path = copy_sample("darija-algerian.tsv", folder)
    lead = Project.open(path, annotator="lead")
    import_votes(lead, SAMPLE_VOTES)
    lead.edit("dz-011", {"solution0": lead.item("dz-011").solutions[0] + " (corrected)"})
    lead.swap_solutions("dz-013", 0, 1)
    lead.set_flag("dz-003", "ungrammatical")
    lead.set_note("dz-004", "ask the Oran writer")
    return path


def test_votes_export_names_what_the_file_leaves_behind(tmp_path: Path) -> None:
    path = lead_machine(tmp_path / "a")
    out = tmp_path / "votes.tsv"
    code, stdout, err = cli("votes", "export", path, out, "--json")
    assert code == 0, err
    found = json.loads(stdout)
    assert found["left_out"] == {"edit": 1, "swap": 1, "flag": 1, "note": 1}
    assert "workspace merge" in found["whole_record"] and "sync" in found["whole_record"]

    code, stdout, err = cli("votes", "export", path, out, "--force")
    assert code == 0 and "wrote" in stdout
    (line,) = [line for line in err.splitlines() if "does not carry" in line]
    assert "edits 1, swaps 1, flags 1, notes 1" in line and "workspace merge" in line and "sync" in line

    Project.open(path, annotator="lead").undo()  # the note back: an undo of a note is a note event, not an edit's
    code, stdout, _ = cli("votes", "export", path, out, "--force", "--json")
    assert json.loads(stdout)["left_out"]["note"] == 2


def test_a_copy_with_only_the_votes_file_hears_which_votes_name_texts_it_never_had(tmp_path: Path) -> None:
    """The copy B starts from the same file as A but gets A's work only as a votes file: the vote cast on A's
    edited text and the adjudication that chose it name a text B never held. Both are said on import, and
    ``agree`` says the adjudication decides nothing there because B never had its text, not that it was edited."""
    path_a = lead_machine(tmp_path / "a")
    (tmp_path / "b").mkdir()
    path_b = tmp_path / "b" / path_a.name
    shutil.copy(SAMPLES / "darija-algerian.tsv", path_b)  # the file as it was: B never held A's edit
    lead = Project.open(path_a, annotator="lead")
    edited = lead.item("dz-011").solutions[0]
    Project.open(path_a, annotator="karim").vote("dz-011", "0")  # on the corrected text, on A only
    lead.adjudicate("dz-011", 0, "the corrected text is right")
    votes = tmp_path / "votes.jsonl"
    assert cli("votes", "export", path_a, votes)[0] == 0

    code, stdout, err = cli("votes", "import", path_b, votes, "--json")
    assert code == 0, err
    lacking = json.loads(stdout)["lacking"]
    assert lacking["votes_on_texts_never_held_here"] == 1  # karim's: the others on dz-011 named the old text
    assert lacking["adjudications_on_texts_never_held_here"] == ["dz-011"]
    assert lacking["adjudications_on_texts_edited_since"] == []
    code, stdout, err = cli("votes", "import", path_b, votes)  # again, in words
    assert code == 0
    assert "1 of the file's votes were cast on a solution text this copy never had" in err
    assert "1 adjudications (dz-011) chose a solution text this copy never had" in err

    code, stdout, err = cli("agree", path_b, "--json")
    (aside,) = json.loads(stdout)["set_aside"]
    assert aside["id"] == "dz-011" and aside["text"] == edited and aside["text_held_here"] is False
    code, stdout, err = cli("agree", path_b, "--resamples", "0")
    (line,) = [line for line in stdout.splitlines() if line.startswith("dz-011:")]
    assert "never in this copy" in line and "edited since" not in line
    reviewer = Ballots(Project.open(path_b, annotator="lead"), reviewer=True)
    assert "never in this copy" in reviewer.status_text("dz-011")  # the TUI's status line says the same
    assert "edited since" not in reviewer.status_text("dz-011")
    Project.open(path_b, annotator="nadia").vote("dz-011", "1")  # 2-2 there: the votes do not decide it anew …
    stuck = {row["id"]: row for row in json.loads(cli("agree", path_b, "--json")[1])["to_adjudicate"]["items"]}
    assert "dz-011" in stuck  # … so the lead's queue lists it and says why, in the same words
    assert stuck["dz-011"]["why"] == "decision set aside" and "never held here" in stuck["dz-011"]["detail"]

    # On A, where the text was held and then edited again, the adjudication is set aside as edited since.
    lead.edit("dz-011", {"solution0": edited + " again"})
    code, stdout, _ = cli("agree", path_a, "--resamples", "0")
    (line,) = [line for line in stdout.splitlines() if line.startswith("dz-011:")]
    assert "edited since" in line
    code, stdout, _ = cli("agree", path_a, "--json")
    assert json.loads(stdout)["set_aside"][0]["text_held_here"] is True
    assert "edited since" in Ballots(Project.open(path_a, annotator="lead"), reviewer=True).status_text("dz-011")
    for name, choice in (("nadia", "0"), ("omar", "1"), ("sami", "1")):  # more votes on A; it stays the lead's
        Project.open(path_a, annotator=name).vote("dz-011", choice)
    stuck = {row["id"]: row for row in json.loads(cli("agree", path_a, "--json")[1])["to_adjudicate"]["items"]}
    assert "dz-011" in stuck, stuck
    assert "edited since" in stuck["dz-011"]["detail"] and "never held" not in stuck["dz-011"]["detail"]


def test_shuffled_votes_that_came_by_file_are_counted_apart_from_the_positions_annotators_saw(tmp_path: Path) -> None:
    """amina votes on a laptop in her shuffled order; the server gets her votes by file only, without the orders.
    There her votes' shown positions are unknown: position preference leaves them out and says so, instead of
    counting the file's positions as the ones she saw. Once the laptop's log is merged, the orders arrive and the
    server counts what the laptop counts."""
    server = imported(culture_copy(tmp_path), "shuffle = true\n" + doc_round(ARAB))
    with sqlite3.connect(f"{server}.piqa.sqlite") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    shutil.copy(server, laptop / server.name)
    shutil.copy(f"{server}.piqa.sqlite", laptop / f"{server.name}.piqa.sqlite")
    amina = Project.open(laptop / server.name, annotator="amina")
    orders = orders_in_force(amina)
    for item in amina.items[:12]:
        order = orders.of("amina", item.id, 3)
        assert order is not None
        cast_in_order(amina, item.id, str(order[0]), order)  # always the first solution she was shown
    votes = tmp_path / "votes.tsv"
    assert cli("votes", "export", laptop / server.name, votes)[0] == 0
    assert cli("votes", "import", server, votes)[0] == 0

    on_laptop = {p.annotator: p.counts for p in position_preference(Project.open(laptop / server.name))}
    assert on_laptop == {"amina": {3: (12, 0, 0)}}
    assert position_preference(Project.open(server)) == []
    assert unordered_votes(Project.open(server)) == {"amina": 12}
    code, stdout, _ = cli("agree", server, "--json")
    found = json.loads(stdout)
    assert found["position_preference"] == [] and found["position_preference_left_out"]["votes"] == 12
    code, stdout, _ = cli("agree", server, "--resamples", "0")
    assert "positions as each annotator saw them" not in stdout
    assert "leaves out 12 votes (amina 12)" in stdout

    code, _, err = cli("workspace", "merge", server, laptop / f"{server.name}.piqa.sqlite")
    assert code == 0, err
    merged = Project.open(server)
    assert {p.annotator: p.counts for p in position_preference(merged)} == on_laptop
    assert unordered_votes(merged) == {}
    code, stdout, _ = cli("agree", server, "--resamples", "0")
    assert "positions as each annotator saw them" in stdout and "leaves out" not in stdout
