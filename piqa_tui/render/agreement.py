"""Agreement reports as rows, Markdown, JSON and Rich tables: what ``agree``, the card and the TUI show.

The numbers are core's :class:`~piqa_tui.core.votes.agreement.AgreementReport`
and :class:`~piqa_tui.core.votes.agreement.AgreementBreakdown`; an undefined
value is written "undefined" (:func:`~piqa_tui.render.values.format_value`)
with its reason in the notes, never as 0 or 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from piqa_tui.core.text.terminal_safe import show_invisible
from piqa_tui.core.votes.agreement import MAX_WIDTH, MIN_ITEMS, PAIRS_IN_FULL, AgreementBreakdown, AgreementReport
from piqa_tui.core.votes.decisions import AgreementSummary, policy_spec
from piqa_tui.core.votes.policy import Policy
from piqa_tui.core.votes.uncertainty import Bootstrap, Interval, Intervals
from piqa_tui.core.workspace.vote_targets import Adjudication
from piqa_tui.render.markdown import markdown_table
from piqa_tui.render.safe_text import rich_text
from piqa_tui.render.values import format_value

if TYPE_CHECKING:
    from piqa_tui.core.round.positions import PositionReport  # only its type: the TUI need not load the test

# --------------------------------------------------------------------------- rows


def summary_header(report: AgreementReport) -> list[str]:
    """The measures table's header: its interval column only where intervals were computed."""
    interval = [interval_heading(report.intervals.bootstrap)] if report.intervals else []
    return ["measure", "value", "based on", *interval, "note"]


def summary_rows(report: AgreementReport) -> list[tuple[str, ...]]:
    """(measure, value, based on, [interval,] note) rows shared by the Rich and Markdown views."""
    f = report.fleiss
    fleiss_note = f"{f.raters_per_item} raters per item; left out: {f.items_left_out} items" if f.items_used else ""
    ac1, alpha, unanimous = report.ac1, report.krippendorff, report.unanimous
    intervals = report.intervals
    rows: list[tuple[str, ...]] = [
        ("Fleiss' κ", format_value(f.value), f"{f.items_used} items", f.reason or fleiss_note),
        ("Gwet's AC1", format_value(ac1.value), f"{ac1.n} items", ac1.reason or AC1_NOTE),
        ("Krippendorff's α (nominal)", format_value(alpha.value), f"{alpha.n} items", alpha.reason or ""),
        ("Unanimous", format_value(unanimous.value, "%"), f"{unanimous.n} items", unanimous.reason or ""),
    ]
    if intervals is None:
        return rows
    shown = (intervals.fleiss, intervals.ac1, intervals.krippendorff, None)
    return [(*row[:3], format_interval(i) if i else "", row[3]) for row, i in zip(rows, shown)]


AC1_NOTE = "holds up where one label dominates, unlike κ"


def interval_heading(bootstrap: Bootstrap) -> str:
    return f"{bootstrap.level:.0%} interval"


def format_interval(interval: Interval) -> str:
    """``[0.412, 0.538]``, or "undefined" (the reason is in the JSON)."""
    if interval.low is None or interval.high is None:
        return "undefined"
    return f"[{format_value(interval.low)}, {format_value(interval.high)}]"


def with_interval(value: float | None, interval: Interval | None) -> str:
    """A value and its interval in one cell: ``0.475 [0.412, 0.538]``."""
    if interval is None or value is None:
        return format_value(value)
    return f"{format_value(value)} {format_interval(interval)}"


def pair_rows(report: AgreementReport, *, without_intervals: bool = False) -> list[tuple[str, ...]]:
    """(pair, Cohen's κ, interval, items) for every pair of annotators that shares an item (none when the pairs
    are summarised: ``pair_summary_lines``). Needs intervals, unless ``without_intervals``: then (pair, κ,
    [interval,] items) — the table that stands for the annotator table's κ columns where they do not fit."""
    intervals = report.intervals
    if (intervals is None and not without_intervals) or report.pairs is not None:
        return []
    rows = []
    for i, a in enumerate(report.annotators):
        for b in report.annotators[i + 1 :]:
            kappa = report.cohen[a][b]
            if kappa.n:
                cells = [f"{show_invisible(a)} – {show_invisible(b)}", format_value(kappa.value)]
                if intervals is not None:
                    interval = intervals.cohen.get(a, {}).get(b)
                    cells.append(format_interval(interval) if interval else "undefined")
                rows.append((*cells, str(kappa.n)))
    return rows


def pair_header(report: AgreementReport) -> list[str]:
    heading = [interval_heading(report.intervals.bootstrap)] if report.intervals else []
    return ["pair", "Cohen's κ", *heading, "items"]


def pair_summary_lines(report: AgreementReport) -> list[str]:
    """The pairs' Cohen's κ in a few lines, past ``PAIRS_IN_FULL`` annotators ([] when every pair is listed)."""
    found = report.pairs
    if found is None:
        return []
    head = (
        f"Cohen's κ per pair, summarised: {found.annotators:,} annotators, more than the {PAIRS_IN_FULL} whose "
        "pairs are listed one by one"
    )
    if found.pairs is None:
        return [head, found.reason or ""]
    spread = (
        f"κ min {format_value(found.low)}, median {format_value(found.median)}, max {format_value(found.high)}"
        if found.defined
        else found.reason or ""
    )
    lines = [head, f"{found.pairs:,} pairs share items, {found.defined:,} of them with a κ: {spread}"]
    for title, listed in (("fewest shared items", found.fewest), ("lowest κ", found.lowest)):
        if listed:
            shown = "; ".join(
                f"{show_invisible(p.first)} – {show_invisible(p.second)} {format_value(p.kappa.value)} "
                f"({p.kappa.n} item{'s' * (p.kappa.n != 1)})"
                for p in listed
            )
            lines.append(f"{title}: {shown}")
    return lines


def method_line(report: AgreementReport) -> str:
    """How the intervals were made, and the caution if these votes are too few to say anything
    ("" without intervals or caution)."""
    method = f"{report.intervals.bootstrap.describe()}." if report.intervals else ""
    caution = f"Caution: {report.caution}." if report.caution else ""
    return " ".join(part for part in (caution, method) if part)


def annotator_header(report: AgreementReport, *, kappas: bool = True) -> list[str]:
    """The annotator table's header: a κ column per annotator (unless not ``kappas``), named with its invisible
    characters shown."""
    pairs = (f"κ {show_invisible(b)}" for b in (report.annotators if report.pairs is None and kappas else ()))
    return ["annotator", "votes", "% with majority", "% with gold", *pairs]


# What the annotator table's columns measure: said under every table, so no reader guesses.
ANNOTATOR_COLUMNS_NOTE = (
    "% with majority: the share of an annotator's votes that match the majority of the OTHER annotators' votes "
    "on the same item (their own vote left out; items where the others tie are skipped). "
    "% with gold: the share of their votes that equal the file's gold label."
)


def annotator_rows(report: AgreementReport, *, kappas: bool = True) -> list[tuple[str, ...]]:
    """Per annotator: votes, % with the majority of the others, % with gold, κ with each other annotator (those
    columns only while the pairs are listed in full: ``pair_summary_lines`` stands for them past that; and not
    without ``kappas``, where a table of pairs stands for them)."""
    rows = []
    others = report.annotators if report.pairs is None and kappas else ()
    for a in report.annotators:
        # Two names that differ by a zero-width character must not print alike.
        cells = [show_invisible(a), str(report.votes_per_annotator.get(a, 0))]
        cells.append(format_value(report.with_majority[a].value, "%"))
        cells.append(format_value(report.with_gold[a].value, "%") if a in report.with_gold else "—")
        cells += ["—" if a == b else format_value(report.cohen[a][b].value) for b in others]
        rows.append(tuple(cells))
    return rows


def notes(report: AgreementReport) -> list[str]:
    """Why each undefined pairwise or per-annotator value is undefined (one line each)."""
    lines = []
    listed = report.annotators if report.pairs is None else ()  # summarised pairs: no line per pair
    for i, a in enumerate(listed):
        for b in listed[i + 1 :]:
            if reason := report.cohen[a][b].reason:
                lines.append(f"κ {a}–{b}: {reason}")
    for label, per in (("majority", report.with_majority), ("gold", report.with_gold)):
        lines += [f"{a} vs {label}: {m.reason}" for a, m in per.items() if m.reason]
    return lines


def breakdown_header(breakdown: AgreementBreakdown) -> list[str]:
    intervals = next((r.intervals for r in breakdown.groups.values() if r.intervals), None)
    spread = [f"κ {interval_heading(intervals.bootstrap)}"] if intervals else []
    return [breakdown.column, "items", "Fleiss' κ", "Krippendorff's α", "unanimous", *spread, "Gwet's AC1", "caution"]


def breakdown_rows(breakdown: AgreementBreakdown) -> list[tuple[str, ...]]:
    """(group, items, Fleiss' κ, α, % unanimous, [κ interval,] AC1, caution) per group.

    The new columns come after the old ones, so a table pasted before reads the same from the left."""
    rows = []
    for g, r in breakdown.groups.items():
        cells = [g, str(r.n_items), format_value(r.fleiss.value), format_value(r.krippendorff.value)]
        cells.append(format_value(r.unanimous.value, "%"))
        if r.intervals:
            cells.append(format_interval(r.intervals.fleiss))
        ac1_interval = r.intervals.ac1 if r.intervals else None
        cells += [with_interval(r.ac1.value, ac1_interval), r.caution or ""]
        rows.append(tuple(cells))
    return rows


def breakdown_method(breakdown: AgreementBreakdown) -> str:
    """How the groups' intervals were made, and the rule behind the caution column."""
    intervals = next((r.intervals for r in breakdown.groups.values() if r.intervals), None)
    return CAUTION_RULE + (f" {intervals.bootstrap.describe()}, within each group." if intervals else "")


CAUTION_RULE = (
    f"caution: a group with fewer than {MIN_ITEMS} items with 2+ votes, or whose κ interval is wider than "
    f"{MAX_WIDTH}, is too small to say anything about its agreement."
)


# --------------------------------------------------------------------------- Markdown


def report_markdown(report: AgreementReport) -> str:
    """GitHub-flavoured Markdown tables, pasteable into a dataset card."""
    out = [f"{report.n_items} items, {report.n_votes} votes, {len(report.annotators)} annotators", ""]
    out += markdown_table(summary_header(report), summary_rows(report))
    if report.annotators:
        out += [""] + markdown_table(annotator_header(report), annotator_rows(report))
        out += ["", ANNOTATOR_COLUMNS_NOTE]
    if pairs := pair_rows(report):
        out += [""] + markdown_table(pair_header(report), pairs)
    if summary := pair_summary_lines(report):
        out += ["", *(f"{line}." if n == 0 else f"* {line}" for n, line in enumerate(summary))]
    if method := method_line(report):
        out += ["", method]
    out += [""] + [f"* {line}" for line in notes(report)] if notes(report) else []
    return "\n".join(out) + "\n"


def breakdown_markdown(breakdown: AgreementBreakdown) -> str:
    table = markdown_table(breakdown_header(breakdown), breakdown_rows(breakdown))
    return "\n".join([*table, "", breakdown_method(breakdown)]) + "\n"


def describe_policy(policy: Policy) -> str:
    """A decision policy in words: "majority 2 of 3", "unanimity of 4, at least 2 votes"."""
    if policy.kind == "majority":
        text = f"majority {policy.k} of {policy.n}"
    else:
        text = f"unanimity of {policy.n}"
    if policy.min_votes is not None:
        text += f", at least {policy.min_votes} votes"
    return text


def set_aside_reason(adjudication: Adjudication, held: bool = True) -> str:
    """Why an adjudication no longer decides its item, in one line (the TUI's status, ``agree``): the text it chose
    was edited since, or (``held`` False) this copy never had it — the adjudication came by file from a copy whose
    edits did not."""
    when = adjudication.time[:16].replace("T", " ")
    if not held:
        return (
            f"the adjudication by {adjudication.who} ({when}) decides nothing here: the solution text it chose was "
            "never in this copy (edited on another machine; a votes file carries no edits), so the votes decide "
            "until that edit arrives (workspace merge or sync) or a reviewer adjudicates anew"
        )
    return (
        f"the adjudication by {adjudication.who} ({when}) is set aside: the solution text it chose was edited "
        "since, so the votes decide again until a reviewer adjudicates anew"
    )


def set_aside_line(item_id: str, adjudication: Adjudication, held: bool = True) -> str:
    """One set-aside adjudication as ``agree`` lists it: the item, then the reason."""
    return f"{item_id}: {set_aside_reason(adjudication, held)}"


def set_aside_json(item_id: str, adjudication: Adjudication, held: bool = True) -> dict[str, Any]:
    return {
        "id": item_id,
        "who": adjudication.who,
        "time": adjudication.time,
        "reason": adjudication.reason,
        "text": adjudication.text,
        "chosen": None if not adjudication.cast.isdecimal() else int(adjudication.cast),
        "text_held_here": held,
    }


POSITIONS_HEADING = "position preference (positions as each annotator saw them; exact binomial test, Holm-adjusted):"


def position_heading(found: PositionReport) -> list[str]:
    """The lines above the position preference list: its heading when some vote's shown position is known, and
    how many votes were left out because the round shuffles and no order of theirs is recorded here."""
    lines = [POSITIONS_HEADING] if found.preferences else []
    if found.unordered:
        who = ", ".join(f"{show_invisible(name)} {n}" for name, n in sorted(found.unordered.items()))
        lines.append(
            f"position preference leaves out {sum(found.unordered.values())} votes ({who}): the round shuffles, "
            "and no order they were shown in is recorded here (a votes file carries none; workspace merge or "
            "sync bring the orders)"
        )
    return lines


def summary_heading(summary: AgreementSummary) -> str:
    """The policy in force and the items per status, on two lines."""
    counts = "  ·  ".join(f"{name} {count}" for name, count in summary.statuses.items())
    return f"policy {describe_policy(summary.policy)} ({policy_spec(summary.policy)})\n{counts}"


def summary_markdown(summary: AgreementSummary, dataset: str) -> str:
    """The whole agreement report as Markdown: what ``agree --markdown`` prints and the TUI copies or saves."""
    parts = [
        f"## Agreement: {dataset}",
        "",
        summary_heading(summary).replace("\n", "; "),
        "",
        report_markdown(summary.report),
    ]
    for breakdown in summary.breakdowns.values():
        parts += [f"### By {breakdown.column}", "", breakdown_markdown(breakdown)]
    return "\n".join(parts)


# --------------------------------------------------------------------------- JSON


def report_json(report: AgreementReport) -> dict[str, Any]:
    """Plain values (undefined → ``None``) plus ``reasons`` for each undefined one. Past ``PAIRS_IN_FULL``
    annotators ``cohen_kappa`` and ``cohen_items`` are ``None`` and ``cohen_pairs`` summarises the pairs."""
    summarised, cohen = report.pairs is not None, report.cohen.items()
    return {
        "n_items": report.n_items,
        "n_votes": report.n_votes,
        "annotators": list(report.annotators),
        "votes_per_annotator": dict(report.votes_per_annotator),
        "fleiss_kappa": report.fleiss.value,
        "fleiss_raters_per_item": report.fleiss.raters_per_item,
        "fleiss_items_used": report.fleiss.items_used,
        "fleiss_items_left_out": report.fleiss.items_left_out,
        "krippendorff_alpha": report.krippendorff.value,
        "krippendorff_items": report.krippendorff.n,
        "percent_unanimous": report.unanimous.value,
        "unanimous_items_counted": report.unanimous.n,
        "cohen_kappa": None if summarised else {a: {b: m.value for b, m in row.items()} for a, row in cohen},
        "cohen_items": None if summarised else {a: {b: m.n for b, m in row.items()} for a, row in cohen},
        "cohen_pairs": None if report.pairs is None else report.pairs.to_json(),
        "percent_with_majority": {a: m.value for a, m in report.with_majority.items()},
        "percent_with_gold": {a: m.value for a, m in report.with_gold.items()},
        "reasons": _reasons(report),
        "gwet_ac1": report.ac1.value,
        "gwet_ac1_items": report.ac1.n,
        "intervals": intervals_json(report.intervals),
        "caution": report.caution,
    }


def intervals_json(intervals: Intervals | None) -> dict[str, Any] | None:
    """Each interval as ``[low, high]`` (``None`` where there is none, its reason under ``reasons``), and the method."""
    if intervals is None:
        return None
    made = intervals.bootstrap
    named = {
        "fleiss_kappa": intervals.fleiss,
        "krippendorff_alpha": intervals.krippendorff,
        "gwet_ac1": intervals.ac1,
    }
    found: dict[str, Any] = {key: _bounds(i) for key, i in named.items()}
    found["cohen_kappa"] = {a: {b: _bounds(i) for b, i in row.items()} for a, row in intervals.cohen.items()}
    reasons: dict[str, Any] = {key: i.reason for key, i in named.items() if i.reason}
    cohen_reasons = {a: {b: i.reason for b, i in row.items() if i.reason} for a, row in intervals.cohen.items()}
    if any(cohen_reasons.values()):
        reasons["cohen_kappa"] = {a: row for a, row in cohen_reasons.items() if row}
    method = {
        "method": "percentile bootstrap over items",
        "resamples": made.resamples,
        "level": made.level,
        "seed": made.seed,
    }
    return {**found, **method, "reasons": reasons}


def _bounds(interval: Interval) -> list[float] | None:
    return None if interval.low is None or interval.high is None else [interval.low, interval.high]


def _reasons(report: AgreementReport) -> dict[str, Any]:
    """Why each undefined value is undefined, under the key of the value."""
    reasons: dict[str, Any] = {}
    for key, m in (
        ("fleiss_kappa", report.fleiss.measure),
        ("krippendorff_alpha", report.krippendorff),
        ("percent_unanimous", report.unanimous),
        ("gwet_ac1", report.ac1),
    ):
        if m.reason:
            reasons[key] = m.reason
    for key, per in (("percent_with_majority", report.with_majority), ("percent_with_gold", report.with_gold)):
        if undefined := {a: m.reason for a, m in per.items() if m.reason}:
            reasons[key] = undefined
    cohen_reasons = {a: {b: m.reason for b, m in row.items() if m.reason} for a, row in report.cohen.items()}
    if any(cohen_reasons.values()):
        reasons["cohen_kappa"] = {a: row for a, row in cohen_reasons.items() if row}
    return reasons


def breakdown_json(breakdown: AgreementBreakdown) -> dict[str, Any]:
    return {"column": breakdown.column, "groups": {g: report_json(r) for g, r in breakdown.groups.items()}}


# --------------------------------------------------------------------------- Rich

UNBOUNDED = 100_000  # a width no table reaches: where a table's own minimum width is measured


def fits(console: Console, options: ConsoleOptions, table: Table) -> bool:
    """Whether ``table`` fits the width without cutting a cell: every column at least as wide as its longest word
    ("undefined", an interval, a name). A table that does not fit is laid out narrower, never cut."""
    unbounded = options.update_width(UNBOUNDED)  # measured against the width, a table's minimum is cut to it
    return Measurement.get(console, unbounded, table).minimum <= options.max_width


def _title(text: str) -> Text:
    """A table's title as Rich styles a plain one, made safe."""
    return rich_text(text, "table.title", one_line=True)


def rich_table(
    title: Text, header: list[str], rows: Sequence[tuple[str, ...]], *, kappa_columns: bool = False
) -> Table:
    """A table whose first column (names, groups: data) is shown as text, and the others right-aligned figures;
    ``title`` is a ``Text`` its caller made with ``rich_text`` (safe from markup and control characters)."""
    table = Table(title=title)
    for j, col in enumerate(header):
        table.add_column(
            rich_text(col, one_line=True, highlight=j >= 4 and kappa_columns), justify="left" if j == 0 else "right"
        )
    for row in rows:
        table.add_row(rich_text(row[0], one_line=True, highlight=True), *row[1:])  # names are data, never markup
    return table


class ReportTables:
    """An agreement report as Rich tables: the measures, the annotators, and the notes. Where the annotators' κ
    columns do not fit the width, the annotator table leaves them out and a table of pairs gives them."""

    def __init__(self, report: AgreementReport) -> None:
        self.report = report

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        report = self.report
        summary = Table(title="Agreement", caption=f"{report.n_items:d} items · {report.n_votes:d} votes")
        for col in summary_header(report):
            summary.add_column(rich_text(col), justify="left" if col in ("measure", "note") else "right")
        for row in summary_rows(report):
            summary.add_row(*row[:-1], rich_text(row[-1], "dim"))  # the note names annotators
        yield summary
        narrow = False
        if report.annotators:
            per = rich_table(_title("Annotators"), annotator_header(report), annotator_rows(report), kappa_columns=True)
            if report.pairs is None and not fits(console, options, per):
                narrow = True  # the κ columns move to the table of pairs below
                per = rich_table(
                    _title("Annotators"), annotator_header(report, kappas=False), annotator_rows(report, kappas=False)
                )
            yield per
            yield rich_text(ANNOTATOR_COLUMNS_NOTE, "dim")
        if summarised := pair_summary_lines(report):
            yield Group(*(rich_text(line, "" if n == 0 else "dim") for n, line in enumerate(summarised)))
        if pairs := pair_rows(report, without_intervals=narrow):
            yield rich_table(_title("Cohen's κ per pair"), pair_header(report), pairs)
        if method := method_line(report):
            yield rich_text(method, "dim")
        if lines := notes(report):
            yield Group(*(rich_text(line, "dim") for line in lines))


class BreakdownTable:
    """An agreement breakdown as one Rich table, a row per group; where it does not fit the width, the figures,
    then the intervals in a second table, then the cautions as lines."""

    def __init__(self, breakdown: AgreementBreakdown) -> None:
        self.breakdown = breakdown

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        breakdown = self.breakdown
        # Rich styles a title given as str itself; given as Text (safe from markup), it takes the style from it.
        heading = f"Agreement by {breakdown.column}"  # the column's name is data
        table = Table(title=rich_text(heading, "table.title", one_line=True))
        for j, col in enumerate(breakdown_header(breakdown)):
            table.add_column(rich_text(col, one_line=True), justify="left" if j == 0 else "right")
        for row in breakdown_rows(breakdown):
            table.add_row(rich_text(row[0], one_line=True, highlight=True), *row[1:-1], rich_text(row[-1], "yellow"))
        if fits(console, options, table):
            yield table  # group names are data: shown as text, never as markup
        else:
            yield from narrow_breakdown(breakdown, _title(heading))
        yield rich_text(breakdown_method(breakdown), "dim")


def narrow_breakdown(breakdown: AgreementBreakdown, title: Text) -> RenderResult:
    """The breakdown for a narrow terminal: the figures, the intervals (when computed), each caution on a line."""
    groups = breakdown.groups
    figures = [
        (g, str(r.n_items), format_value(r.fleiss.value), format_value(r.krippendorff.value))
        + (format_value(r.unanimous.value, "%"), format_value(r.ac1.value))
        for g, r in groups.items()
    ]
    yield rich_table(
        title,
        [breakdown.column, "items", "Fleiss' κ", "Krippendorff's α", "unanimous", "Gwet's AC1"],
        figures,
    )
    found = next((r.intervals for r in groups.values() if r.intervals), None)
    if found is not None:
        heading = interval_heading(found.bootstrap)
        spread = [
            (g, format_interval(i.fleiss), format_interval(i.ac1))
            for g, i in ((g, r.intervals) for g, r in groups.items())
            if i is not None
        ]
        yield rich_table(
            rich_text(f"Intervals by {breakdown.column}", "table.title", one_line=True),
            [breakdown.column, f"κ {heading}", f"AC1 {heading}"],
            spread,
        )
    for g, r in groups.items():
        if r.caution:
            yield rich_text(f"caution, {g}: {r.caution}", "yellow")
