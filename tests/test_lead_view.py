"""A lead's view of the week: ``progress`` and ``P`` count, per annotator and per group, the items decided and
the items stuck — to adjudicate, with why, as ``to_adjudicate`` lists them (core's one answer)."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from arabic_reshaper import ArabicReshaper
from bidi import get_display

from piqa_tui.core.round.adjudication_queue import to_adjudicate
from piqa_tui.core.text.bidi_mode import BidiMode, set_screen_mode
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.screens.progress import measured, progress_view
from piqa_tui.tui.state.session import OpenRequest, Session
from tests.conftest import copy_sample
from tests.test_adjudication_queue import PAIRS, vote, with_round
from tests.test_rounds import cli
from tests.test_stage_queue import rendered


@pytest.fixture
def tamil(tmp_path: Path) -> Path:
    """The Tamil sample under two validators per item and majority 2 of 3: ta-001 split 1–1 with nobody left
    to vote, ta-002 agreed, ta-003 with one vote of two."""
    dataset = copy_sample("tamil.tsv", tmp_path)
    with_round(dataset, PAIRS)
    vote(dataset, "anbu", "ta-001", "0")
    vote(dataset, "devi", "ta-001", "1")
    vote(dataset, "anbu", "ta-002", "0")
    vote(dataset, "devi", "ta-002", "0")
    vote(dataset, "anbu", "ta-003", "1")
    return dataset


def progress_json(dataset: Path, *args: str) -> dict[str, object]:
    code, out, err = cli("progress", dataset, "--json", *args)
    assert code == 0, err
    return json.loads(out)


def test_each_annotator_counts_decided_and_stuck_items_with_why(tamil: Path) -> None:
    found = progress_json(tamil)
    rows = {row["annotator"]: row for row in found["annotators"]}  # type: ignore[union-attr]
    # By hand: both validators hold every item; ta-002 is agreed, ta-001 is a 1–1 split nobody can break.
    for name in ("anbu", "devi"):
        assert (rows[name]["decided"], rows[name]["to_adjudicate"]) == (1, 1)
        assert rows[name]["to_adjudicate_by_reason"] == {"split": 1}
    assert found["to_adjudicate"]["count"] == 1  # type: ignore[index]
    code, text, _ = cli("progress", tamil)
    header = next(line for line in text.splitlines() if line.startswith("annotator"))
    assert header.split()[4:6] == ["decided", "stuck"]
    anbu = next(line for line in text.splitlines() if line.startswith("anbu "))
    assert anbu.split()[4:6] == ["1", "1"]
    assert "stuck (assigned, to adjudicate by the lead): anbu 1 split; devi 1 split" in text


def test_each_group_counts_decided_and_stuck_items_with_why(tamil: Path) -> None:
    project = Project.open(tamil, create=False)
    category = {item.id: item.meta["category"] for item in project.items}
    found = progress_json(tamil, "--by", "category")
    groups = {group["value"]: group for group in found["by"]["category"]}  # type: ignore[index]
    for value, group in groups.items():
        ids = [item_id for item_id, of in category.items() if of == value]
        assert group["decided"] == ("ta-002" in ids)
        assert group["to_adjudicate"] == ("ta-001" in ids)
        assert group["to_adjudicate_by_reason"] == ({"split": 1} if "ta-001" in ids else {})
    code, text, _ = cli("progress", tamil, "--by", "category")
    assert code == 0 and "1 stuck: 1 split" in text and "1 decided" in text


def test_the_counts_are_the_adjudication_queue_and_follow_the_lead(tamil: Path) -> None:
    lead = Project.open(tamil, annotator="meena")
    assert list(to_adjudicate(lead)) == ["ta-001"]
    lead.adjudicate("ta-001", 1, "the second is what a Tamil cook does")  # settled: decided, nothing stuck
    rows = {row["annotator"]: row for row in progress_json(tamil)["annotators"]}  # type: ignore[union-attr]
    assert (rows["anbu"]["decided"], rows["anbu"]["to_adjudicate"], rows["anbu"]["to_adjudicate_by_reason"]) == (
        2,
        0,
        {},
    )
    code, text, _ = cli("progress", tamil)
    assert code == 0 and "stuck (" not in text


def test_the_p_screen_shows_decided_and_stuck(tamil: Path) -> None:
    lead = Session.open(OpenRequest(tamil, annotator="meena"), reviewer=True)
    _, found = measured(lead)
    assert found is not None
    text = rendered(progress_view(lead, found))
    header = next(line for line in text.splitlines() if line.startswith("annotator"))
    assert "decided" in header and "stuck" in header
    assert "stuck (assigned, to adjudicate by the lead): anbu 1 split; devi 1 split" in text
    anbu = Session.open(OpenRequest(tamil, annotator="anbu"))
    _, found = measured(anbu)
    assert found is not None
    assert "Stuck, to adjudicate by the lead: 1 split" in rendered(progress_view(anbu, found))


KARIM, SALMA = "كريم", "سلمى"


@pytest.fixture
def arabic_names(tmp_path: Path) -> Path:
    """The ``tamil`` fixture's votes, cast by validators with Arabic names: ta-001 is a split, stuck."""
    dataset = copy_sample("tamil.tsv", tmp_path)
    with_round(dataset, PAIRS.replace("anbu", KARIM).replace("devi", SALMA))
    vote(dataset, KARIM, "ta-001", "0")
    vote(dataset, SALMA, "ta-001", "1")
    return dataset


def test_an_arabic_name_keeps_its_count_after_it_on_the_p_screen(arabic_names: Path) -> None:
    """Drawn by the app (``--bidi app``), "كريم 1 split" must not become "1 كريم split": the name is isolated."""
    lead = Session.open(OpenRequest(arabic_names, annotator="meena"), reviewer=True)
    _, found = measured(lead)
    assert found is not None
    set_screen_mode(BidiMode.APP)
    try:
        text = rendered(progress_view(lead, found))
    finally:
        set_screen_mode(None)
    karim = str(get_display(ArabicReshaper().reshape(KARIM)))  # shaped, right to left
    assert f"lead): {karim} 1 split;" in text, text


def test_a_bidi_terminal_gets_the_names_isolated_and_a_pipe_gets_them_as_stored(arabic_names: Path) -> None:
    code, piped, _ = cli("progress", arabic_names)
    assert code == 0 and f"{KARIM} 1 split; {SALMA} 1 split" in piped and "\u2068" not in piped
    leader, follower = pty.openpty()
    env = {**os.environ, "PIQA_TUI_BIDI": "terminal"}  # as on Konsole or GNOME Terminal
    run = [sys.executable, "-m", "piqa_tui.cli.main", "progress", str(arabic_names)]
    done = subprocess.run(run, stdout=follower, stderr=subprocess.PIPE, env=env, timeout=120, check=False)
    os.close(follower)
    drawn = b""
    with contextlib.suppress(OSError):  # EIO once everything written has been read
        while chunk := os.read(leader, 4096):
            drawn += chunk
    os.close(leader)
    assert done.returncode == 0, done.stderr
    assert f"\u2068{KARIM}\u2069 1 split; \u2068{SALMA}\u2069 1 split" in drawn.decode("utf-8")
