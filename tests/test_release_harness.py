"""lm-evaluation-harness runs a release's task with a real model and picks what piqa-tui picks.

The harness's own ``gguf`` backend (``lm_eval/models/gguf.py``: ``/v1/completions`` with ``echo`` and
``logprobs``, the continuation's tokens found by their text offsets) scores the release's ``bare`` task
against a real ``llama_cpp.server`` on 127.0.0.1 serving the packaged Gemma (``tests/test_served.py``'s
server); piqa-tui scores the same items with the same model in process. The 20 items are the shortest of
English PIQA's validation set: llama-cpp-python sorts the whole 262,144-token vocabulary in Python for every
echoed prompt token, so the test's cost is its prompt tokens (about 8 seconds a request on two cores).

The two are not bit-equal, for the reasons ``tests/test_served.py`` measures (the server evaluates each
prompt in its own batch shape and reuses the KV cache of a shared prefix): the log-likelihoods must agree
within ``SERVED_TOLERANCE`` and the picks on every item whose margin is wider than the noise. docs/card.md
gives the measured difference, and why SmolLM2 (no BOS token) cannot be compared through this server.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from piqa_tui.core.workspace.project import Project
from tests.test_release_tasks import PIQA_EN
from tests.test_rounds import cli
from tests.test_served import SERVED_TOLERANCE, gguf, server_url  # noqa: F401 (the fixture)

pytest.importorskip("lm_eval", reason="lm-eval is in the test extras")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
ITEMS = 20


def shortest_piqa(folder: Path) -> Path:
    """The ``ITEMS`` shortest items of English PIQA's validation set, in file order, with their labels."""
    rows = (PIQA_EN / "valid.jsonl").read_text(encoding="utf-8").splitlines()
    labels = (PIQA_EN / "valid-labels.lst").read_text(encoding="utf-8").split()
    size = {k: sum(map(len, json.loads(row).values())) for k, row in enumerate(rows)}
    chosen = sorted(sorted(size, key=size.__getitem__)[:ITEMS])
    folder.mkdir()
    (folder / "valid.jsonl").write_text("".join(rows[k] + "\n" for k in chosen), encoding="utf-8")
    (folder / "valid-labels.lst").write_text("".join(labels[k] + "\n" for k in chosen), encoding="utf-8")
    return folder / "valid.jsonl"


def test_the_harness_picks_what_piqa_tui_picks_on_the_same_items_and_model(
    server_url: str,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    from lm_eval import evaluator
    from lm_eval.tasks import TaskManager

    from piqa_tui.core.scoring.cache import score_items
    from piqa_tui.core.scoring.llama import LlamaBackend

    dataset = shortest_piqa(tmp_path / "piqa")
    folder = tmp_path / "v1"
    code, _, err = cli("export", dataset, "--release", folder)
    assert code == 0, err
    manager = TaskManager(include_path=str(folder / "tasks"), include_defaults=False)
    results = evaluator.simple_evaluate(
        model="gguf", model_args=f"base_url={server_url}", tasks=["v1_bare"], task_manager=manager, log_samples=True
    )
    harness = {s["doc_id"]: [r[0][0] for r in s["resps"]] for s in results["samples"]["v1_bare"]}
    items = Project.open(dataset, create=False).items
    with LlamaBackend(gguf.assemble(), n_threads=2) as backend:
        ours = score_items(backend, items, "bare")
    assert len(harness) == len(ours) == ITEMS
    for k, score in enumerate(ours):
        theirs = harness[k]
        assert max(abs(a - b) for a, b in zip(theirs, score.logliks)) < SERVED_TOLERANCE, (k, theirs, score.logliks)
        margin = abs(score.logliks[0] - score.logliks[1])
        if margin > 2 * SERVED_TOLERANCE:  # wider than the two sides' noise: the same pick
            assert theirs.index(max(theirs)) == score.logliks.index(max(score.logliks)), (k, theirs, score.logliks)
    acc = sum(s.logliks.index(max(s.logliks)) == s.label for s in ours) / ITEMS
    assert (
        abs(results["results"]["v1_bare"]["acc,none"] - acc)
        <= sum(abs(s.logliks[0] - s.logliks[1]) <= 2 * SERVED_TOLERANCE for s in ours) / ITEMS
    )
