"""The dataset card's sections on how the data was made and what to watch for.

Annotation (the policy, the annotators, the agreement exactly as ``agree``
reports it), the curation steps the workspace recorded, model results from the
score cache, and the known limitations the tool can state. Each fact comes
from one core function; the parts only people know are left ``FILL``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from piqa_tui.core.dataset.checks import RULES, Problem, check_items
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.report.curation import Curation, curation_record
from piqa_tui.core.report.languages import LanguageReport
from piqa_tui.core.report.stats import categorical_columns
from piqa_tui.core.scoring.results import ItemScore, summarise
from piqa_tui.core.scoring.stored import StoredRun
from piqa_tui.core.scoring.stored import model_results as stored_model_results
from piqa_tui.core.scoring.templates import Template
from piqa_tui.core.text.characters import dominant_script
from piqa_tui.core.votes.decisions import (
    AgreementSummary,
    agreement_summary,
    decisions,
    policy_spec,
)
from piqa_tui.core.votes.policy import Status
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.agreement import (
    breakdown_markdown,
    describe_policy,
    report_markdown,
)
from piqa_tui.render.markdown import inline_code, markdown_table, one_line
from piqa_tui.render.values import format_figure

FILL = "[More Information Needed]"  # the Hub's own marker for what the authors must write
LISTED_IDS = 10  # item ids a limitation names before "and N more"
NAMED_ANNOTATORS = (
    "Annotators are named here as the workspace records them; check each agrees to be named, "
    "or write the card with `--pseudonyms`."
)
PSEUDONYMS_NOTE = (
    "Annotators are named by pseudonyms (annotator 1, annotator 2, … in the order of the agreement "
    "tables; editors who did not vote follow); the workspace keeps who is who."
)
SCORING_NOTE = (
    "Zero-shot log-likelihood scoring as in lm-evaluation-harness, against the label column: `acc` picks the "
    "solution with the highest summed log-probability, `acc_norm` divides it by the solution's length in "
    'characters, `acc_bytes` by its UTF-8 bytes ("undefined": the template\'s text is no longer known).'
)


@dataclass
class CardFacts:
    """What the card states about the items beyond their statistics, gathered once."""

    curation: Curation
    summary: AgreementSummary | None  # None: no votes recorded
    problems: list[Problem]
    languages: LanguageReport
    example_item: Item | None = None
    other_script: list[str] = field(default_factory=list)  # items mainly in a script other than the dataset's
    undecided: dict[str, list[str]] = field(default_factory=dict)  # status → item ids without a decided label
    notes: list[str] = field(default_factory=list)  # further limitations, as list entries
    rows: dict[str, int] | None = None  # item id → row of the file, when the file has no id column
    pseudonyms: bool = False  # annotators and editors are named "annotator N" (see :func:`pseudonymise`)


def gather_facts(project: Project, items: list[Item], languages: LanguageReport) -> CardFacts:
    """Curation, agreement, validation and script facts for ``items`` of ``project``."""
    raw_ids = project.dataset.raw_ids if items is project.items else None
    summary = agreement_summary(project, categorical_columns(project.items, project.dataset.meta_columns))
    facts = CardFacts(
        curation_record(project), summary if summary.report.n_votes else None, check_items(items, raw_ids), languages
    )
    decided = decisions(project) if facts.summary else {}
    for item in items:
        status = decided[item.id].status if item.id in decided else None
        if status in (Status.NEEDS_VOTES, Status.DISAGREEMENT):
            facts.undecided.setdefault(status.value, []).append(item.id)
    if project.dataset.layout.id is None:
        facts.rows = {item.id: item.row for item in items}
    facts.example_item = _example(project, items, facts, decided)
    facts.other_script = _other_script(items, languages)
    if labels := project.dataset.layout.labels_file:
        facts.notes.append(
            f"- The labels are in {inline_code(labels)}, a separate file (one label per line) that the "
            "Hub's data loaders do not join to the items: publish the labels in a column, or say how to join them."
        )
    return facts


def pseudonymise(facts: CardFacts) -> None:
    """Name every annotator and editor "annotator N" throughout the card: voters in the order of the agreement
    tables, then editors who did not vote. The figures do not change."""
    from dataclasses import replace

    from piqa_tui.core.votes.agreement import renamed_report

    people = list(facts.summary.report.annotators) if facts.summary else []
    people += [editor for editor in facts.curation.editors if editor not in people]
    names = {person: f"annotator {k}" for k, person in enumerate(people, 1)}
    if facts.summary is not None:
        summary = facts.summary
        breakdowns = {
            column: replace(b, groups={g: renamed_report(r, names) for g, r in b.groups.items()})
            for column, b in summary.breakdowns.items()
        }
        facts.summary = replace(summary, report=renamed_report(summary.report, names), breakdowns=breakdowns)
    facts.curation.editors = [names[e] for e in facts.curation.editors]
    facts.pseudonyms = True


def _example(project: Project, items: list[Item], facts: CardFacts, decided: dict) -> Item | None:
    """The first item with no problem and no flag whose votes (if any) agree with its label."""
    flawed = {p.item_id for p in facts.problems}
    for item in items:
        agreed = not decided or decided[item.id].status in (Status.AGREED, Status.ADJUDICATED)
        if item.id not in flawed and not project.state.flags.get(item.id) and agreed:
            return item
    return items[0] if items else None


def _other_script(items: list[Item], languages: LanguageReport) -> list[str]:
    main = next(iter(languages.scripts), None)
    if main is None or len(languages.scripts) == 1:
        return []
    return [i.id for i in items if (dominant_script(" ".join((i.prompt, *i.solutions))) or "none") != main]


def ids(found: list[str], rows: dict[str, int] | None = None) -> str:
    """Item ids as inline code, the first ``LISTED_IDS`` of them; with ``rows`` (a file without an id column,
    whose ids are the workspace's own) the rows of the file instead."""
    shown = ", ".join(
        f"row {rows[i] + 1}" if rows is not None and i in rows else inline_code(i) for i in found[:LISTED_IDS]
    )
    return shown + (f" and {len(found) - LISTED_IDS} more" if len(found) > LISTED_IDS else "")


def items_word(n: int, singular: str = "", plural: str = "") -> str:
    """ "1 item", "2 items", with the verb that agrees: ``items_word(n, "has", "have")``."""
    verb = (singular if n == 1 else plural) if singular else ""
    return f"{n} item{'s' if n != 1 else ''}" + (f" {verb}" if verb else "")


# --------------------------------------------------------------------------- Dataset Creation


def creation_section(project: Project, facts: CardFacts) -> list[str]:
    """Rationale and sources to fill; annotation, agreement and curation as recorded."""
    return [
        "## Dataset Creation",
        "",
        "### Curation Rationale",
        "",
        FILL,
        "",
        "### Source Data",
        "",
        "#### Initial Data Collection and Normalization",
        "",
        FILL,
        "",
        "#### Who are the source language producers?",
        "",
        FILL,
        "",
        "### Annotations",
        "",
        *annotation_lines(facts),
        "### Curation steps",
        "",
        *curation_lines(facts),
        "",
        "### Personal and Sensitive Information",
        "",
        FILL,
        "",
        *(
            [PSEUDONYMS_NOTE if facts.pseudonyms else NAMED_ANNOTATORS, ""]
            if facts.summary or facts.curation.editors
            else []
        ),
    ]


def annotation_lines(facts: CardFacts) -> list[str]:
    """The annotation process (policy, statuses), the annotators and the agreement."""
    lines = ["#### Annotation process", "", FILL, ""]
    summary = facts.summary
    if summary is None:
        return lines + [
            "No annotator votes are recorded in the workspace: the labels are those of the label column.",
            "",
            "#### Who are the annotators?",
            "",
            FILL,
            "",
        ]
    report = summary.report
    adjudicated = len(facts.curation.adjudicated)
    lines += [
        (
            f"Each annotator votes for the solution they judge correct; an item's label is decided by "
            f"{describe_policy(summary.policy)} (`{policy_spec(summary.policy)}`) of the votes, or by a reviewer's "
            f"adjudication ({items_word(adjudicated)} adjudicated)."
        ),
        "",
    ]
    lines += markdown_table(["status", "items"], [[k, str(v)] for k, v in summary.statuses.items()])
    lines += [
        "",
        "#### Who are the annotators?",
        "",
        FILL,
        "",
        f"{len(report.annotators)} annotators cast {report.n_votes} votes on {report.n_items} items:",
        "",
    ]
    lines += markdown_table(
        ["annotator", "votes"], [[a, str(report.votes_per_annotator.get(a, 0))] for a in report.annotators]
    )
    lines += ["", "#### Inter-annotator agreement", "", report_markdown(report).rstrip("\n"), ""]
    for breakdown in summary.breakdowns.values():
        lines += [f"##### By {breakdown.column}", "", breakdown_markdown(breakdown).rstrip("\n"), ""]
    return lines


def curation_lines(facts: CardFacts) -> list[str]:
    """The curation steps recorded in the workspace, one bullet each."""
    c = facts.curation
    lines = []
    if c.edit_actions:
        actions = f"{c.edit_actions} edit action{'s' if c.edit_actions != 1 else ''}"
        lines.append(
            f"- {actions} on {items_word(c.items_touched)} (by {', '.join(c.editors)}); "
            f"{items_word(c.items_edited, 'differs', 'differ')} from the source file now."
        )
    for decision, what in (
        ("keep", "resolved by keeping one item"),
        ("distinct", "marked as distinct items"),
        ("merge", "resolved by merging notes"),
    ):
        if n := c.clusters.get(decision):
            lines.append(f"- {n} duplicate cluster{'s' if n != 1 else ''} {what}.")
    for reason, n in c.flags.items():
        lines.append(
            f"- {items_word(n)} flagged {inline_code(reason)}"
            + (" (a duplicate of another item)." if reason == "duplicate" else ".")
        )
    if facts.summary:
        report = facts.summary.report
        lines.append(
            f"- {report.n_votes} votes by {len(report.annotators)} annotators on {items_word(report.n_items)}."
        )
    if c.adjudicated:
        lines.append(
            f"- {items_word(len(c.adjudicated))} adjudicated (label decided by a reviewer): {ids(c.adjudicated, facts.rows)}."
        )
    if c.gold_changed:
        lines.append(
            f"- {items_word(len(c.gold_changed), 'has', 'have')} a decided label other than the label column's: "
            f"{ids(c.gold_changed, facts.rows)}."
        )
    return lines or ["No curation steps are recorded in the workspace.", "", FILL]


# --------------------------------------------------------------------------- Considerations


def considerations_section(facts: CardFacts) -> list[str]:
    """Impact and biases to fill; the limitations the tool can state, then room for more."""
    return [
        "## Considerations for Using the Data",
        "",
        "### Social Impact of Dataset",
        "",
        FILL,
        "",
        "### Discussion of Biases",
        "",
        FILL,
        "",
        "### Other Known Limitations",
        "",
        FILL,
        "",
        *limitation_lines(facts),
        "",
    ]


def limitation_lines(facts: CardFacts) -> list[str]:
    """Facts a user of the data should know: decided labels, open items, failed checks, scripts."""
    c, lines = facts.curation, []
    if c.adjudicated:
        lines.append(
            f"- The label of {items_word(len(c.adjudicated))} was decided by adjudication: {ids(c.adjudicated, facts.rows)}."
        )
    if c.gold_changed:
        lines.append(
            f"- For {items_word(len(c.gold_changed))} the votes or an adjudication decide another label than "
            f"the label column holds: {ids(c.gold_changed, facts.rows)}."
        )
    for status, found in facts.undecided.items():
        lines.append(
            f"- {items_word(len(found), 'has', 'have')} no decided label yet ({status}): {ids(found, facts.rows)}."
        )
    by_rule: dict[str, list[str]] = {}
    for problem in facts.problems:
        by_rule.setdefault(problem.rule, []).append(problem.item_id)
    for rule, found in by_rule.items():
        found = list(dict.fromkeys(found))
        lines.append(
            f"- {items_word(len(found), 'fails', 'fail')} the check `{rule}` ({RULES[rule].summary}): {ids(found, facts.rows)}."
        )
    if c.duplicates:
        lines.append(
            f"- {items_word(len(c.duplicates), 'is', 'are')} flagged as a duplicate of another item "
            f"(left in the data unless the release drops them): {ids(c.duplicates, facts.rows)}."
        )
    return lines + facts.notes + script_lines(facts)


def script_lines(facts: CardFacts) -> list[str]:
    """Warnings on script coverage: items in another script, scripts or values that name no language."""
    languages, lines = facts.languages, []
    main = next(iter(languages.scripts), None)
    if facts.other_script:
        lines.append(
            f"- {items_word(len(facts.other_script), 'is', 'are')} mainly in another script than most items ({main}): "
            f"{ids(facts.other_script, facts.rows)}."
        )
    unnamed = [s for s in languages.unnamed_scripts if s != "none"]
    if unnamed:
        lines.append(
            f"- The script{'s' if len(unnamed) > 1 else ''} {', '.join(unnamed)} name no language by "
            "themselves: the metadata's `language` may need codes added by hand."
        )
    if "none" in languages.scripts:
        lines.append(
            f"- {items_word(languages.scripts['none'], 'has', 'have')} no letters of any script piqa-tui knows."
        )
    for column, values in languages.unmapped.items():
        lines.append(
            f"- {len(values)} value(s) of the column {inline_code(column)} name no known language; their codes are not in the metadata."
        )
    return lines


# --------------------------------------------------------------------------- Model results


def model_results(project: Project, items: list[Item], known: Mapping[str, Template] | None) -> list[str]:
    """Accuracy of every model and template scored in the workspace, on the items' current text
    (the same listing the TUI's results screen reads; a run whose template is not known here is left out)."""
    if project.workspace is None:
        return []
    rows = []
    conn = project.workspace.conn
    found = stored_model_results(conn, items) if known is None else stored_model_results(conn, items, known)
    scored = []
    for run, scores in found:
        summary = summarise(scores)
        if summary["n"]:
            scored.append((run, scores))
            rows.append(
                [
                    run.model_name,
                    run.template_name,
                    f"{summary['n']} of {len(items)}",
                    *(format_figure(summary, k) for k in ("acc", "acc_norm", "acc_bytes")),
                ]
            )
    if not rows:
        return []
    lines = [
        *markdown_table(["model", "template", "items scored", "acc", "acc_norm", "acc_bytes"], rows),
        "",
        SCORING_NOTE,
    ]
    return lines + group_results(project, items, scored)


def group_results(project: Project, items: list[Item], scored: list[tuple[StoredRun, list[ItemScore]]]) -> list[str]:
    """``acc`` of every run per value of each categorical column (and per country-specific flag), as
    ``score --by`` computes it (``report.comparison``); each cell with the number of items it is taken over."""
    from piqa_tui.core.errors import InputError
    from piqa_tui.core.report.comparison import RunScores, compare

    columns = categorical_columns(project.items, project.dataset.meta_columns)
    runs = [RunScores(f"{run.model_name} · {run.template_name}", scores) for run, scores in scored]
    try:
        comparison = compare(runs, items, columns)
    except InputError as err:  # a relevance flag that is neither yes nor no
        return ["", f"Per-group results are left out: {err}"]
    lines: list[str] = []
    for column, values in comparison.groups.items():
        table = [
            [one_line(value), *(_acc_cell(by_run.get(label)) for label in comparison.runs)]
            for value, by_run in values.items()
        ]
        lines += [
            "",
            f"**`acc` by {inline_code(column)}** (items scored in brackets):",
            "",
            *markdown_table([column, *comparison.runs], table),
        ]
    if comparison.discarded:
        lines += ["", f"Per-group figures leave out {items_word(len(comparison.discarded))} flagged `should_discard`."]
    return lines


def _acc_cell(figures: Mapping[str, object] | None) -> str:
    if not figures or not figures.get("n"):
        return "—"
    return f"{format_figure(figures, 'acc')} ({figures['n']})"
