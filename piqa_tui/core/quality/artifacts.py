"""Annotation artifacts: the shortcuts a model could take to the gold solution without understanding the item.

PIQA-style sets need a solution-only baseline because people who write
solutions leave traces: the correct one tends to be longer (or shorter), the
gold label sits more often in one position, and a few words appear mostly in
correct solutions. This module measures each over a set's items and their
decided labels (the votes' decision, else the file's gold label) and says in
plain words how far beyond chance each goes:

* length: how often the gold solution is the longest and the shortest, in
  characters (code points, as stored) and in words; the accuracy of "always
  pick the longer" and "always pick the shorter" (one-sided exact binomial
  tests against chance, Bonferroni over the four rules);
* position: the gold label's position balance (exact binomial test for two
  solutions, chi-square goodness of fit for three or four);
* cue words, as the "competency problems" analysis (Gardner et al. 2021) does:
  for every word in at least ``min_count`` solutions, the share of those
  solutions that are gold, tested one-sided against the chance rate (1 over
  the number of solutions) with an exact binomial test, Holm's correction
  over the words tested per language. Words are dedup's folded tokens
  (``core.dedup.folding``: Arabic spelling variants, Indic nukta, punctuation
  and case folded), so one word spelled two ways counts once. A word's
  language is the item's language column when the file has one, else the
  word's own script;
* the solution-only baseline runs stored in the workspace, each with its
  accuracy against chance (one-sided exact binomial test).

An item is flagged when a shortcut answers it: a significant cue word is in
its gold solution and in no other, or a significant length rule picks its
gold solution and a solution-only baseline run does too.

The tests are exact (no normal approximation) and equal
``scipy.stats.binomtest`` and ``scipy.stats.chisquare``; scipy is not needed.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.folding import fold
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.report.languages import language_columns
from piqa_tui.core.scoring.results import ItemScore
from piqa_tui.core.scoring.stored import StoredRun, stored_runs, stored_scores
from piqa_tui.core.scoring.templates import Template
from piqa_tui.core.text.characters import SCRIPTS
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.votes.decisions import decisions
from piqa_tui.core.workspace.log import open_existing
from piqa_tui.core.workspace.project import Project

ALPHA = 0.05  # family-wise error rate of each family of tests (length rules, position, cue words per language)
MIN_COUNT = 5  # a word is tested when at least this many solutions contain it
LENGTH_RULES = 4  # longer and shorter, in characters and in words: the Bonferroni factor of the length tests
SHOWN = 5  # item ids and words listed per line in ``lines()``
BASELINE_HINT = (
    "No solution-only baseline is stored: score one with `piqa-tui score PATH --solution-only`, or in the TUI "
    "press M and choose 'baseline' in the scoring dialog."
)

# --------------------------------------------------------------------------- exact tests


def _log_sum_exp(terms: np.ndarray) -> float:
    top = float(terms.max())
    return top + math.log(float(np.exp(terms - top).sum()))


def _log_pmf(k: int, n: int, p: float) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p) + (n - k) * math.log1p(-p)


def _upper_tail(k: int, n: int, p: float) -> float:
    """P(X ≥ k), summed from k up: each term from the one before (pmf(i+1)/pmf(i) = (n-i)/(i+1) · p/q)."""
    i = np.arange(k, n, dtype=np.float64)
    steps = np.log((n - i) / (i + 1)) + (math.log(p) - math.log1p(-p))
    terms = _log_pmf(k, n, p) + np.concatenate(([0.0], np.cumsum(steps)))
    return math.exp(_log_sum_exp(terms))


def _lower_tail(k: int, n: int, p: float) -> float:
    """P(X ≤ k), summed from k down (pmf(i-1)/pmf(i) = i/(n-i+1) · q/p)."""
    i = np.arange(k, 0, -1, dtype=np.float64)
    steps = np.log(i / (n - i + 1)) + (math.log1p(-p) - math.log(p))
    terms = _log_pmf(k, n, p) + np.concatenate(([0.0], np.cumsum(steps)))
    return math.exp(_log_sum_exp(terms))


def binomial_greater(k: int, n: int, p: float) -> float:
    """One-sided exact binomial test: P(X ≥ k) for X ~ Binomial(n, p) (``binomtest(k, n, p, 'greater')``)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if k > n * p:  # the tail away from the mode: terms fall from the first
        return min(1.0, _upper_tail(k, n, p))
    return max(0.0, 1.0 - _lower_tail(k - 1, n, p))


_LOG_FACTORIALS = np.zeros(1)  # log(x!) for x = 0, 1, …: grown on demand and kept, every test reads a prefix


def _log_factorials(n: int) -> np.ndarray:
    """log(x!) for x = 0 … n, each ``math.lgamma(x + 1)``: computed once per process, not once per test."""
    global _LOG_FACTORIALS
    if len(_LOG_FACTORIALS) <= n:
        start = len(_LOG_FACTORIALS)
        stop = max(n + 1, 2 * start)  # doubling: a growing n costs a constant per value
        more = np.fromiter(map(math.lgamma, range(start + 1, stop + 1)), float, stop - start)  # in C: no loop here
        _LOG_FACTORIALS = np.concatenate([_LOG_FACTORIALS, more])
    return _LOG_FACTORIALS[: n + 1]


def binomial_two_sided(k: int, n: int, p: float) -> float:
    """Two-sided exact binomial test as scipy computes it: the probability of every outcome no likelier than k."""
    if n == 0 or k == n * p:
        return 1.0
    i = np.arange(n + 1)
    log_factorial = _log_factorials(n)
    log_pmf = log_factorial[n] - log_factorial - log_factorial[::-1] + i * math.log(p) + (n - i) * math.log1p(-p)
    pmf = np.exp(log_pmf)
    return min(1.0, float(pmf[pmf <= pmf[k] * (1 + 1e-7)].sum()))


def chi_square_sf(x: float, df: int) -> float:
    """P(χ² ≥ x) with ``df`` (a whole number) degrees of freedom, in closed form."""
    h = x / 2
    if df % 2 == 0:
        term = total = 1.0
        for j in range(1, df // 2):
            term *= h / j
            total += term
        return min(1.0, math.exp(-h) * total)
    total, term = math.erfc(math.sqrt(h)), math.sqrt(h) / math.gamma(1.5)
    for j in range(1, (df + 1) // 2):
        total += math.exp(-h) * term
        term *= h / (j + 0.5)
    return min(1.0, total)


def chi_square_uniform(counts: Sequence[int]) -> tuple[float, float]:
    """Pearson's chi-square statistic of ``counts`` against equal shares, and its p-value (``scipy.stats.chisquare``)."""
    observed = np.asarray(counts, np.float64)
    expected = observed.sum() / len(observed)
    if expected == 0:
        return 0.0, 1.0
    statistic = float(((observed - expected) ** 2 / expected).sum())
    return statistic, chi_square_sf(statistic, len(observed) - 1)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (``statsmodels``' ``multipletests(method='holm')``)."""
    p = np.asarray(p_values, np.float64)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return adjusted


# --------------------------------------------------------------------------- what is measured


@dataclass(frozen=True)
class LabelledItem:
    """An item with the label the analysis trusts (decided by the votes, else the file's gold) and its language."""

    item: Item
    label: int
    language: str | None  # the item's language column value; None: each word's script names its language

    @property
    def chance(self) -> float:
        return 1 / len(self.item.solutions)


@dataclass(frozen=True)
class RuleTest:
    """How often one rule ("always pick the longer, in characters") picks gold, against chance."""

    name: str
    answered: int  # items where the rule picks one solution (no tie)
    correct: int
    chance: float  # the chance rate over the answered items (mean of 1/solutions)
    p_value: float  # one-sided exact binomial test, uncorrected

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.answered if self.answered else None

    def significant(self, alpha: float, tests: int = 1) -> bool:
        """Beyond chance at ``alpha`` after Bonferroni over ``tests`` rules."""
        return self.answered > 0 and self.p_value * tests < alpha

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.name,
            "answered": self.answered,
            "correct": self.correct,
            "accuracy": self.accuracy,
            "chance": self.chance,
            "p_value": self.p_value,
        }


@dataclass(frozen=True)
class LengthBias:
    """Where the gold solution stands by length, in one unit (characters or words)."""

    unit: str
    items: int
    gold_longest: int  # the gold solution is the one longest
    gold_shortest: int  # the gold solution is the one shortest
    tied_longest: int  # two or more solutions share the greatest length
    tied_shortest: int
    longer: RuleTest
    shorter: RuleTest

    def to_json(self) -> dict[str, object]:
        return {
            "unit": self.unit,
            "items": self.items,
            "gold_longest": self.gold_longest,
            "gold_shortest": self.gold_shortest,
            "tied_longest": self.tied_longest,
            "tied_shortest": self.tied_shortest,
            "longer": self.longer.to_json(),
            "shorter": self.shorter.to_json(),
        }


@dataclass(frozen=True)
class PositionBalance:
    """How often each position holds the gold label, over the items with ``solutions`` solutions."""

    solutions: int
    counts: tuple[int, ...]
    test: str  # "binomial" (two solutions) or "chi-square"
    p_value: float

    def to_json(self) -> dict[str, object]:
        return {"solutions": self.solutions, "counts": list(self.counts), "test": self.test, "p_value": self.p_value}


@dataclass(frozen=True)
class CueWord:
    """A word whose presence in a solution predicts that the solution is gold beyond chance."""

    language: str
    word: str  # as dedup folds it
    solutions: int  # solutions that contain it
    gold: int  # of those, gold
    chance: float
    p_value: float  # one-sided exact binomial test
    adjusted: float  # Holm-adjusted over the words tested in its language
    items: tuple[str, ...]  # the ids of the items that contain it, in file order

    def to_json(self) -> dict[str, object]:
        return {
            "language": self.language,
            "word": self.word,
            "solutions": self.solutions,
            "gold": self.gold,
            "share_gold": self.gold / self.solutions,
            "chance": self.chance,
            "p_value": self.p_value,
            "p_holm": self.adjusted,
            "items": list(self.items),
        }


@dataclass(frozen=True)
class LanguageWords:
    """The cue-word tests of one language: how many words were tested and which came out."""

    language: str
    tested: int
    cues: tuple[CueWord, ...]  # significant after Holm's correction, strongest first

    def to_json(self) -> dict[str, object]:
        return {"language": self.language, "words_tested": self.tested, "cues": [c.to_json() for c in self.cues]}


@dataclass(frozen=True)
class BaselineResult:
    """A stored solution-only run's accuracy against the analysed labels, and against chance."""

    run: str
    scored: int
    acc: RuleTest
    acc_norm: RuleTest
    picks_gold: frozenset[str] = field(repr=False)  # ids of the items whose gold it picks (acc)

    def to_json(self) -> dict[str, object]:
        return {"run": self.run, "scored": self.scored, "acc": self.acc.to_json(), "acc_norm": self.acc_norm.to_json()}


@dataclass(frozen=True)
class Shortcut:
    """An item a shortcut answers, and which one."""

    item_id: str
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"id": self.item_id, "reasons": list(self.reasons)}


# --------------------------------------------------------------------------- length and position


def solution_lengths(entries: Sequence[LabelledItem], unit: str) -> list[list[int]]:
    """Each item's solution lengths in ``unit``: "characters" (code points, as stored) or "words" (split on spaces)."""
    if unit == "characters":
        return [[len(s) for s in e.item.solutions] for e in entries]
    return [[len(s.split()) for s in e.item.solutions] for e in entries]


def _rule_picks(lengths: list[int], chosen: Callable[[list[int]], int]) -> int | None:
    """The position of the one longest (``chosen`` max) or shortest solution; None on a tie."""
    best = chosen(lengths)
    return lengths.index(best) if lengths.count(best) == 1 else None


def _rule(
    name: str, entries: Sequence[LabelledItem], lengths: list[list[int]], chosen: Callable[[list[int]], int]
) -> tuple[RuleTest, int, int]:
    """The rule that picks the one longest or shortest solution: its test, its gold picks and its ties."""
    correct = tied = 0
    chance = 0.0
    for entry, values in zip(entries, lengths):
        pick = _rule_picks(values, chosen)
        if pick is None:
            tied += 1
            continue
        chance += 1 / len(values)
        correct += pick == entry.label
    answered = len(entries) - tied
    chance = chance / answered if answered else 0.5
    p_value = binomial_greater(correct, answered, chance) if answered else 1.0
    return RuleTest(name, answered, correct, chance, p_value), correct, tied


def length_bias(entries: Sequence[LabelledItem], unit: str, lengths: list[list[int]] | None = None) -> LengthBias:
    """Where the gold solution stands by length in ``unit`` ("characters" or "words")."""
    lengths = solution_lengths(entries, unit) if lengths is None else lengths
    longer, gold_longest, tied_longest = _rule(f"always pick the longer ({unit})", entries, lengths, max)
    shorter, gold_shortest, tied_shortest = _rule(f"always pick the shorter ({unit})", entries, lengths, min)
    return LengthBias(unit, len(entries), gold_longest, gold_shortest, tied_longest, tied_shortest, longer, shorter)


def position_balance(entries: Sequence[LabelledItem]) -> list[PositionBalance]:
    """The gold label's positions per number of solutions, each tested against equal shares."""
    by_size: dict[int, list[int]] = {}
    for entry in entries:
        counts = by_size.setdefault(len(entry.item.solutions), [0] * len(entry.item.solutions))
        counts[entry.label] += 1
    out = []
    for size, counts in sorted(by_size.items()):
        if size == 2:
            out.append(PositionBalance(2, tuple(counts), "binomial", binomial_two_sided(counts[0], sum(counts), 0.5)))
        else:
            out.append(PositionBalance(size, tuple(counts), "chi-square", chi_square_uniform(counts)[1]))
    return out


# --------------------------------------------------------------------------- cue words

_SCRIPT = re.compile("|".join(f"(?P<{name}>[{ranges}])" for name, ranges in SCRIPTS.items()))


def word_script(word: str) -> str:
    """The script of a word's first letter ("Arabic script"), or "no script" for digits and symbols."""
    match = _SCRIPT.search(word)
    return f"{match.lastgroup} script" if match else "no script"


# Joins the solutions folded in one call: a private-use character, which folding keeps as it is.
_JOIN = "\ue000"
_FOLD_CHUNK = 20_000  # solutions folded per call


def _fold_all(texts: list[str]) -> list[str]:
    """``fold`` of each text, a chunk of texts per call (one call per text costs seconds on 100,000 items)."""
    out: list[str] = []
    for start in range(0, len(texts), _FOLD_CHUNK):
        chunk = texts[start : start + _FOLD_CHUNK]
        parts = fold(_JOIN.join(chunk)).split(_JOIN)
        out.extend(parts if len(parts) == len(chunk) else map(fold, chunk))  # a text holding the joiner itself
    return out


def solution_words(entries: Sequence[LabelledItem]) -> list[list[frozenset[str]]]:
    """Each item's solutions as sets of folded words (dedup's folding): presence, not count."""
    folded = iter(_fold_all([s for e in entries for s in e.item.solutions]))
    return [[frozenset(next(folded).split()) for _ in e.item.solutions] for e in entries]


@dataclass
class _Counts:
    """Per word: the solutions that contain it, the gold ones among them, and their chance rates' sum."""

    solutions: Counter[str] = field(default_factory=Counter)
    gold: Counter[str] = field(default_factory=Counter)
    by_size: dict[int, Counter[str]] = field(default_factory=dict)  # solutions per number of solutions of the item

    def add(self, entry: LabelledItem, words: list[frozenset[str]]) -> None:
        size = self.by_size.setdefault(len(words), Counter())
        for found in words:
            size.update(found)
        self.gold.update(words[entry.label])

    def finish(self) -> None:
        for size in self.by_size.values():
            self.solutions.update(size)

    def chance(self, word: str) -> float:
        """The word's chance rate: the mean of 1/solutions over the solutions that contain it."""
        return sum(size[word] / k for k, size in self.by_size.items()) / self.solutions[word]


def _count(entries: Sequence[LabelledItem], words: Sequence[list[frozenset[str]]]) -> dict[str, _Counts]:
    """The counts per language: the item's language column, else (key "") each word's script, split later."""
    counts: dict[str, _Counts] = {}
    for entry, per_solution in zip(entries, words):
        language = entry.language or ""
        found = counts.get(language)
        if found is None:
            found = counts[language] = _Counts()
        found.add(entry, per_solution)
    for found in counts.values():
        found.finish()
    return counts


def _language_cues(language: str, tested: list[str], counts: _Counts, alpha: float) -> LanguageWords:
    """Test every word of one language; keep those beyond chance after Holm's correction."""
    p_values = []
    chances = [counts.chance(word) for word in tested]
    for word, chance in zip(tested, chances):
        n, k = counts.solutions[word], counts.gold[word]
        # A share at or below chance cannot come out; 1.0 keeps Holm's order of the others exact.
        p_values.append(binomial_greater(k, n, chance) if k > n * chance else 1.0)
    adjusted = holm(p_values)
    cues = [
        CueWord(language, word, counts.solutions[word], counts.gold[word], chance, p, float(a), ())
        for word, chance, p, a in zip(tested, chances, p_values, adjusted)
        if a < alpha
    ]
    cues.sort(key=lambda c: (c.p_value, -c.solutions, c.word))
    return LanguageWords(language, len(tested), tuple(cues))


def _with_items(
    languages: list[LanguageWords], entries: Sequence[LabelledItem], words: Sequence[list[frozenset[str]]]
) -> list[LanguageWords]:
    """The cues with the ids of the items that contain them (one pass, once the few cues are known)."""
    keys = {(cue.language, cue.word) for found in languages for cue in found.cues}
    if not keys:
        return languages
    cue_words = {word for _, word in keys}
    items: dict[tuple[str, str], list[str]] = {key: [] for key in keys}
    for entry, per_solution in zip(entries, words):
        for word in set().union(*(found & cue_words for found in per_solution)):
            key = (entry.language or word_script(word), word)
            if key in items:
                items[key].append(entry.item.id)
    return [
        LanguageWords(
            found.language,
            found.tested,
            tuple(replace(cue, items=tuple(items[cue.language, cue.word])) for cue in found.cues),
        )
        for found in languages
    ]


def cue_words(
    entries: Sequence[LabelledItem],
    words: Sequence[list[frozenset[str]]],
    alpha: float = ALPHA,
    min_count: int = MIN_COUNT,
) -> list[LanguageWords]:
    """Per language, the words in at least ``min_count`` solutions that mark the gold one beyond chance."""
    tested: dict[str, tuple[list[str], _Counts]] = {}
    for column_value, counts in _count(entries, words).items():
        for word, n in counts.solutions.items():
            if n >= min_count:
                language = column_value or word_script(word)
                tested.setdefault(language, ([], counts))[0].append(word)
    found = [_language_cues(language, tested[language][0], tested[language][1], alpha) for language in sorted(tested)]
    return _with_items(found, entries, words)


# --------------------------------------------------------------------------- the solution-only baseline


def _baseline_result(
    run: StoredRun, scores: Sequence[ItemScore], labels: Mapping[str, LabelledItem]
) -> BaselineResult | None:
    """A run's accuracy (acc and acc_norm) against the analysed labels, each tested against chance."""
    judged = [(s, labels[s.item_id]) for s in scores if s.item_id in labels]
    if not judged:
        return None
    chance = sum(e.chance for _, e in judged) / len(judged)
    correct = sum(s.prediction == e.label for s, e in judged)
    correct_norm = sum(s.prediction_norm == e.label for s, e in judged)
    n = len(judged)
    return BaselineResult(
        run.label,
        n,
        RuleTest("acc", n, correct, chance, binomial_greater(correct, n, chance)),
        RuleTest("acc_norm", n, correct_norm, chance, binomial_greater(correct_norm, n, chance)),
        frozenset(s.item_id for s, e in judged if s.prediction == e.label),
    )


def stored_baselines(
    project: Project, entries: Sequence[LabelledItem], known: Mapping[str, Template] | None = None
) -> list[BaselineResult]:
    """Every solution-only run stored in the workspace, judged on ``entries`` (none without a workspace)."""
    workspace = project.workspace
    if workspace is None:
        return []
    try:  # a connection of the calling thread (a screen computes this in a worker)
        conn = workspace.conn if workspace.read_only else open_existing(workspace.path, timeout=5.0)
    except PiqaError:
        return []
    labels = {e.item.id: e for e in entries}
    items = [e.item for e in entries]
    try:
        found = []
        for run in stored_runs(conn, known):
            if run.baseline and (result := _baseline_result(run, stored_scores(conn, run, items), labels)):
                found.append(result)
        return found
    except sqlite3.Error:
        return []
    finally:
        if conn is not workspace.conn:
            conn.close()


# --------------------------------------------------------------------------- shortcuts


def _word_shortcuts(
    entries: Sequence[LabelledItem], words: Sequence[list[frozenset[str]]], languages: Sequence[LanguageWords]
) -> dict[str, list[str]]:
    """Items whose gold solution alone holds a significant cue word, with the reason."""
    cues = {(cue.language, cue.word): cue for found in languages for cue in found.cues}
    out: dict[str, list[str]] = {}
    for entry, per_solution in zip(entries, words):
        others = frozenset().union(*(w for k, w in enumerate(per_solution) if k != entry.label))
        for word in sorted(per_solution[entry.label] - others):
            cue = cues.get((entry.language or word_script(word), word))
            if cue is not None:
                out.setdefault(entry.item.id, []).append(
                    f"the word '{word}' is only in the gold solution (gold in {cue.gold} of the "
                    f"{cue.solutions} solutions with it)"
                )
    return out


def _length_shortcuts(
    entries: Sequence[LabelledItem],
    biases: Sequence[tuple[LengthBias, list[list[int]]]],
    baselines: Sequence[BaselineResult],
    alpha: float,
) -> dict[str, list[str]]:
    """Items where a length rule beyond chance picks gold and a solution-only run picks it too."""
    out: dict[str, list[str]] = {}
    for bias, lengths in biases:
        for rule, chosen in ((bias.longer, max), (bias.shorter, min)):
            if not rule.significant(alpha, LENGTH_RULES):
                continue
            for entry, values in zip(entries, lengths):
                if _rule_picks(values, chosen) != entry.label:
                    continue
                run = next((b.run for b in baselines if entry.item.id in b.picks_gold), None)
                if run is not None:
                    out.setdefault(entry.item.id, []).append(
                        f"'{rule.name}' picks gold, and the solution-only run {run} does too"
                    )
    return out


# --------------------------------------------------------------------------- the report


def _percent(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "—"


def _p(p_value: float) -> str:
    return f"p = {p_value:.2g}" if p_value >= 1e-4 else "p < 0.0001"


def _safe(text: object) -> str:
    return terminal_safe(text, one_line=True)


@dataclass(frozen=True)
class ArtifactReport:
    """Every artifact measured on a set, with the items a shortcut answers; ``lines()`` says it in plain words."""

    items: int  # items in the set
    labelled: int  # items with a label to measure (decided by the votes, else the file's gold)
    decided: int  # of those, labels the votes or an adjudication decided
    lengths: tuple[LengthBias, ...]
    positions: tuple[PositionBalance, ...]
    words: tuple[LanguageWords, ...]
    baselines: tuple[BaselineResult, ...]
    shortcuts: tuple[Shortcut, ...]
    alpha: float = ALPHA
    min_count: int = MIN_COUNT

    @cached_property
    def shortcut_ids(self) -> frozenset[str]:
        return frozenset(s.item_id for s in self.shortcuts)

    def to_json(self) -> dict[str, object]:
        return {
            "items": self.items,
            "labelled": self.labelled,
            "decided": self.decided,
            "alpha": self.alpha,
            "min_count": self.min_count,
            "length": [b.to_json() for b in self.lengths],
            "position": [p.to_json() for p in self.positions],
            "words": [w.to_json() for w in self.words],
            "baselines": [b.to_json() for b in self.baselines],
            "baseline_hint": None if self.baselines else BASELINE_HINT,
            "shortcuts": [s.to_json() for s in self.shortcuts],
        }

    def lines(self) -> list[str]:
        """The report in plain text, data passed through the terminal-safe renderer."""
        head = [
            f"Annotation artifacts over {self.labelled} of {self.items} items with a label "
            f"({self.decided} decided by the votes or an adjudication, the rest the file's gold label).",
        ]
        if not self.labelled:
            return [*head, "Nothing to measure: no item has a label."]
        return [
            *head,
            *self._length_lines(),
            *self._position_lines(),
            *self._word_lines(),
            *self._baseline_lines(),
            *self._shortcut_lines(),
        ]

    def _length_lines(self) -> list[str]:
        out = ["", "Length"]
        for bias in self.lengths:
            out.append(
                f"  In {bias.unit}: the gold solution is the longest in {bias.gold_longest} items "
                f"({_percent(bias.gold_longest, bias.items)}), the shortest in {bias.gold_shortest} "
                f"({_percent(bias.gold_shortest, bias.items)}); the longest length is shared in {bias.tied_longest}."
            )
            for rule in (bias.longer, bias.shorter):
                verdict = (
                    "beyond chance: a length shortcut"
                    if rule.significant(self.alpha, LENGTH_RULES)
                    else "not beyond chance"
                )
                out.append(
                    f"    '{rule.name}' is right on {rule.correct} of {rule.answered} items "
                    f"({_percent(rule.correct, rule.answered)}; chance {rule.chance:.1%}; {_p(rule.p_value)}, "
                    f"{verdict})."
                )
        return out

    def _position_lines(self) -> list[str]:
        out = ["", "Label position"]
        for balance in self.positions:
            total = sum(balance.counts)
            shares = ", ".join(f"solution {k + 1}: {n} ({_percent(n, total)})" for k, n in enumerate(balance.counts))
            verdict = "unbalanced beyond chance" if balance.p_value < self.alpha else "balanced within chance"
            out.append(
                f"  Items with {balance.solutions} solutions: {shares}; {verdict} "
                f"({balance.test} test against equal shares, {_p(balance.p_value)})."
            )
        return out

    def _word_lines(self) -> list[str]:
        out = ["", "Words that mark the gold solution"]
        if not self.words:
            return [*out, f"  No word is in {self.min_count} or more solutions: nothing to test."]
        for found in self.words:
            where = f"  {_safe(found.language)}: {found.tested} words tested (each in {self.min_count}+ solutions)"
            if not found.cues:
                out.append(f"{where}; none marks the gold solution beyond chance (Holm, α = {self.alpha}).")
                continue
            out.append(f"{where}; {len(found.cues)} mark the gold solution beyond chance (Holm, α = {self.alpha}):")
            for cue in found.cues:
                ids = ", ".join(_safe(i) for i in cue.items[:SHOWN]) + (" …" if len(cue.items) > SHOWN else "")
                out.append(
                    f"    '{_safe(cue.word)}': gold in {cue.gold} of {cue.solutions} solutions with it "
                    f"({_percent(cue.gold, cue.solutions)}; chance {cue.chance:.0%}; Holm {_p(cue.adjusted)}) "
                    f"— in {len(cue.items)} items: {ids}"
                )
        return out

    def _baseline_lines(self) -> list[str]:
        out = ["", "Solution-only baseline (the model sees the solutions, not the prompt)"]
        if not self.baselines:
            return [*out, f"  {BASELINE_HINT}"]
        for baseline in self.baselines:
            for test in (baseline.acc, baseline.acc_norm):
                verdict = (
                    "beyond chance: the solutions alone give the answer away"
                    if test.p_value < self.alpha
                    else ("not beyond chance")
                )
                out.append(
                    f"  {_safe(baseline.run)} {test.name}: {test.correct} of {test.answered} "
                    f"({_percent(test.correct, test.answered)}; chance {test.chance:.1%}; {_p(test.p_value)}, {verdict})."
                )
        return out

    def _shortcut_lines(self) -> list[str]:
        out = ["", f"Items a shortcut answers: {len(self.shortcuts)}"]
        for shortcut in self.shortcuts[: SHOWN * 4]:
            out.append(f"  {_safe(shortcut.item_id)}: {_safe('; '.join(shortcut.reasons))}")
        if len(self.shortcuts) > SHOWN * 4:
            out.append(f"  … and {len(self.shortcuts) - SHOWN * 4} more (the queue 'shortcut' lists them all)")
        return out


def analyse(
    entries: Sequence[LabelledItem],
    items: int | None = None,
    decided: int = 0,
    baselines: Sequence[BaselineResult] = (),
    alpha: float = ALPHA,
    min_count: int = MIN_COUNT,
) -> ArtifactReport:
    """The report over labelled items (``items``: how many the set has in all, labelled or not)."""
    entries = [e for e in entries if len(e.item.solutions) >= 2]
    words = solution_words(entries)
    measured = []
    for unit in ("characters", "words"):
        lengths = solution_lengths(entries, unit)
        measured.append((length_bias(entries, unit, lengths), lengths))
    languages = cue_words(entries, words, alpha, min_count)
    reasons = _word_shortcuts(entries, words, languages)
    for item_id, why in _length_shortcuts(entries, measured, baselines, alpha).items():
        reasons.setdefault(item_id, []).extend(why)
    shortcuts = tuple(Shortcut(e.item.id, tuple(reasons[e.item.id])) for e in entries if e.item.id in reasons)
    return ArtifactReport(
        len(entries) if items is None else items,
        len(entries),
        decided,
        tuple(bias for bias, _ in measured),
        tuple(position_balance(entries)),
        tuple(languages),
        tuple(baselines),
        shortcuts,
        alpha,
        min_count,
    )


def labelled_items(project: Project, items: Sequence[Item] | None = None) -> tuple[list[LabelledItem], int]:
    """``items`` (default: all) with the label to trust — the votes' decision, else the file's gold — and how
    many of those labels the votes or an adjudication decided; items without either are left out."""
    items = project.items if items is None else items
    found = decisions(project)
    columns = language_columns(project.dataset.meta_columns)
    out, decided = [], 0
    for item in items:
        decision = found.get(item.id)
        label = decision.label if decision is not None and decision.label is not None else item.label
        if label is None or not 0 <= label < len(item.solutions):
            continue
        decided += decision is not None and decision.label is not None
        language = next((v for c in columns if (v := item.meta.get(c, "").strip())), None)
        out.append(LabelledItem(item, label, language))
    return out, decided


def artifact_report(
    project: Project, items: Sequence[Item] | None = None, known: Mapping[str, Template] | None = None
) -> ArtifactReport:
    """The artifacts of ``items`` (default: the project's current items), with the stored solution-only runs."""
    items = project.items if items is None else items
    entries, decided = labelled_items(project, items)
    return analyse(entries, len(items), decided, stored_baselines(project, entries, known))
