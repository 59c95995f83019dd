"""Agreement with its uncertainty: Gwet's AC1/AC2 against irrCAC, and bootstrap intervals that are
reproducible, equal to the figures of the resampled votes, and cover the true value at the nominal rate."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.votes.agreement import (
    MAX_WIDTH,
    MIN_ITEMS,
    VoteTable,
    agreement_by,
    agreement_report,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
)
from piqa_tui.core.votes.uncertainty import (
    Bootstrap,
    GwetWeights,
    Interval,
    bootstrap_intervals,
    linear_percentiles,
    weighted_figures,
)
from piqa_tui.render.agreement import breakdown_markdown, report_json, report_markdown
from tests.test_agreement import random_votes, rater_table_votes

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
WEIGHTS: list[GwetWeights] = ["identity", "linear", "quadratic", "ordinal"]

Votes = list[tuple[str, str, int]]


def irrcac_gwet(votes: Votes, k: int, weights: GwetWeights = "identity") -> float:
    """irrCAC's AC1/AC2 on the same votes: a subjects × raters frame, NaN where a rater did not vote."""
    pd = pytest.importorskip("pandas")
    raw = pytest.importorskip("irrCAC.raw")
    frame = pd.DataFrame([{"subject": i, "rater": a, "choice": float(c)} for i, a, c in votes]).pivot(
        index="subject", columns="rater", values="choice"
    )
    return float(
        raw.CAC(frame, weights=weights, categories=list(range(k)), digits=15).gwet()["est"]["coefficient_value"]
    )


# --------------------------------------------------------------------------- AC1 and AC2 against irrCAC


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize(("name", "k"), [("fleiss1971_diagnoses.csv", 5), ("irr_anxiety.csv", 6)])
def test_gwet_equals_irrcac_on_published_rater_tables(name: str, k: int, weights: GwetWeights) -> None:
    votes = rater_table_votes(name)
    assert gwet_ac2(votes, weights, k).value == pytest.approx(irrcac_gwet(votes, k, weights), abs=1e-12)


def test_ac1_equals_irrcac_on_the_sample_votes() -> None:
    votes = sample_votes()
    assert gwet_ac1(votes, 2).value == pytest.approx(irrcac_gwet(votes, 2), abs=1e-12)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_gwet_equals_irrcac_on_random_tables_with_missing_votes(weights: GwetWeights) -> None:
    rng = np.random.default_rng(27)
    for _ in range(40):
        votes, _, k = random_votes(rng, missing=0.25)
        ours = gwet_ac2(votes, weights, k)
        if ours.value is None:  # no item with 2+ votes: irrCAC divides by zero
            assert ours.n == 0
            continue
        assert ours.value == pytest.approx(irrcac_gwet(votes, k, weights), abs=1e-10)


def test_ac1_stays_high_where_kappa_collapses_on_a_dominant_label() -> None:
    """95 items all voted 0 by both, 5 where they split: κ is about 0, AC1 near 0.95 (irrCAC agrees)."""
    votes = [(f"i{i}", a, 0) for i in range(95) for a in "xy"]
    votes += [(f"s{i}", "x", 0) for i in range(5)] + [(f"s{i}", "y", 1) for i in range(5)]
    kappa = fleiss_kappa(votes, 2).value
    ac1 = gwet_ac1(votes, 2).value
    assert kappa is not None and ac1 is not None
    assert kappa < 0.0 and ac1 > 0.9
    assert ac1 == pytest.approx(irrcac_gwet(votes, 2), abs=1e-12)


def test_ac1_is_undefined_without_an_item_voted_twice() -> None:
    ac1 = gwet_ac1([("i1", "x", 0), ("i2", "y", 1)], 2)
    assert ac1.value is None and ac1.reason


# --------------------------------------------------------------------------- one resample equals its votes


def test_a_resample_gives_the_figures_of_the_votes_it_draws() -> None:
    """Each figure on a resample equals the reference function on the drawn votes written out item by item."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        votes, _, k = random_votes(rng, missing=0.2)
        table = VoteTable.from_votes(votes, k)
        n = len(table.items)
        m = fleiss_kappa(table).raters_per_item
        draws = rng.multinomial(n, np.full(n, 1 / n), size=3)
        found = weighted_figures(table, draws, m)
        for row, drawn in enumerate(draws):
            copies = [
                (f"{item}#{c}", a, choice)
                for item, a, choice in votes
                for c in range(int(drawn[table.items.index(item)]))
            ]
            raters = {item: sum(v[0] == item for v in copies) for item, _, _ in copies}
            with_m = [v for v in copies if raters[v[0]] == m]  # κ stays on the items with the votes' modal count
            assert_same(found.fleiss[row], fleiss_kappa(with_m, k).value)
            assert_same(found.krippendorff[row], krippendorff_alpha(copies, k).value)
            assert_same(found.ac1[row], gwet_ac1(copies, k).value)
            for j, (lo, hi) in enumerate(found.pairs):
                a, b = table.annotators[lo], table.annotators[hi]
                assert_same(found.cohen[row, j], cohen_kappa(copies, a, b, n_categories=k).value)


def test_weights_of_one_give_the_report_itself() -> None:
    votes = rater_table_votes("fleiss1971_diagnoses.csv")
    table = VoteTable.from_votes(votes, 5)
    report = agreement_report(table)
    found = weighted_figures(table, np.ones(len(table.items)), report.fleiss.raters_per_item)
    assert found.fleiss[0] == pytest.approx(report.fleiss.value, abs=1e-12)
    assert found.krippendorff[0] == pytest.approx(report.krippendorff.value, abs=1e-12)
    assert found.ac1[0] == pytest.approx(report.ac1.value, abs=1e-12)


def assert_same(found: float, expected: float | None) -> None:
    if expected is None:
        assert np.isnan(found)
    else:
        assert found == pytest.approx(expected, abs=1e-10)


# --------------------------------------------------------------------------- intervals


def test_same_seed_same_bounds_other_seed_other_bounds() -> None:
    votes = rater_table_votes("fleiss1971_diagnoses.csv")
    first = agreement_report(votes, 5, bootstrap=Bootstrap(resamples=500, seed=7)).intervals
    again = agreement_report(votes, 5, bootstrap=Bootstrap(resamples=500, seed=7)).intervals
    other = agreement_report(votes, 5, bootstrap=Bootstrap(resamples=500, seed=8)).intervals
    assert first == again
    assert first is not None and other is not None and first.fleiss != other.fleiss


def test_interval_bounds_are_numpys_percentiles_bit_for_bit() -> None:
    """The bounds are ``np.percentile``'s very floats (the sign of a zero included), on sizes from 1 up, ties,
    mixed zeros, huge and tiny values, and levels that put an index on, between and past the ends."""
    rng = np.random.default_rng(1)
    pools = [
        lambda n: rng.normal(size=n),
        lambda n: rng.choice([-0.0, 0.0, 0.5, -0.5, 1.0, 1 / 3], size=n),
        lambda n: np.round(rng.normal(size=n), 2),
        lambda n: rng.uniform(-1, 1, size=n) * rng.choice([1e-300, 1.0, 1e300]),
    ]
    for trial in range(2000):
        values = pools[trial % 4](int(rng.integers(1, 60 if trial % 3 else 3000)))
        kept = values.copy()
        for level in (0.95, 0.9, 0.5, 0.99, 1 / 3, 0.0, 1.0):
            percents = [50 * (1 - level), 50 * (1 + level)]
            assert linear_percentiles(values, percents).tobytes() == np.percentile(values, percents).tobytes()
        assert values.tobytes() == kept.tobytes()  # the values given are left as they were


def test_interval_holds_the_value_and_cohen_covers_every_pair() -> None:
    votes = rater_table_votes("fleiss1971_diagnoses.csv")
    report = agreement_report(votes, 5, bootstrap=Bootstrap())
    assert report.intervals is not None
    for value, interval in (
        (report.fleiss.value, report.intervals.fleiss),
        (report.krippendorff.value, report.intervals.krippendorff),
        (report.ac1.value, report.intervals.ac1),
    ):
        assert interval.low is not None and interval.high is not None and value is not None
        assert interval.low < value < interval.high
    pairs = {(a, b) for a, row in report.intervals.cohen.items() for b in row}
    assert pairs == {(a, b) for a in report.annotators for b in report.annotators if a != b}


def test_many_annotators_resample_items_one_by_one() -> None:
    """With too many annotators to pool items by their votes, items are resampled as an index matrix;
    the two ways give intervals that agree to bootstrap noise on the same kind of votes."""
    rng = np.random.default_rng(11)
    few, many = simulated_votes(rng, 400, theta=0.8, people=3), simulated_votes(rng, 400, theta=0.8, people=60)
    wide = [agreement_report(v, 2, bootstrap=Bootstrap()).intervals for v in (few, many)]
    assert wide[0] is not None and wide[1] is not None
    widths = [w.fleiss.width for w in wide]
    assert widths[0] is not None and widths[1] is not None
    assert widths[1] == pytest.approx(widths[0], rel=0.3)


def test_undefined_figures_have_no_interval_and_say_why() -> None:
    report = agreement_report([(f"i{i}", a, 0) for i in range(40) for a in "xy"], 2, bootstrap=Bootstrap())
    assert report.intervals is not None
    assert report.intervals.fleiss == Interval.undefined(report.fleiss.reason or "")
    assert report.intervals.ac1.low == 1.0  # AC1 is 1 on every resample: every vote agrees
    data = report_json(report)
    assert (
        data["intervals"]["fleiss_kappa"] is None
        and "expected agreement is 1" in data["intervals"]["reasons"]["fleiss_kappa"]
    )
    json.dumps(data, allow_nan=False)


# --------------------------------------------------------------------------- coverage on simulated votes


def simulated_votes(rng: np.random.Generator, n_items: int, theta: float, people: int, raters: int = 3) -> Votes:
    """Each rater copies the item's true label with probability θ, else draws one from the same
    skewed marginal (0.8, 0.2): every vote then has that marginal and the population κ is θ²."""
    truth = (rng.random(n_items) < 0.2).astype(int)
    votes = []
    for i in range(n_items):
        names = rng.choice(people, raters, replace=False) if people > raters else range(raters)
        for a in names:
            choice = truth[i] if rng.random() < theta else int(rng.random() < 0.2)
            votes.append((f"i{i}", f"p{a}", int(choice)))
    return votes


def true_ac1(theta: float, pi: tuple[float, float] = (0.8, 0.2)) -> float:
    """Population AC1 of :func:`simulated_votes`: agreement θ² + (1 - θ²)Σπ², chance Σπ(1 - π) / (q - 1)."""
    same = sum(p * p for p in pi)
    p_a = theta**2 + (1 - theta**2) * same
    p_e = sum(p * (1 - p) for p in pi)
    return (p_a - p_e) / (1 - p_e)


def test_intervals_cover_the_true_value_at_about_the_nominal_rate() -> None:
    """300 simulated rounds of 200 items × 3 raters with known κ = θ² = 0.49: each 95% interval
    (κ, α, AC1, one pair's κ) holds the true value in 90–98% of the rounds."""
    rng = np.random.default_rng(2027)
    theta, rounds = 0.7, 300
    truth = {"fleiss": theta**2, "alpha": theta**2, "ac1": true_ac1(theta), "cohen": theta**2}
    hits = dict.fromkeys(truth, 0)
    for r in range(rounds):
        report = agreement_report(simulated_votes(rng, 200, theta, people=3), 2, bootstrap=Bootstrap(seed=r))
        found = report.intervals
        assert found is not None
        for key, interval in (
            ("fleiss", found.fleiss),
            ("alpha", found.krippendorff),
            ("ac1", found.ac1),
            ("cohen", found.cohen["p0"]["p1"]),
        ):
            assert interval.low is not None and interval.high is not None
            hits[key] += interval.low <= truth[key] <= interval.high
    coverage = {key: n / rounds for key, n in hits.items()}
    print("coverage of 95% intervals in", rounds, "rounds:", coverage)
    assert all(0.90 <= c <= 0.98 for c in coverage.values()), coverage


# --------------------------------------------------------------------------- groups


def test_each_group_is_resampled_on_its_own_items_and_small_ones_are_flagged() -> None:
    rng = np.random.default_rng(3)
    votes = simulated_votes(rng, 200, theta=0.8, people=3)
    group = {f"i{i}": "big" if i < 180 else "small" for i in range(200)}
    bootstrap = Bootstrap(resamples=300, seed=1)
    breakdown = agreement_by(votes, group, 2, column="dialect", bootstrap=bootstrap)
    for name, report in breakdown.groups.items():
        alone = agreement_report([v for v in votes if group[v[0]] == name], 2, bootstrap=bootstrap)
        assert report.intervals == alone.intervals
    assert breakdown.groups["big"].caution is None
    small = breakdown.groups["small"].caution
    assert small is not None and "too few items" in small and f"{MIN_ITEMS} needed" in small
    markdown = breakdown_markdown(breakdown)
    assert "| dialect | items | Fleiss' κ | Krippendorff's α | unanimous | κ 95% interval | Gwet's AC1 | caution |" in (
        markdown
    )
    assert "too few items" in markdown and "percentile bootstrap over items, 300 resamples, seed 1" in markdown


def test_a_group_with_a_wide_interval_is_flagged_too() -> None:
    rng = np.random.default_rng(4)
    votes = simulated_votes(rng, 32, theta=0.6, people=3)  # just enough items, a skewed label: a wide κ interval
    report = agreement_report(votes, 2, bootstrap=Bootstrap())
    assert report.intervals is not None and report.intervals.fleiss.width is not None
    assert report.intervals.fleiss.width > MAX_WIDTH
    assert report.caution is not None and report.caution.startswith("too uncertain to say anything: κ anywhere")


def test_scale_pools_items_so_100000_items_cost_little() -> None:
    """100,000 items × 3 annotators: pooled to at most 2³ kinds of item, the bootstrap draws 8 counts each time."""
    rng = np.random.default_rng(0)
    n = 100_000
    choice = (rng.random((n, 3)) < 0.3).astype(int)
    table = VoteTable.from_codes(
        np.repeat(np.arange(n), 3), [f"i{i}" for i in range(n)], np.tile(np.arange(3), n), ["a", "b", "c"],
        choice.ravel(), 2,
    )  # fmt: skip
    found = bootstrap_intervals(table, Bootstrap(), 3)
    assert found.fleiss.width is not None and found.fleiss.width < 0.02  # independent raters: κ ≈ 0 ± 0.006


# --------------------------------------------------------------------------- the command


def voted_sample(folder: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The Darija sample with the sample votes imported into its workspace."""
    dataset = folder / "darija-algerian.tsv"
    dataset.write_bytes((SAMPLES / "darija-algerian.tsv").read_bytes())
    assert main(["votes", "import", str(dataset), str(SAMPLES / "votes-darija-algerian.tsv")]) == 0
    capsys.readouterr()
    return dataset


def test_agree_shows_intervals_and_ac1_and_takes_seed_and_resamples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = voted_sample(tmp_path, capsys)

    def agree(*extra: str) -> dict:
        assert main(["agree", str(dataset), "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    found = agree()
    assert found["intervals"]["resamples"] == 1000 and found["intervals"]["seed"] == 0
    low, high = found["intervals"]["fleiss_kappa"]
    assert low < found["fleiss_kappa"] < high
    assert found["gwet_ac1"] == pytest.approx(gwet_ac1(sample_votes(), 2).value)
    assert agree("--seed", "5", "--resamples", "200") == agree("--seed", "5", "--resamples", "200")
    assert agree("--seed", "5", "--resamples", "200")["intervals"] != found["intervals"]
    assert agree("--resamples", "0")["intervals"] is None
    for column in found["by"].values():
        for group in column["groups"].values():
            assert "caution" in group and group["intervals"]["seed"] == 0

    assert main(["agree", str(dataset), "--markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "| measure | value | based on | 95% interval | note |" in markdown
    assert "| Gwet's AC1 |" in markdown and "| pair | Cohen's κ | 95% interval | items |" in markdown
    assert main(["agree", str(dataset)]) == 0
    assert "percentile bootstrap over items, 1000 resamples, seed 0" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        main(["agree", str(dataset), "--resamples", "-3"])
    assert refused.value.code == 2 and "--resamples" in capsys.readouterr().err


def sample_votes() -> Votes:
    with open(SAMPLES / "votes-darija-algerian.tsv", newline="", encoding="utf-8") as f:
        return [(r["item_id"], r["annotator"], int(r["choice"])) for r in csv.DictReader(f, delimiter="\t")]


def test_markdown_without_intervals_keeps_the_old_columns() -> None:
    report = agreement_report(rater_table_votes("irr_anxiety.csv"), 6)
    assert "| measure | value | based on | note |" in report_markdown(report)


def test_the_card_states_the_intervals_and_ac1_agree_gives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = voted_sample(tmp_path, capsys)
    assert main(["agree", str(dataset), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    card = tmp_path / "README.md"
    assert main(["card", str(dataset), "--to", str(card)]) == 0
    text = card.read_text(encoding="utf-8")
    low, high = found["intervals"]["fleiss_kappa"]
    assert f"| Fleiss' κ | {found['fleiss_kappa']:.3f} | 36 items | [{low:.3f}, {high:.3f}] |" in text
    assert f"| Gwet's AC1 | {found['gwet_ac1']:.3f} |" in text
    low, high = found["intervals"]["cohen_kappa"]["amina"]["sara"]
    assert f"| amina – sara | {found['cohen_kappa']['amina']['sara']:.3f} | [{low:.3f}, {high:.3f}] | 36 |" in text
    assert "95% intervals: percentile bootstrap over items, 1000 resamples, seed 0." in text
    assert "too few items to say anything" in text  # the categories hold 4-10 items each
