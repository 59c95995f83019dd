"""Annotation artifacts: the shortcuts to the gold solution, measured and tested as the reference packages do.

Every p-value is checked against scipy (``binomtest``, ``chisquare``) and
statsmodels (Holm), every figure against a case small enough to work out by
hand; planted artifacts (a word that marks the gold solution, a length bias)
are found with their items, and clean simulated sets show nothing beyond the
stated false-positive rate.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from scipy.stats import binomtest, chisquare
from statsmodels.stats.multitest import multipletests

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.quality.artifacts import (
    ALPHA,
    BASELINE_HINT,
    LENGTH_RULES,
    BaselineResult,
    LabelledItem,
    RuleTest,
    analyse,
    artifact_report,
    binomial_greater,
    binomial_two_sided,
    chi_square_uniform,
    holm,
)
from piqa_tui.core.scoring.backend import ContinuationScore
from piqa_tui.core.scoring.cache import RunRecord, ScoreCache
from piqa_tui.core.scoring.results import item_content_hash
from piqa_tui.core.scoring.templates import get_template
from piqa_tui.core.workspace.project import Project
from tests.conftest import copy_sample


def entry(item_id: str, solutions: tuple[str, ...], label: int, language: str | None = None) -> LabelledItem:
    return LabelledItem(Item(item_id, "prompt", solutions, label, 0), label, language)


# --------------------------------------------------------------------------- the tests equal the references


@pytest.mark.parametrize(
    ("k", "n", "p"),
    [(0, 5, 0.5), (3, 10, 0.5), (7, 10, 0.5), (10, 10, 0.5), (60, 100, 1 / 3), (20, 100, 1 / 3), (40, 60, 0.25)]
    + [(49, 100, 0.5), (50, 100, 0.5), (51, 100, 0.5), (5_012, 10_000, 0.5), (2_600, 5_000, 0.5), (1, 3, 0.25)],
)
def test_binomial_tests_equal_scipy(k: int, n: int, p: float) -> None:
    assert binomial_greater(k, n, p) == pytest.approx(binomtest(k, n, p, alternative="greater").pvalue, rel=1e-9)
    assert binomial_two_sided(k, n, p) == pytest.approx(binomtest(k, n, p).pvalue, rel=1e-9)


@pytest.mark.parametrize("counts", [[10, 20, 30], [5, 5, 5, 6], [0, 0, 9], [7, 7, 7], [120, 80, 95, 105]])
def test_chi_square_equals_scipy(counts: list[int]) -> None:
    statistic, p_value = chi_square_uniform(counts)
    reference = chisquare(counts)
    assert statistic == pytest.approx(reference.statistic) and p_value == pytest.approx(reference.pvalue, rel=1e-9)


def test_holm_equals_statsmodels() -> None:
    p = [0.01, 0.04, 0.03, 0.005, 0.5, 1.0, 0.02]
    assert holm(p).tolist() == pytest.approx(multipletests(p, method="holm")[1].tolist())


# --------------------------------------------------------------------------- each figure, by hand


def test_length_rules_by_hand() -> None:
    """Four items: gold longest twice, shortest once, one tie (in characters).

    "Always pick the longer" answers 3 items and is right on 2: P(X ≥ 2 | 3, ½) = 4/8.
    """
    report = analyse(
        [
            entry("a", ("long one", "short"), 0),
            entry("b", ("tiny", "much longer"), 1),
            entry("c", ("small", "a lot longer"), 0),
            entry("d", ("same", "size"), 1),
        ]
    )
    characters, words = report.lengths
    assert (characters.gold_longest, characters.gold_shortest, characters.tied_longest) == (2, 1, 1)
    assert (characters.longer.correct, characters.longer.answered) == (2, 3)
    assert characters.longer.p_value == pytest.approx(4 / 8)
    assert (characters.shorter.correct, characters.shorter.p_value) == (1, pytest.approx(7 / 8))
    # In words: gold "long one" 2 vs 1, gold "much longer" 2 vs 1, gold "small" 1 vs 3, "same" 1 vs 1: the same.
    assert (words.gold_longest, words.gold_shortest, words.tied_longest) == (2, 1, 1)
    assert (words.longer.correct, words.longer.answered) == (2, 3)


def test_position_balance_by_hand() -> None:
    """Two solutions, gold first in 3 of 4: two-sided P = (1 + 4 + 4 + 1)/16. Three solutions 4/1/1: χ² = 3,
    df 2, P = e^-1.5."""
    two = [entry(str(i), ("x", "y"), label) for i, label in enumerate([0, 0, 0, 1])]
    three = [entry(f"t{i}", ("x", "y", "z"), label) for i, label in enumerate([0, 0, 0, 0, 1, 2])]
    balance_two, balance_three = analyse(two + three).positions
    assert balance_two.counts == (3, 1) and balance_two.p_value == pytest.approx(10 / 16)
    assert balance_three.counts == (4, 1, 1) and balance_three.test == "chi-square"
    assert balance_three.p_value == pytest.approx(math.exp(-1.5))


def test_cue_word_by_hand() -> None:
    """'zq' is in the gold solution alone of 6 of 8 items, 'and' in both solutions of all 8.

    Tested: the two words in 5+ solutions. 'zq': P(X ≥ 6 | 6, ½) = 1/64, Holm over 2 words: 2/64 < 0.05.
    'and' is gold in 8 of 16, no more than chance. Every other word is in one solution: not tested.
    """
    items = [
        entry(f"i{i}", (f"a{i} and" + (" zq" if i < 6 else ""), f"b{i} and"), 0)
        if i % 2
        else entry(f"i{i}", (f"a{i} and", f"b{i} and" + (" zq" if i < 6 else "")), 1)
        for i in range(8)
    ]
    report = analyse(items)
    [latin] = report.words
    assert latin.language == "Latin script" and latin.tested == 2
    [cue] = latin.cues
    assert (cue.word, cue.solutions, cue.gold, cue.chance) == ("zq", 6, 6, 0.5)
    assert cue.p_value == pytest.approx(1 / 64) and cue.adjusted == pytest.approx(2 / 64)
    assert cue.items == tuple(f"i{i}" for i in range(6))
    assert [s.item_id for s in report.shortcuts] == [f"i{i}" for i in range(6)]
    assert "the word 'zq' is only in the gold solution" in report.shortcuts[0].reasons[0]


def test_words_are_folded_and_counted_per_language_column() -> None:
    """Arabic spelling variants (taa marbuta / haa, alef with hamza) are one word, per the item's language."""
    spellings = ["مزيانة", "مزيانه", "أمزيانة", "امزيانه"]
    items = [entry(f"d{i}", (f"حل {i} " + spellings[i % 4], f"حل اخر {i}"), 0, language="Darija") for i in range(16)]
    [darija] = analyse(items).words
    assert darija.language == "Darija" and darija.tested == 4  # حل, اخر and the two folded spellings
    assert {(c.word, c.solutions, c.gold) for c in darija.cues} == {("مزيانه", 8, 8), ("امزيانه", 8, 8)}


def test_baseline_accuracy_by_hand() -> None:
    """A solution-only run right on 8 of 10 two-solution items: P(X ≥ 8 | 10, ½) = 56/1024."""
    test = RuleTest("acc", 10, 8, 0.5, binomial_greater(8, 10, 0.5))
    assert test.p_value == pytest.approx(56 / 1024) and test.accuracy == 0.8


# --------------------------------------------------------------------------- simulated sets


def simulated(
    seed: int, n: int = 200, cue_share: float = 0.0, longer_share: float = 0.0
) -> tuple[list[LabelledItem], set[str], set[str]]:
    """Minimal pairs over a small vocabulary, gold at random; ``cue_share`` of the items get the word 'zq' in
    their gold solution alone, ``longer_share`` an extra word in it. Returns the items, the cue's, the longer's."""
    rng = random.Random(seed)
    items, cued, longer = [], set(), set()
    for i in range(n):
        words = [f"w{rng.randrange(40)}" for _ in range(6)]
        other = list(words)
        other[rng.randrange(6)] = f"w{rng.randrange(40)}"
        solutions = [" ".join(words), " ".join(other)]
        label = rng.randrange(2)
        if rng.random() < cue_share:
            solutions[label] += " zq"
            cued.add(str(i))
        elif rng.random() < longer_share:
            solutions[label] += f" w{rng.randrange(40)}"
            longer.add(str(i))
        items.append(entry(str(i), tuple(solutions), label))
    return items, cued, longer


def test_a_planted_cue_word_is_found_with_its_items() -> None:
    items, cued, _ = simulated(1, n=400, cue_share=0.1)
    report = analyse(items)
    cues = [c for found in report.words for c in found.cues]
    assert [c.word for c in cues] == ["zq"] and set(cues[0].items) == cued
    flagged = report.shortcut_ids
    precision, recall = len(flagged & cued) / len(flagged), len(flagged & cued) / len(cued)
    print(f"planted cue word: {len(cued)} items, precision {precision:.2f}, recall {recall:.2f}")
    assert precision == 1.0 and recall == 1.0


def test_a_planted_length_bias_is_found_and_flags_what_the_baseline_also_answers() -> None:
    items, _, longer = simulated(2, n=400, longer_share=0.3)
    report = analyse(items)
    assert report.lengths[1].longer.significant(ALPHA, LENGTH_RULES)  # in words: the extra word
    assert not report.lengths[1].shorter.significant(ALPHA, LENGTH_RULES)
    assert not report.shortcuts  # no baseline: the length rule alone flags nothing
    picks = frozenset(sorted(longer)[: len(longer) // 2])
    baseline = BaselineResult("gemma · piqa+solution-only", len(items), *[RuleTest("acc", 1, 1, 0.5, 1.0)] * 2, picks)
    flagged = analyse(items, baselines=[baseline]).shortcut_ids
    precision, recall = len(flagged & longer) / len(flagged), len(flagged & picks) / len(picks)
    print(f"planted length bias: {len(longer)} items, baseline picks {len(picks)}; precision {precision:.2f}")
    assert recall == 1.0 and flagged <= picks


def test_clean_sets_show_nothing_beyond_the_stated_false_positive_rate() -> None:
    """300 seeded sets with gold at random: each family of tests (length rules, position, cue words) comes out
    in at most α of them, give or take three standard errors."""
    rounds = 300
    found = {"length": 0, "position": 0, "words": 0, "shortcuts": 0}
    for seed in range(rounds):
        report = analyse(simulated(1_000 + seed, n=150)[0])
        found["length"] += any(
            r.significant(ALPHA, LENGTH_RULES) for b in report.lengths for r in (b.longer, b.shorter)
        )
        found["position"] += any(p.p_value < ALPHA for p in report.positions)
        found["words"] += any(w.cues for w in report.words)
        found["shortcuts"] += bool(report.shortcuts)
    limit = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / rounds)
    print({name: count / rounds for name, count in found.items()})
    assert all(count / rounds <= limit for count in found.values()), found


# --------------------------------------------------------------------------- on a project


def store_baseline(project: Project, picks: dict[str, int]) -> None:
    """A solution-only run whose log-likelihoods prefer solution ``picks[id]`` of each item."""
    template = get_template("piqa").solution_only()
    rows = []
    for item in project.items:
        scores = tuple(ContinuationScore(-1.0 if k == picks[item.id] else -9.0, 3) for k in range(len(item.solutions)))
        rows.append((item_content_hash(item), scores))
    ScoreCache(project.workspace.conn).store(
        "m.gguf:1:abc", template.key, rows, RunRecord.of("m.gguf:1:abc", "m.gguf", template)
    )


def test_a_project_uses_the_decided_labels_and_its_stored_baseline(tmp_path: Path) -> None:
    data = copy_sample("darija-algerian.tsv", tmp_path)
    project = Project.open(data, annotator="a")
    first = project.items[0]
    report = artifact_report(project)
    assert report.baselines == () and BASELINE_HINT in "\n".join(report.lines())
    assert report.to_json()["baseline_hint"] == BASELINE_HINT
    against = str(1 - first.label)
    for name in ("a", "b"):  # two votes against the gold label: the decided label is the other solution
        Project.open(data, annotator=name).vote(first.id, against)
    project = Project.open(data, annotator="a")
    store_baseline(project, {item.id: item.label for item in project.items})  # the file's gold, everywhere
    report = artifact_report(project)
    assert (report.items, report.labelled, report.decided) == (36, 36, 1)
    [baseline] = report.baselines
    assert baseline.run == "m.gguf · piqa+solution-only" and baseline.scored == 36
    assert baseline.acc.correct == 35  # wrong where the votes decided against gold
    assert baseline.acc.p_value == pytest.approx(37 / 2**36)
    json.dumps(report.to_json())  # plain JSON


def test_lines_show_data_text_only_through_the_safe_renderer() -> None:
    """A word or an id holding an escape sequence prints it visibly, never as a terminal command."""
    items = [entry(f"id\x1b[2J{i}", (f"a{i} zq\x1b]0;x\x07", f"b{i}"), 0) for i in range(8)]
    text = "\n".join(analyse(items).lines())
    assert "\x1b" not in text and "\x07" not in text and "\\x1b" in text


def test_the_card_has_the_section_with_the_cue_word_and_its_items(tmp_path: Path) -> None:
    from piqa_tui.render.card import dataset_card

    data = tmp_path / "planted.tsv"
    rows = ["id\tprompt\tsolution0\tsolution1\tlabel"]
    for i in range(24):
        label = i % 3 % 2
        solutions = [f"use the cloth number {i}", f"use the brush number {i}"]
        if i % 2 == 0:
            solutions[label] += " surely|`x`"  # a pipe and backticks: the table and the code span hold
        rows.append(f"c-{i:02d}\tHow do you clean thing {i}?\t{solutions[0]}\t{solutions[1]}\t{label}")
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    card = dataset_card(Project.open(data, annotator="lead"))
    section = card.split("### Annotation artifacts")[1].split("\n## ")[0]
    assert "| Latin script | `` surely\\|`x` `` | 12/12 |" in section
    assert "Items a shortcut answers" in section and "`c-00`, `c-02`" in section
    assert "| characters | 12 | 0 | 12 | 12/12 = 100.0% (p = 0.00024) **beyond chance** |" in section


def test_without_a_language_column_each_script_is_a_language_and_indic_nukta_folds() -> None:
    """Devanagari with and without nukta (ज़रूर, जरूर) is one word; Tamil and Latin words are tested apart."""
    spellings = ["ज़रूर", "जरूर"]
    items = [entry(f"h{i}", (f"पानी {i} " + spellings[i % 2], f"पानी {i} दूध"), 0) for i in range(8)] + [
        entry(f"t{i}", (f"தண்ணீர் {i} water", f"தண்ணீர் {i} milk"), 1) for i in range(8)
    ]
    report = analyse(items)
    assert [w.language for w in report.words] == ["Devanagari script", "Latin script", "Tamil script"]
    devanagari = report.words[0]
    assert [(c.word, c.solutions, c.gold) for c in devanagari.cues] == [("जरूर", 8, 8)]
    latin, tamil = report.words[1], report.words[2]
    assert [c.word for c in latin.cues] == ["milk"] and tamil.tested == 1 and not tamil.cues
