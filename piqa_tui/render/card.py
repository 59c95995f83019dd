"""A Hugging Face dataset card (README.md) for a dataset and its workspace, ready to publish.

The card follows the Hub's dataset card template (the sections of cards such
as PIQA's): YAML metadata, then description, structure, creation,
considerations and additional information. What the tool knows is written as
fact — languages from the data, fields, an example, splits, label balance,
the curation steps, votes and agreement, model results — and everything it
cannot know is marked ``[More Information Needed]`` (``FILL``), as Hub cards
mark it, never invented. The sections on annotation, curation and limitations
are in ``render.card_creation``.

The card is written from data (column names, values, annotators' names,
guideline questions), and it is read on the Hub, in a browser that obeys a
right-to-left override and hides ESC, BEL and C1 characters. So the card
holds none of them: the Markdown shows each as the visible escape stdout
prints (``\\x1b``, ``\\u202e``: ``terminal_safe``), and the YAML metadata
writes a value that holds one double-quoted, with the same escape, which
YAML reads back as the exact value (the data file's name still matches).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import yaml

from piqa_tui.core import strict_json
from piqa_tui.core.authoring.kept import suggestion_rows
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import Dataset
from piqa_tui.core.dataset.writing import current_rows
from piqa_tui.core.quality.artifacts import ALPHA, LENGTH_RULES, ArtifactReport, RuleTest, artifact_report
from piqa_tui.core.release.folder import SplitFiles
from piqa_tui.core.release.splits import split_column
from piqa_tui.core.report.languages import (
    LanguageReport,
    detect_languages,
    language_columns,
)
from piqa_tui.core.report.stats import DatasetStats, compute_stats
from piqa_tui.core.round.declaration import ROLES, Round
from piqa_tui.core.round.guidelines import guideline_questions, guidelines_in_force
from piqa_tui.core.round.origin import MACHINE_KINDS, correction_by_origin
from piqa_tui.core.round.recorded import assignment_in_force, round_in_force
from piqa_tui.core.round.stages import HEAVY_CORRECTION, STAGES, correction_rates, correction_summary, stage_of
from piqa_tui.core.scoring.templates import Template
from piqa_tui.core.text.graphemes import snap_to_boundary
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.card_creation import (
    FILL,
    CardFacts,
    considerations_section,
    creation_section,
    gather_facts,
    ids,
    model_results,
    pseudonymise,
)
from piqa_tui.render.markdown import fenced, inline_code, markdown_table, one_line
from piqa_tui.render.stats import SHOWN_BREAKDOWNS

CARD_COLUMNS = 100  # a file wider than this is described by its first columns and a line saying so
# The Hub's size buckets (size_categories), by number of items.
SIZE_BUCKETS = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
)
EXAMPLE_VALUES = 3


@dataclass(frozen=True)
class CardOptions:
    """What the card's metadata takes from the user: ``None`` leaves a placeholder to fill."""

    pretty_name: str | None = None
    license: str | None = None
    split: str = "test"
    known_templates: Mapping[str, Template] | None = (
        None  # to recognise the templates of cached scores (default: shipped)
    )
    pseudonyms: bool = False  # annotators and editors named "annotator N", not as the workspace records them
    release: str | None = None  # the file a release wrote (``export --card``): the card describes it, not the work
    # A release folder (``export --release``): each split's files, the columns' types, and what the folder adds.
    splits: tuple[SplitFiles, ...] = ()
    features: tuple[tuple[str, str], ...] = ()
    release_notes: tuple[str, ...] = ()
    dropped: frozenset[str] = frozenset()  # columns a release leaves out (``--drop-columns``)
    question_columns: bool = False  # the release holds the round's question columns (``export --decided``)
    # ``export --readable-ids``: release id -> the id the workspace knows the item by, for what the card looks up
    workspace_ids: tuple[tuple[str, str], ...] = ()

    def held_ids(self, items: Sequence[Item]) -> list[str]:
        """The workspace's ids of ``items`` (a release may show them under readable ids)."""
        known = dict(self.workspace_ids)
        return [known.get(item.id, item.id) for item in items]


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` items."""
    return next((name for limit, name in SIZE_BUCKETS if n < limit), "n>1B")


def front_matter(
    dataset: Dataset, items: list[Item], languages: LanguageReport, options: CardOptions
) -> dict[str, object]:
    """The card's YAML metadata (the keys the Hub reads), placeholders where nothing is known."""
    return {
        "pretty_name": options.pretty_name or FILL,
        "language": languages.codes or [FILL],
        "license": options.license or FILL,
        "task_categories": ["multiple-choice"],
        "task_ids": ["multiple-choice-qa"],
        "size_categories": [size_category(len(items))],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": s.name, "path": s.parquet} for s in options.splits]
                or [{"split": options.split, "path": options.release or dataset.name}],
            }
        ],
        **({"dataset_info": dataset_info(options)} if options.splits else {}),
    }


def dataset_info(options: CardOptions) -> dict[str, object]:
    """A release folder's ``dataset_info``: each column's type and each split's rows (``datasets`` checks
    the rows it loads against them)."""
    return {
        "features": [{"name": name, "dtype": dtype} for name, dtype in options.features],
        "splits": [{"name": s.name, "num_bytes": s.num_bytes, "num_examples": s.items} for s in options.splits],
    }


class _CardDumper(yaml.SafeDumper):
    """YAML for the card: a string holding a character ``terminal_safe`` escapes is written double-quoted."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """A double-quoted scalar for a value with a control character: there, its visible escape is a YAML escape."""
    quoted = '"' if terminal_safe(value) != value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=quoted)


_CardDumper.add_representer(str, _represent_str)


def yaml_block(data: dict[str, object]) -> str:
    """``data`` between --- lines: quoted wherever YAML would misread a value (colons, quotes, '#'), and no
    control character written raw (``\\u202e`` in a double-quoted string reads back as the character)."""
    text = yaml.dump(
        data, Dumper=_CardDumper, allow_unicode=True, sort_keys=False, default_flow_style=False, width=10_000
    )
    return "---\n" + terminal_safe(text) + "---\n"


def dataset_card(project: Project, options: CardOptions = CardOptions(), items: list[Item] | None = None) -> str:
    """The whole card as Markdown with YAML front matter, for ``items`` (default: the current items)."""
    items = project.items if items is None else items
    dataset = project.dataset
    stats = compute_stats(items, [c for c in dataset.meta_columns if c not in options.dropped])
    languages = detect_languages(items, dataset.meta_columns)
    facts = gather_facts(project, items, languages)
    if options.pseudonyms:
        pseudonymise(facts)
    body = [
        f"# Dataset Card for {options.pretty_name or FILL}",
        "",
        *what_is_described(project, items, options, facts),
        *description_section(dataset, items, stats, languages, model_results(project, items, options.known_templates)),
        *structure_section(project, items, stats, options, facts),
        *creation_section(project, facts),
        *extra_questions_section(project, options.held_ids(items)),
        *annotation_round_section(project),
        *correction_section(project, options.held_ids(items)),
        *suggestions_section(project, options.held_ids(items)),
        *considerations_section(facts),
        *doubt_lines(project, options),
        *annotation_artifacts_section(project, items, options, facts.rows),
        *additional_section(options),
    ]
    outline = table_of_contents(body)
    head = body.index("## Dataset Description")  # the title and what the card describes come before the contents
    markdown = "\n".join([*body[:head], "## Table of Contents", "", *outline, "", *body[head:]]).rstrip("\n")
    # What the data holds is shown, never obeyed: every control and bidi character as its visible escape.
    return yaml_block(front_matter(dataset, items, languages, options)) + "\n" + terminal_safe(markdown) + "\n"


def doubt_lines(project: Project, options: CardOptions) -> list[str]:
    """The count of labels in doubt, under the known limitations (nothing without items two annotators share)."""
    from piqa_tui.core.quality.audit import audit_labels
    from piqa_tui.core.quality.doubt import DOUBT_BELOW

    if project.workspace is None:
        return []
    audit = audit_labels(project, known=options.known_templates, annotators=False)
    if audit.crowdlab is None:
        return []
    runs = len(audit.evidence.models)
    return [
        f"- {audit.in_doubt_count} of {audit.scored} labels checked against the votes are in doubt: their CROWDLAB "
        f"label-quality score (the votes weighted by each annotator's agreement with the others, and {runs} stored "
        f"model run{'s' if runs != 1 else ''}) is below {DOUBT_BELOW}. `piqa-tui audit` lists them with the reasons.",
        "",
    ]


def table_of_contents(lines: list[str]) -> list[str]:
    """Links to the level-2 and level-3 headings, as the Hub's template lists them."""
    out = []
    for line in lines:
        match = re.match(r"(#{2,3}) (.+)", line)
        if match:
            title = match.group(2)
            anchor = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
            out.append(f"{'  ' * (len(match.group(1)) - 2)}- [{title}](#{anchor})")
    return out


def what_is_described(project: Project, items: list[Item], options: CardOptions, facts: CardFacts) -> list[str]:
    """One paragraph saying whether the card describes a release (a file as written) or work in progress."""
    source = inline_code(one_line(project.dataset.name))
    if options.release is not None:
        return [
            f"This card describes the release {inline_code(one_line(options.release))}, written by "
            f"`piqa-tui export --decided` from {source} and its workspace: {len(items)} items, with the labels "
            "the votes and adjudications decided, exactly as the release holds them.",
            "",
        ]
    if project.workspace is None:
        return [f"This card describes the file {source} as it is: {len(items)} items.", ""]
    edited = [item.id for item in project.items if item.id in project.state.edited]  # in file order
    unsaved = (
        f"{len(edited)} edited item{'s' if len(edited) != 1 else ''} {'is' if len(edited) == 1 else 'are'} "
        f"not saved to the file ({ids(edited, facts.rows)})"
        if edited
        else "every edit is saved to the file"
    )
    return [
        f"**Work in progress.** This card describes {source} with its workspace's edits, as curation stands now: "
        f"{unsaved}, and the label balance is the label column's, before the votes' decisions. "
        "For the card of what is released, write it with `piqa-tui export PATH --decided --to OUT --card README.md`, "
        "or run `piqa-tui card OUT` on the released file.",
        "",
    ]


# --------------------------------------------------------------------------- Dataset Description


def description_section(
    dataset: Dataset, items: list[Item], stats: DatasetStats, languages: LanguageReport, results: list[str]
) -> list[str]:
    """Links to fill, the summary (placeholder plus the facts), the task and the languages."""
    shape = ", ".join(f"{n} items with {k} solutions" for k, n in stats.solutions_per_item.items())
    lines = [
        "## Dataset Description",
        "",
        *(f"- **{what}:** {FILL}" for what in ("Homepage", "Repository", "Paper", "Point of Contact")),
        "",
        "### Dataset Summary",
        "",
        FILL,
        "",
        (
            f"{len(items)} PIQA-style items ({shape}): a prompt, candidate solutions that differ by a word or two, "
            "and one gold label naming the correct solution."
        ),
        "",
        "### Supported Tasks and Leaderboards",
        "",
        f"`multiple-choice`: given the prompt, choose the correct solution. Leaderboards: {FILL}",
        "",
    ]
    if results:
        lines += ["#### Model results", "", *results, ""]
    return lines + languages_section(languages)


def languages_section(languages: LanguageReport) -> list[str]:
    """The codes of the metadata, with the evidence for each (docs/card.md describes the mapping)."""
    lines = ["### Languages", ""]
    if languages.codes:
        listed = ", ".join(inline_code(c) for c in languages.codes)
        lines += [f"The items are in: {listed} (ISO 639 codes, found in the data as listed below).", ""]
        lines += markdown_table(["code", "evidence"], [[c, "; ".join(languages.sources[c])] for c in languages.codes])
    else:
        lines += [f"No language could be read from the data: {FILL}"]
    lines += ["", "Main script of each item (the script with most letters in its prompt and solutions):", ""]
    lines += markdown_table(["script", "items"], [[s, str(n)] for s, n in languages.scripts.items()])
    for column, values in languages.unmapped.items():
        shown = ", ".join(inline_code(v) for v in values[:10]) + (" …" if len(values) > 10 else "")
        lines += [
            "",
            f"Values of the column {inline_code(column)} that name no language piqa-tui knows: {shown}. {FILL}",
        ]
    return lines + [""]


# --------------------------------------------------------------------------- Dataset Structure


def structure_section(
    project: Project, items: list[Item], stats: DatasetStats, options: CardOptions, facts: CardFacts
) -> list[str]:
    """An example item, the fields, the split and the label balance."""
    dataset = project.dataset
    lines = ["## Dataset Structure", "", "### Data Instances", ""]
    example = facts.example_item
    if example is None:
        lines += ["The dataset has no items.", ""]
    else:
        where = f"item {inline_code(example.id)}" if dataset.layout.id else f"row {example.row + 1} of the file"
        lines += [
            f"An example ({where}), as stored in the file (text in logical order):",
            "",
            *fenced(
                strict_json.dumps(
                    example_row(dataset, example, options.dropped), ensure_ascii=False, indent=2, default=str
                )[0],
                "json",
            ),
            "",
        ]
        lines += more_columns_note(len(dataset.columns), "the example shows")
    written = tuple(n for n, _ in options.features)
    extra = question_field_rows(project, options.held_ids(items)) if options.question_columns and not written else []
    lines += ["### Data Fields", "", *fields_table(dataset, items, options.dropped, written, extra), ""]
    lines += more_columns_note(len(dataset.columns), "the table lists")
    lines += ["### Data Splits", ""]
    if options.splits:
        lines += release_splits(options)
    else:
        lines += markdown_table(["split", "items", "file"], split_rows(dataset, items, options))
    if (column := split_column(dataset.meta_columns)) and not options.splits:
        lines += [
            "",
            f"The splits are the values of the column {inline_code(one_line(column))}, all in one file: the "
            f"metadata above loads the whole file as the split {inline_code(options.split)}; filter on the column, "
            "or publish one file per split.",
        ]
    lines += ["", "#### Label balance", ""]
    lines += markdown_table(
        ["gold label", "items", "share"],
        [[k, str(v), f"{v / max(stats.items, 1):.1%}"] for k, v in stats.gold_counts().items()],
    )
    shown = list(stats.categories.items())
    for column, counts in shown[:SHOWN_BREAKDOWNS]:
        lines += ["", f"#### Items per {inline_code(column)}", ""]
        lines += markdown_table(
            [one_line(column), "items"], [[one_line(k) or "(empty)", str(v)] for k, v in counts.items()]
        )
    if len(shown) > SHOWN_BREAKDOWNS:  # a table per column of a very wide file would bury the card
        hidden = len(shown) - SHOWN_BREAKDOWNS
        lines += ["", f"{hidden:,} more categorical columns: see `piqa-tui stats --json` or `stats --by COLUMN`."]
    return lines + [""]


def release_splits(options: CardOptions) -> list[str]:
    """A release folder's splits: items and files per split, and what the folder adds (``release_notes``)."""
    rows = [
        [one_line(s.name), str(s.items), inline_code(s.parquet), inline_code(s.text)]
        + ([inline_code(s.global_piqa)] if s.global_piqa else [])
        for s in options.splits
    ]
    head = ["split", "items", "Parquet", "text"] + (["Global PIQA TSV"] if options.splits[0].global_piqa else [])
    return [
        *markdown_table(head, rows),
        "",
        "Each split is its own file, in Parquet (what `datasets.load_dataset` reads, through `configs` above) and "
        "in the dataset's own text format (for pandas and spreadsheets); both hold the same rows and columns.",
        "",
        "#### Release files",
        "",
        *[f"- {note}" for note in options.release_notes],
    ]


def split_rows(dataset: Dataset, items: list[Item], options: CardOptions) -> list[list[str]]:
    """Items per split: per value of the file's split column when it has one, else the whole file as one split."""
    name = one_line(options.release or dataset.name)
    column = split_column(dataset.meta_columns)
    if column is None:
        return [[options.split, str(len(items)), name]]
    counts = Counter(item.meta.get(column, "") for item in items)
    return [
        [one_line(value) or "(empty)", str(n), f"{name} ({inline_code(column)} column)"] for value, n in counts.items()
    ]


def example_row(dataset: Dataset, item: Item, dropped: frozenset[str] = frozenset()) -> dict[str, object]:
    """The item's row as the file stores it (its current values), column by column (``dropped`` left out)."""
    row = current_rows(dataset, [item])[0]
    kept = [column for column in row if column not in dropped]
    shown: dict[str, object] = {column: row.get(column) for column in kept[:CARD_COLUMNS]}
    if dataset.layout.labels_file:  # PIQA keeps labels in a separate file, line by line
        shown["label"] = dataset.codec.encode(item.label, 0)
    return shown


def more_columns_note(columns: int, what: str) -> list[str]:
    """The line saying a very wide file's columns past CARD_COLUMNS were left out, and where to see them."""
    if columns <= CARD_COLUMNS:
        return []
    return [
        f"The file has {columns:,} columns; {what} the first {CARD_COLUMNS} (the others are named in the file's "
        "header; `piqa-tui stats --json` counts the values of each categorical one).",
        "",
    ]


def label_description(dataset: Dataset) -> str:
    codec = dataset.codec
    if codec.kind == "letter":
        letters = "/".join(codec.letters[: max(map(len, (i.solutions for i in dataset.items)), default=2)])
        return f"gold label: the letter ({letters}) of the correct solution"
    return f"gold label: the {codec.base}-based number of the correct solution"


def column_roles(dataset: Dataset) -> dict[str, str]:
    """What each column the program interprets holds."""
    layout = dataset.layout
    roles = {layout.prompt: "the prompt (goal): the situation or question"}
    roles.update({c: f"candidate solution {k + 1}" for k, c in enumerate(layout.solutions)})
    if layout.label:
        roles[layout.label] = label_description(dataset)
    if layout.id:
        roles[layout.id] = "item id"
    if layout.question:
        roles[layout.question] = "question type (cause or effect)"
    roles.update({c: "language or dialect of the item" for c in language_columns(dataset.meta_columns)})
    return roles


def shortened(value: str, limit: int = 60) -> str:
    """``value`` cut at a grapheme boundary near ``limit`` characters (never inside an Indic syllable or under a mark)."""
    if len(value) <= limit:
        return value
    return value[: snap_to_boundary(value, limit)] + "…"


def question_field_rows(project: Project, ids: list[str]) -> list[list[str]]:
    """The rows of the release's question columns (``<id>_votes``, ``<id>``, as ``export --decided`` writes them)
    for the fields table: what each holds and a few example values; none without a round that asks questions."""
    from piqa_tui.core.round.questions import project_answers, question_columns
    from piqa_tui.core.round.recorded import round_in_force

    declared = round_in_force(project.workspace)
    if declared is None or not declared.questions:
        return []
    columns = question_columns(declared.questions, project_answers(project), ids[:200])
    rows = []
    for question in declared.questions:
        holds = {
            f"{question.id}_votes": f"the answers to the round's question {inline_code(question.id)} ({question.kind}), "
            "a JSON list without names",
            question.id: f"the value its policy ({inline_code(question.policy)}) decides; empty where none is decided",
        }
        for name, what in holds.items():
            if name in columns:
                values = list(dict.fromkeys(v for v in columns[name] if v not in ("", "[]")))
                shown = "; ".join(inline_code(shortened(one_line(v))) for v in values[:EXAMPLE_VALUES])
                rows.append([inline_code(name), what, shown or "(empty)"])
    return rows


def fields_table(
    dataset: Dataset,
    items: list[Item],
    dropped: frozenset[str] = frozenset(),
    written: tuple[str, ...] = (),
    extra: list[list[str]] | None = None,
) -> list[str]:
    """Every column in file order (``dropped`` left out; a release folder's: the columns it ``written``): what
    it holds and a few example values; ``extra`` rows (the release's question columns) after them."""
    roles = column_roles(dataset)
    rows = current_rows(dataset, items[:200])  # examples from the first items are enough
    table = []
    for column in (list(written) or [c for c in dataset.columns if c not in dropped])[:CARD_COLUMNS]:
        if column not in dataset.columns:  # a column the release adds (votes, status, questions, PIQA's labels)
            table.append([inline_code(column), added_column_role(dataset, column), "(see the files)"])
            continue
        values = list(dict.fromkeys(one_line(r.get(column)) for r in rows if r.get(column) not in (None, "")))
        shown = "; ".join(inline_code(shortened(v)) for v in values[:EXAMPLE_VALUES])
        table.append([inline_code(column), roles.get(column, FILL), shown or "(empty)"])
    if dataset.layout.labels_file and not written:  # PIQA's labels live in a line-aligned file beside the items
        labels = list(dict.fromkeys(str(dataset.codec.encode(i.label, 0)) for i in items[:200]))
        holds = f"{label_description(dataset)}, one per line in {inline_code(dataset.layout.labels_file)}"
        table.append([inline_code("label"), holds, "; ".join(map(inline_code, labels[:EXAMPLE_VALUES]))])
    return markdown_table(["column", "holds", "example values"], table + (extra or []))


def added_column_role(dataset: Dataset, column: str) -> str:
    """What a column an export adds holds (``--vote-columns``, ``--flag-column``, the round's questions)."""
    if numbered := re.fullmatch(r"votes_(\d+)", column):
        return f"votes for solution {numbered.group(1)}"
    known = {
        "status": "the votes' decision status (agreed, adjudicated, …)",
        "flags": "the item's flag reasons, comma-separated",
        "label": label_description(dataset),
    }
    if column.endswith("_votes"):
        return f"the answers to the round's question {inline_code(column[: -len('_votes')])}"
    return known.get(column, "the value the round's question decides, or a column an export option adds")


# --------------------------------------------------------------------------- Annotation artifacts


def _rule_cell(rule: RuleTest, tests: int = 1) -> str:
    """A rule's accuracy, the items it answers and its p-value, marked when beyond chance."""
    if not rule.answered:
        return "— (every item tied)"
    mark = " **beyond chance**" if rule.significant(ALPHA, tests) else ""
    return f"{rule.correct}/{rule.answered} = {rule.correct / rule.answered:.1%} (p = {rule.p_value:.2g}){mark}"


def _artifact_tables(report: ArtifactReport) -> list[str]:
    """Length rules, label positions and the solution-only runs, one table each."""
    lines = markdown_table(
        [
            "length in",
            "gold longest",
            "gold shortest",
            "longest tied",
            "always pick the longer",
            "always pick the shorter",
        ],
        [
            [b.unit, str(b.gold_longest), str(b.gold_shortest), str(b.tied_longest)]
            + [_rule_cell(b.longer, LENGTH_RULES), _rule_cell(b.shorter, LENGTH_RULES)]
            for b in report.lengths
        ],
    )
    lines += [
        "",
        *markdown_table(
            ["solutions", "gold per position", "test against equal shares"],
            [
                [str(p.solutions), " / ".join(map(str, p.counts)), f"{p.test}, p = {p.p_value:.2g}"]
                for p in report.positions
            ],
        ),
    ]
    if report.baselines:
        lines += [
            "",
            *markdown_table(
                ["solution-only run", "acc", "acc_norm"],
                [[one_line(b.run), _rule_cell(b.acc), _rule_cell(b.acc_norm)] for b in report.baselines],
            ),
        ]
    else:
        lines += ["", "No solution-only baseline is stored: `piqa-tui score PATH --solution-only` scores one."]
    return lines


def annotation_artifacts_section(
    project: Project, items: list[Item], options: CardOptions, rows: dict[str, int] | None = None
) -> list[str]:
    """Shortcuts to the gold solution a model could take (``core.quality.artifacts``): length, position, cue
    words, the solution-only baseline, and the items a shortcut answers."""
    report = artifact_report(project, items, options.known_templates)
    lines = [
        "### Annotation artifacts",
        "",
        f"Measured over the {report.labelled} items with a label (the votes' decision, else the label column). "
        f"Accuracies are tested one-sided against chance with exact binomial tests (α = {ALPHA}; Bonferroni over "
        f"the {LENGTH_RULES} length rules); words are dedup's folded words, tested per language as in Gardner et al. "
        f"(2021), each in at least {report.min_count} solutions, with Holm's correction.",
        "",
    ]
    if not report.labelled:
        return lines
    lines += _artifact_tables(report)
    cues = [c for found in report.words for c in found.cues]
    tested = ", ".join(f"{one_line(w.language)}: {w.tested}" for w in report.words) or "none"
    lines += ["", f"Words tested per language: {tested}."]
    if cues:
        lines += [
            "",
            *markdown_table(
                ["language", "word", "gold / solutions with it", "p (Holm)", "items"],
                [
                    [
                        one_line(c.language),
                        inline_code(c.word),
                        f"{c.gold}/{c.solutions}",
                        f"{c.adjusted:.2g}",
                        ids(list(c.items), rows),
                    ]
                    for c in cues
                ],
            ),
        ]
    flagged = [s.item_id for s in report.shortcuts]
    lines += [
        "",
        f"Items a shortcut answers (a cue word only in the gold solution, or a length rule beyond chance "
        f"that a solution-only run follows): {len(flagged)}" + (f": {ids(flagged, rows)}." if flagged else "."),
    ]
    return lines + [""]


def correction_section(project: Project, ids: list[str]) -> list[str]:
    """How the items written or translated in the workspace were corrected (``core.round.stages``): the stages
    they reached and the character edit rate from the text they started from; nothing when none was."""
    wanted = set(ids)
    rates = {item_id: rate for item_id, rate in correction_rates(project).items() if item_id in wanted}
    summary = correction_summary(rates)
    if summary is None:
        return []
    reached = Counter(stage_of(project, item_id) for item_id in rates)
    return [
        "### Authoring and correction",
        "",
        f"{summary.items} items were written or machine-translated and then reviewed in the workspace "
        f"({', '.join(f'{reached[s]} at {s}' for s in STAGES if reached[s])}). The correction rate of an item is "
        "the character edit rate (normalised Levenshtein distance) between its text before the first correction "
        "and its text now.",
        "",
        *markdown_table(
            ["items corrected", "mean correction rate", f"corrected more than {HEAVY_CORRECTION:.0%}"],
            [[f"{summary.corrected}/{summary.items}", f"{summary.mean:.1%}", f"{summary.heavy:.1%}"]],
        ),
        "",
        *origin_lines(project, rates),
    ]


def origin_lines(project: Project, rates: dict[str, float]) -> list[str]:
    """How many of the released items began as a model's drafts or translations, and how much people changed
    them, per origin and model (``core.round.origin``); nothing when no item did."""
    rows = correction_by_origin(project, rates)
    machine = sum(row.items for row in rows if row.origin.startswith(MACHINE_KINDS))
    if not machine:
        return []
    return [
        f"{machine} of the {sum(row.items for row in rows)} began as a model's drafts or translations; every one "
        "was reviewed by a person, and no model wrote a gold label or a vote. By origin:",
        "",
        *markdown_table(
            ["origin", "items", "items corrected", "mean correction rate"],
            [[row.origin, str(row.items), f"{row.corrected}/{row.items}", f"{row.mean:.1%}"] for row in rows],
        ),
        "",
    ]


def suggestions_section(project: Project, ids: list[str]) -> list[str]:
    """How often people kept the model's suggestions on the released items, per job and model
    (``core.authoring.kept``); nothing when no model suggested anything for them."""
    rows = suggestion_rows(project, set(ids))
    if not rows:
        return []
    still = sum(row.open for row in rows)
    return [
        "### Model suggestions",
        "",
        "A model suggested values for these items (`classify`) or word-level changes of them (`correct`, "
        "`distractor`, `fill`); none reached an item without a person's decision. Kept: taken as the model "
        "wrote it; changed: taken in part or edited before it was kept; the kept rate is kept / reviewed"
        + (f"; {still} {'suggestion was' if still == 1 else 'suggestions were'} never decided." if still else "."),
        "",
        *markdown_table(
            ["job", "model", "reviewed", "kept", "changed", "turned down", "kept rate"],
            [
                [one_line(row.job), one_line(row.model), str(row.reviewed), str(row.kept), str(row.changed)]
                + [str(row.turned_down), row.rate_text()]
                for row in rows
            ],
        ),
        "",
    ]


# --------------------------------------------------------------------------- Annotation round


def annotation_round_section(project: Project) -> list[str]:
    """The round declared in the workspace: people per role and attribute (no names), validators per item,
    routing, extra questions, and the guideline version annotators worked under (none: no section)."""
    declared = round_in_force(project.workspace)
    if declared is None:
        return []
    people = declared.annotators
    lines = [
        "### Annotation round",
        "",
        f"The round {inline_code(declared.name or 'unnamed')} was declared in the workspace with "
        f"{len(people)} annotators (assignment seed {declared.seed}):",
        "",
        *markdown_table(["role", "annotators"], [[r, str(sum(r in a.roles for a in people))] for r in ROLES]),
        "",
        *_round_attributes(declared),
        _round_routing(declared, project),
        "",
        *_round_questions(declared),
        _round_guidelines(project),
        "",
    ]
    return lines


def _round_attributes(declared: Round) -> list[str]:
    """One line per attribute: how many annotators hold each value."""
    counts: dict[str, Counter[str]] = {}
    for person in declared.annotators:
        for key, values in person.attributes:
            counts.setdefault(key, Counter()).update(values)
    return [
        f"Annotators by {inline_code(key)}: "
        + ", ".join(f"{one_line(value)} {n}" for value, n in sorted(found.items()))
        + "."
        for key, found in counts.items()
    ] + ([""] if counts else [])


def _round_routing(declared: Round, project: Project) -> str:
    k = declared.validators_per_item
    routing = declared.routing
    rules = [f"validators from the item's {inline_code(c)}" for c in routing.same]
    rules += [f"never the item's {inline_code(c)}" for c in routing.never]
    rules += ["load balanced between validators"] if routing.balance else []
    assignment = assignment_in_force(project.workspace)
    pairs = sum(len(names) for names in assignment.items.values())
    shuffled = (
        " Each validator saw an item's solutions in an order of their own (shuffled per validator and item)."
        if declared.shuffle
        else ""
    )
    return (
        f"Each item is validated blind by {k} validator{'s' * (k != 1)}; routing: {'; '.join(rules) or 'none'}. "
        f"The assignment holds {pairs} (item, validator) pairs over {len(assignment.items)} items.{shuffled}"
    )


def _round_questions(declared: Round) -> list[str]:
    """The round's extra questions, where the round declares any."""
    questions = tuple(getattr(declared, "questions", ()) or ())
    if not questions:
        return []
    rows = [
        [
            inline_code(getattr(q, "id", "")),
            one_line(getattr(q, "text", "")),
            one_line(getattr(q, "kind", "")),
            one_line(getattr(q, "policy", "")),
        ]
        for q in questions
    ]
    return [
        "Besides the label, annotators answered:",
        "",
        *markdown_table(["id", "question", "kind", "decided by"], rows),
        "",
    ]


def _round_guidelines(project: Project) -> str:
    guidelines = guidelines_in_force(project.workspace)
    asked = guideline_questions(project.workspace)
    questions = (
        f" Annotators asked the lead {len(asked)} guideline question{'s' * (len(asked) != 1)}; "
        f"{sum(not q.open for q in asked)} answered."
        if asked
        else ""
    )
    if guidelines is None:
        return "No annotation guidelines are recorded in the workspace." + questions
    return (
        f"Annotators worked under the guidelines recorded in the workspace, version {guidelines.version} "
        f"(SHA-256 `{guidelines.sha256}`, recorded {guidelines.time[:10]})." + questions
    )


# --------------------------------------------------------------------------- Additional Information


def extra_questions_section(project: Project, ids: list[str]) -> list[str]:
    """The round's extra questions, their decided values and agreement (nothing without a round that asks any)."""
    from piqa_tui.core.round.questions import project_answers, questions_agreement
    from piqa_tui.core.round.recorded import round_in_force
    from piqa_tui.render.questions import card_questions_lines

    declared = round_in_force(project.workspace)
    if declared is None or not declared.questions:
        return []
    answers = project_answers(project)
    found = questions_agreement(declared.questions, answers)
    lines = card_questions_lines(declared.questions, answers, ids, found)
    return ["### Extra questions", "", *lines, ""]


def additional_section(options: CardOptions) -> list[str]:
    """Curators, licence, citation and contributions: the licence when known, the rest to fill."""
    licence = f"This dataset is released under the {inline_code(options.license)} licence." if options.license else FILL
    return [
        "## Additional Information",
        "",
        "### Dataset Curators",
        "",
        FILL,
        "",
        "### Licensing Information",
        "",
        licence,
        "",
        "### Citation Information",
        "",
        FILL,
        "",
        "### Contributions",
        "",
        FILL,
        "",
    ]
