"""``piqa-tui export PATH --to OUT``: the dataset with the workspace's edits, written atomically.

``--decided`` writes each agreed or adjudicated item's decided label (by the
dataset's policy) instead of the gold column, and says how many items of each
status it wrote and how many fail validation; ``--only-decided`` leaves out the
items the votes have not decided (disagreement, needs votes) and
``--drop-invalid`` those that fail validation (an error of ``validate``); items
adjudicated differently on two machines and not yet resolved are named on a
``conflicts`` line (released with the adjudication in force) and left out by
``--only-decided``;
``--make-default`` records those two choices as the project's release defaults
(workspace meta ``release_defaults``), which every later ``--decided`` export
applies and names (``--include-undecided`` / ``--keep-invalid`` override them
for one run); ``--vote-columns`` adds
``votes_1 … votes_N`` (the votes for solution 1 … N, numbered as people
number them, whatever the label column's own convention) and ``status``; ``--drop-flagged`` leaves out items
flagged for removal (e.g. duplicates resolved by keeping another copy). ``--origin-columns`` adds where each
item began (``origin``, ``origin_model``; ``core.round.origin``) and a translation's source beside it. ``--pseudonyms`` writes the columns
that name a person (the round's ``never`` columns, ``author``) as "annotator N", numbered as the card's
``--pseudonyms`` numbers them (``core.report.pseudonyms``); the workspace keeps who is who.
``--readable-ids`` gives items written in the workspace (``new-<hex>``) ids in the dataset's scheme, kept in
the workspace so every release gives the same (``core.report.release_ids``), and writes the mapping next to
OUT (``OUT-ids.tsv``: id, release_id).
With ``--decided`` each extra question of the round in force adds ``<id>_votes`` (its answers) and ``<id>``
(the value its policy decides).
OUT is never the dataset itself or its workspace; an existing OUT needs ``--force``.
``--release DIR`` (instead of ``--to``) writes a release folder to publish: one Parquet and one text file per
split, the card, the manifest, the guidelines and round (``release_folder``; docs/card.md, "Release folders").
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
    say,
    warn,
)
from piqa_tui.cli.commands.release_folder import (
    add_release_arguments,
    manifest_head,
    release_refusals,
    write_release_folder,
)
from piqa_tui.cli.exit_codes import OK
from piqa_tui.cli.progress import ProgressLine, progress_line, reading
from piqa_tui.core.dataset.checks import check_items
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.writing import (
    FORMATS,
    formula_cells,
    null_cells,
    output_files,
    output_format,
    output_table,
)
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.release.folder import SplitFiles
from piqa_tui.core.report.release_ids import keep_ids, readable_ids
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.votes.policy import Status
from piqa_tui.core.votes.release_defaults import RELEASE_DEFAULTS_KEY, ReleaseDefaults
from piqa_tui.core.workspace.log import now
from piqa_tui.core.workspace.project import ADJUDICATION, Project

if TYPE_CHECKING:
    from piqa_tui.core.votes.decisions import GoldChange
    from piqa_tui.core.votes.policy import Decision
    from piqa_tui.core.workspace.releases import Recorded

REMOVAL_FLAGS = ("remove", "duplicate")
REPORTED = (Status.AGREED, Status.ADJUDICATED, Status.AGAINST_GOLD, Status.DISAGREEMENT, Status.NEEDS_VOTES)
UNDECIDED = (Status.DISAGREEMENT, Status.NEEDS_VOTES)  # the file's label stands: no decision replaces it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("--to", metavar="OUT", help="output file; the extension picks the format")
    parser.add_argument("--format", choices=FORMATS, help="override the format ('piqa' = .jsonl plus -labels.lst)")
    parser.add_argument(
        "--decided", action="store_true", help="write the label decided by the votes (policy) where there is one"
    )
    undecided = parser.add_mutually_exclusive_group()
    undecided.add_argument(
        "--only-decided",
        action="store_true",
        help="with --decided (implied): leave out the items in disagreement or needing votes",
    )
    undecided.add_argument(
        "--include-undecided",
        action="store_true",
        help="with --decided (implied): write the undecided items this once, whatever the project's default",
    )
    invalid = parser.add_mutually_exclusive_group()
    invalid.add_argument(
        "--drop-invalid", action="store_true", help="leave out the items that fail validation (errors of validate)"
    )
    invalid.add_argument(
        "--keep-invalid",
        action="store_true",
        help="write the items that fail validation this once, whatever the project's default",
    )
    parser.add_argument(
        "--make-default",
        action="store_true",
        help="with --decided (implied): make this run's --only-decided/--drop-invalid the project's release "
        "defaults (neither given: clear them)",
    )
    parser.add_argument(
        "--card",
        metavar="FILE",
        help="also write the dataset card of the release to FILE (e.g. README.md): its counts, labels and splits",
    )
    parser.add_argument(
        "--vote-columns", action="store_true", help="add votes per choice and the decision status as columns"
    )
    parser.add_argument(
        "--drop-flagged", action="store_true", help="leave out items flagged for removal (remove, duplicate)"
    )
    parser.add_argument("--flag-column", action="store_true", help="add a 'flags' column with each item's flag reasons")
    parser.add_argument(
        "--origin-columns",
        action="store_true",
        help="add where each item began (origin: file, written, imported, drafted, translated; origin_model) and a "
        "translation's source beside it (source_goal, source_sol1, …)",
    )
    parser.add_argument(
        "--readable-ids",
        action="store_true",
        help="give new-<hex> ids the dataset's scheme (msa-031 …), the same in every release; "
        "writes the mapping to OUT-ids.tsv (with --release: kept in the workspace only)",
    )
    parser.add_argument(
        "--pseudonyms",
        action="store_true",
        help="write author columns as 'annotator 1', 'annotator 2', … numbered as the card's --pseudonyms",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace OUT if it exists, or the previous release of this dataset in DIR (never the dataset or its "
        "workspace)",
    )
    parser.add_argument(
        "--escape-formulas",
        action="store_true",
        help="CSV/TSV: prefix ' to cells beginning with = + - @ so spreadsheets show them as text "
        "(changes those values; off by default)",
    )
    add_release_arguments(parser)


def release_defaults(project: Project) -> ReleaseDefaults:
    """The project's release defaults (none when it has no workspace or never made any)."""
    text = project.workspace.get_meta(RELEASE_DEFAULTS_KEY) if project.workspace else None
    return ReleaseDefaults.parse(text) if text else ReleaseDefaults()


def set_release_defaults(project: Project, defaults: ReleaseDefaults) -> None:
    """Record ``defaults`` in the workspace meta, in one write (a merge carries the key to other machines)."""
    if project.workspace is None:
        raise PiqaError("making release defaults needs a workspace; open the dataset once in piqa-tui first")
    project.workspace.set_meta({RELEASE_DEFAULTS_KEY: defaults.to_json()})


@dataclass(frozen=True)
class ReleaseOptions:
    """What this run leaves out, after the project's defaults and this run's overrides."""

    decided: bool
    only_decided: bool
    drop_invalid: bool
    defaults: ReleaseDefaults
    overridden: tuple[str, ...] = ()

    @classmethod
    def of(cls, args: argparse.Namespace, project: Project) -> ReleaseOptions:
        decided = args.decided or args.only_decided or args.include_undecided or args.make_default
        decided = decided or args.release is not None
        if args.make_default:  # this run's options are the new defaults: the old ones do not apply
            return cls(decided, args.only_decided, args.drop_invalid, ReleaseDefaults())
        defaults = release_defaults(project) if decided else ReleaseDefaults()
        overridden = tuple(
            flag
            for flag, on, default in (
                ("--include-undecided", args.include_undecided, defaults.only_decided),
                ("--keep-invalid", args.keep_invalid, defaults.drop_invalid),
            )
            if on and default
        )
        only = args.only_decided or (defaults.only_decided and not args.include_undecided)
        drop = args.drop_invalid or (defaults.drop_invalid and not args.keep_invalid)
        return cls(decided, only, drop, defaults, overridden)

    def defaults_line(self) -> str | None:
        """The summary line naming the project's defaults this run applied (and what it overrode)."""
        if not self.defaults.words():
            return None
        line = "project defaults: " + ", ".join(self.defaults.words())
        if self.overridden:
            return f"{line} (overridden this run: {', '.join(self.overridden)})"
        return f"{line} (--include-undecided / --keep-invalid override them for one run)"


@dataclass
class Release:
    """What an export writes: the items, the gold labels the decided ones change, each item's decision
    (with ``--decided``), the ids that fail validation, and how many items each option left out."""

    items: list[Item]
    changes: list[GoldChange] = field(default_factory=list)
    found: dict[str, Decision] = field(default_factory=dict)
    invalid: set[str] = field(default_factory=set)
    left_out: dict[str, int] = field(default_factory=dict)
    conflicted: set[str] = field(default_factory=set)  # adjudicated differently on two machines, unresolved

    def statuses(self) -> dict[str, int]:
        """Items written per status, in the order a lead reads them."""
        counts = Counter(self.found[item.id].status for item in self.items)
        return {status.value: counts[status] for status in REPORTED}

    def conflicts_written(self) -> list[str]:
        """The ids written whose adjudication is in conflict, in file order."""
        return [i.id for i in self.items if i.id in self.conflicted]

    def invalid_written(self) -> int:
        return sum(item.id in self.invalid for item in self.items)


def export_items(
    project: Project, decided: bool, drop_flagged: bool, only_decided: bool = False, drop_invalid: bool = False
) -> Release:
    """The items to write, with (``decided``) their decided labels, leaving out what the options say."""
    from piqa_tui.core.votes.decisions import decisions, gold_changes

    release = Release(list(project.items))
    if decided or only_decided:
        release.found = found = decisions(project)
        release.conflicted = {c.item_id for c in project.conflicts() if c.field == ADJUDICATION}
        release.items = [
            i.with_changes(label=found[i.id].label) if found[i.id].label is not None else i for i in release.items
        ]
    if decided or only_decided or drop_invalid:
        problems = check_items(release.items, project.dataset.raw_ids)
        release.invalid = {p.item_id for p in problems if p.level == "error"}
    if drop_flagged:
        _leave_out(release, "flagged", lambda i: any(r in project.state.flags.get(i.id, {}) for r in REMOVAL_FLAGS))
    if only_decided:
        _leave_out(release, "undecided", lambda i: release.found[i.id].status in UNDECIDED)
        if release.conflicted:  # named only where there are some (the summary's JSON keeps its keys)
            _leave_out(release, "in conflict", lambda i: i.id in release.conflicted)
    if drop_invalid:
        _leave_out(release, "invalid", lambda i: i.id in release.invalid)
    if release.found:
        kept = {i.id for i in release.items}
        release.changes = [c for c in gold_changes(project, found=release.found) if c.id in kept]
    return release


def _leave_out(release: Release, why: str, leave: Callable[[Item], bool]) -> None:
    kept = [i for i in release.items if not leave(i)]
    release.left_out[why] = len(release.items) - len(kept)
    release.items = kept


def print_release(release: Release, only_decided: bool, drop_invalid: bool) -> None:
    """Say what the release holds per status, what fails validation, and what the options left out."""
    statuses = release.statuses()
    say("by status: " + ", ".join(f"{name.replace('-', ' ')} {n}" for name, n in statuses.items()))
    invalid = release.invalid_written()
    undecided = sum(statuses[s.value] for s in UNDECIDED)
    if undecided and not only_decided:
        keep = "keeps" if undecided == 1 else "keep"
        say(f"{_items(undecided)} not decided by the votes {keep} the file's label (--only-decided leaves them out)")
    say_conflicts(release)
    if invalid:
        verb = "fails" if invalid == 1 else "fail"
        say(f"{_items(invalid)} {verb} validation (piqa-tui validate lists why; --drop-invalid leaves them out)")
    else:
        say("no item written fails validation")
    left = [f"{n} {why}" for why, n in release.left_out.items() if why != "flagged" and n]
    if left:
        say("left out: " + ", ".join(left))


def say_conflicts(release: Release) -> None:
    """The line naming the items written whose adjudication is in conflict (made on two machines, unresolved)."""
    written = release.conflicts_written()
    if not written:
        return
    shown = ", ".join(terminal_safe(item_id, one_line=True) for item_id in written[:10])
    more = f" and {len(written) - 10} more" if len(written) > 10 else ""
    say(
        f"conflicts: {_items(len(written))} adjudicated differently on two machines ({shown}{more}) "
        f"{'carries' if len(written) == 1 else 'carry'} the adjudication in force; resolve with C in the TUI "
        "(queue conflicts), --only-decided leaves them out"
    )


def _items(n: int) -> str:
    return f"{n} item{'s' if n != 1 else ''}"


def _label_text(label: int | None) -> str:
    return "none" if label is None else str(label + 1)


def print_changes(changes: list[GoldChange], limit: int = 20) -> None:
    """Say which gold labels the decided ones replaced (solution numbers from 1, as on screen)."""
    print(
        f"{len(changes)} label{'s' if len(changes) != 1 else ''} changed from the gold column by the votes and adjudications"
    )
    for change in changes[:limit]:
        say(f"  {terminal_safe(change.id, one_line=True)}: {_label_text(change.gold)} → {_label_text(change.decided)}")
    if len(changes) > limit:
        print(f"  … and {len(changes) - limit} more (--json lists them all)")


def vote_columns(project: Project, items: list[Item]) -> dict[str, list[object]]:
    from piqa_tui.core.votes.decisions import choices, decisions

    width = max((len(i.solutions) for i in items), default=2)
    found = decisions(project)
    columns: dict[str, list[object]] = {f"votes_{k + 1}": [] for k in range(width)}
    columns["status"] = []
    for item in items:
        counts = list(choices(project, item.id).values())
        for k in range(width):
            columns[f"votes_{k + 1}"].append(str(counts.count(k)))
        columns["status"].append(found[item.id].status.value)
    return columns


def release_origin_columns(project: Project, items: list[Item]) -> dict[str, list[object]]:
    """``--origin-columns``: each item's origin and a translation's source; a name the dataset uses is one line."""
    from piqa_tui.core.round.origin import origin_columns

    columns = origin_columns(project, [item.id for item in items])
    clash = next((name for name in columns if name in project.dataset.columns), None)
    if clash is not None:
        raise PiqaError(f"{project.dataset.path.name} already has a column '{clash}'; export without --origin-columns")
    return {name: list[object](values) for name, values in columns.items()}


def question_release_columns(project: Project, items: list[Item]) -> dict[str, list[object]]:
    """The round's extra questions as columns of the release: ``<id>_votes`` (the answers) and ``<id>`` (the
    value the question's policy decides); none without a round or questions. A question named like a column
    of the dataset is refused (one line), never written over the column."""
    from piqa_tui.core.round.questions import project_answers, question_columns
    from piqa_tui.core.round.recorded import round_in_force

    declared = round_in_force(project.workspace)
    if declared is None or not declared.questions:
        return {}
    columns = question_columns(declared.questions, project_answers(project), [i.id for i in items])
    clash = next((name for name in columns if name in project.dataset.columns), None)
    if clash is not None:
        raise PiqaError(
            f"the round's question column '{clash}' is also a column of {project.dataset.path.name}; "
            "rename the question's id in the round file and import it again"
        )
    return {name: list[object](values) for name, values in columns.items()}


@dataclass
class Prepared:
    """An export's items as written: pseudonymised and renamed as asked, with their extra columns."""

    options: ReleaseOptions
    release: Release
    items: list[Item]
    extra: dict[str, list[object]]
    renamed: dict[str, str]
    names: dict[str, str] | None  # the pseudonyms (--pseudonyms)


def prepare(args: argparse.Namespace, project: Project, progress: ProgressLine) -> Prepared:
    """Decide, leave out, pseudonymise and rename as the options say: what the export writes."""
    options = ReleaseOptions.of(args, project)
    progress.show(f"{'deciding' if options.decided else 'checking'} {len(project.items):,} items")
    release = export_items(project, options.decided, args.drop_flagged, options.only_decided, options.drop_invalid)
    names = None
    if args.pseudonyms:
        columns, names = release_pseudonyms(project, release.items)
        release.items = pseudonymised(release.items, columns, names)
    items = release.items
    extra = vote_columns(project, items) if args.vote_columns else {}
    if options.decided:
        extra.update(question_release_columns(project, items))
    if args.flag_column:
        extra["flags"] = [",".join(sorted(project.state.flags.get(i.id, {}))) for i in items]
    if args.origin_columns:
        extra.update(release_origin_columns(project, items))
    renamed = readable_ids(project, items) if args.readable_ids else {}
    items = [item.with_changes(id=renamed[item.id]) if item.id in renamed else item for item in items]
    return Prepared(options, release, items, extra, renamed, names)


def run(args: argparse.Namespace) -> int:
    if (refusal := release_refusals(args)) is not None:
        raise PiqaError(refusal)
    if args.release is not None:
        return run_release(args)
    with progress_line(args) as progress:
        progress.show(reading(args))
        project = open_project(args, create=args.make_default or args.readable_ids)
        card = [Path(args.card)] if args.card else []
        id_file = [ids_path(Path(args.to))] if args.readable_ids else []
        project.check_outputs(
            [*output_files(project.dataset, Path(args.to), args.format), *card, *id_file], replace=args.force
        )  # before any work
        prepared = prepare(args, project, progress)
        options, release, items, extra, renamed = (
            prepared.options,
            prepared.release,
            prepared.items,
            prepared.extra,
            prepared.renamed,
        )
        decided = options.decided
        progress.show(f"writing {Path(args.to).name}")
        written = project.export(
            args.to,
            args.format,
            items=items,
            extra_columns=extra or None,
            replace=args.force,
            escape_formulas=args.escape_formulas,
        )
        if args.card:
            progress.show("writing the card")
            write_release_card(project, args, items, written[0], renamed)
        if args.readable_ids:
            write_ids(project, id_file[0], renamed)
        made = ReleaseDefaults(options.only_decided, options.drop_invalid) if args.make_default else None
        if made is not None:
            set_release_defaults(project, made)  # once the release it describes is written
    spreadsheet = written[0].suffix.lower() in (".csv", ".tsv", ".tab")
    formulas = formula_cells(*output_table(project.dataset, items, extra or None)) if spreadsheet else None
    json_lines = output_format(Path(args.to), args.format) in ("jsonl", "piqa")
    nulls = None if not json_lines else 0
    if json_lines and project.dataset.format == "parquet":  # a text file read as JSON holds no NaN: it is refused
        nulls = null_cells(*output_table(project.dataset, items, extra or None))
    if args.json:
        summary = _summary(project, release, written, formulas, options, made, args.escape_formulas)
        summary |= {"release_ids": renamed} if args.readable_ids else {}
        print_json(summary | ({"nan_as_null": nulls} if nulls is not None else {}))
        return OK
    dropped = len(project.items) - len(items)
    say(
        f"wrote {len(items)} items ({len(project.state.edited)} edited, {dropped} dropped) to {', '.join(map(str, written))}"
    )
    if line := options.defaults_line():
        say(line)
    if made is not None:
        say(_made_line(made))
    if decided:
        print_release(release, options.only_decided, options.drop_invalid)
        print_changes(release.changes)
    elif options.drop_invalid:
        say(f"left out {_items(release.left_out['invalid'])} that fail validation")
    if args.card:
        say(f"wrote the release's card to {args.card}")
    if args.readable_ids:
        say(
            f"renamed {_items(len(renamed))} written in the workspace; the mapping is in {id_file[0]} and the workspace"
        )
    if formulas:
        say(_formula_note(formulas, args.escape_formulas))
    if nulls:
        say(
            f"wrote {nulls} NaN or infinite number{'s' * (nulls != 1)} as null: JSON has no such number "
            "(export to .parquet keeps them)"
        )
    return OK


def run_release(args: argparse.Namespace) -> int:
    """``export --release DIR``: the release folder (``release_folder``), recorded in the workspace's history
    (``release``), then what it holds."""
    from piqa_tui.cli.commands.release_record import record_release, refuse_recorded_name
    from piqa_tui.core.dataset.reading import source_files
    from piqa_tui.core.release.folder import check_target

    with progress_line(args) as progress:
        progress.show(reading(args))
        project = open_project(args, create=True)  # the release is recorded in the workspace
        folder = Path(args.release).expanduser()
        project.check_outputs([folder], replace=True)  # never the dataset or a workspace, whatever --force says
        check_target(folder, args.force, [*source_files(project.dataset), project.workspace_path])  # its own line first
        refuse_recorded_name(project, folder, args.force)
        time = now()
        prepared, folder, splits = make_release(args, project, progress, time)
        record_release(project, args, folder, time)  # with the release defaults it was made under
        made = (
            ReleaseDefaults(prepared.options.only_decided, prepared.options.drop_invalid) if args.make_default else None
        )
        if made is not None:
            set_release_defaults(project, made)
    release, options = prepared.release, prepared.options
    if args.json:
        summary = _summary(project, release, [folder], None, options, made, args.escape_formulas)
        summary["splits"] = {files.name: files.items for files in splits}
        print_json(summary | ({"release_ids": prepared.renamed} if args.readable_ids else {}))
        return OK
    counts = ", ".join(f"{files.name} {files.items}" for files in splits)
    say(
        f"wrote the release {folder}: {_items(len(prepared.items))} in {len(splits)} split{'s' * (len(splits) != 1)} ({counts})"
    )
    say(f"recorded {folder.name} in the workspace's release history (piqa-tui release list {args.path})")
    if line := options.defaults_line():
        say(line)
    if made is not None:
        say(_made_line(made))
    print_release(release, options.only_decided, options.drop_invalid)
    print_changes(release.changes)
    if args.readable_ids:
        say(f"renamed {_items(len(prepared.renamed))} written in the workspace; the workspace keeps the mapping")
    missing = [flag for flag, value in (("--name", args.name), ("--license", args.license)) if not value]
    if missing:
        warn(f"the card's metadata has placeholders: pass {' and '.join(missing)} and write the release again")
    return OK


def make_release(
    args: argparse.Namespace, project: Project, progress: ProgressLine, time: str, *, changelog: bool = True
) -> tuple[Prepared, Path, list[SplitFiles]]:
    """Write the release folder ``args.release`` of ``project`` made at ``time``, with (``changelog``) its card's
    changelog against the previous recorded release; a rebuild (``release rebuild``) calls it on the workspace as
    the release found it."""
    from piqa_tui.cli.commands.release_record import changelog_notes
    from piqa_tui.core.dataset.reading import source_files
    from piqa_tui.core.release.folder import check_target

    folder = Path(args.release).expanduser()
    project.check_outputs([folder], replace=True)  # never the dataset or a workspace, whatever --force says
    check_target(folder, args.force, [*source_files(project.dataset), project.workspace_path])  # before any work
    prepared = prepare(args, project, progress)
    progress.show(f"writing the release {folder.name}")
    head = manifest_head(project, args, release_settings(args, prepared.options), time)
    notes = changelog_notes(project, build_recorded if changelog else None)
    folder, splits = write_release_folder(
        project, args, prepared.items, prepared.extra, head, prepared.names, notes, prepared.renamed
    )
    if args.readable_ids:
        keep_ids(project, prepared.renamed)
    return prepared, folder, splits


def build_recorded(project: Project, recorded: Recorded, folder: Path, copy: Path, changelog: bool) -> None:
    """Write the recorded release ``recorded`` to ``folder`` as it was made: its options and time, from ``copy``
    (the workspace as the release found it: ``core.workspace.releases.as_of``), by ``recorded.by``."""
    from piqa_tui.cli.commands.release_record import NOT_RECORDED

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([str(project.dataset.path), "--release", str(folder)])
    for key, value in recorded.args.items():
        if hasattr(args, key) and key not in NOT_RECORDED:
            setattr(args, key, value)
    args.workspace, args.annotator = str(copy), recorded.by
    then = open_project(args, create=True)
    try:
        with progress_line(args) as progress:
            make_release(args, then, progress, recorded.time, changelog=changelog)
    finally:
        if then.workspace is not None:
            then.workspace.close()


def release_settings(args: argparse.Namespace, options: ReleaseOptions) -> dict[str, object]:
    """The options a release was written with, as its manifest records them."""
    return {
        "decided": True,
        "only_decided": options.only_decided,
        "drop_invalid": options.drop_invalid,
        "project_defaults": json.loads(options.defaults.to_json()),
        "overridden": list(options.overridden),
        "drop_flagged": args.drop_flagged,
        "vote_columns": args.vote_columns,
        "flag_column": args.flag_column,
        "pseudonyms": args.pseudonyms,
        "readable_ids": args.readable_ids,
        "drop_columns": sorted(name.strip() for name in (args.drop_columns or "").split(",") if name.strip()),
        "split_by": args.split_by,
        "splits": list(args.splits),
        "global_piqa_tsv": args.global_piqa_tsv,
        "escape_formulas": args.escape_formulas,
    }


def ids_path(out: Path) -> Path:
    """Where ``--readable-ids`` writes its mapping: ``OUT-ids.tsv`` next to OUT."""
    return out.with_name(f"{out.stem}-ids.tsv")


def write_ids(project: Project, path: Path, renamed: dict[str, str]) -> None:
    """Write the mapping (id, release_id) and keep it in the workspace for the next release."""
    from piqa_tui.core.dataset.atomic import atomic_write

    atomic_write(path, "".join(f"{old}\t{new}\n" for old, new in [("id", "release_id"), *renamed.items()]))
    keep_ids(project, renamed)


def release_pseudonyms(project: Project, items: list[Item]) -> tuple[list[str], dict[str, str]]:
    """The person columns (see ``core.report.pseudonyms``) and each person's pseudonym: voters and editors,
    then the items' authors in file order, then the round's other people (named in a release's round file)."""
    from piqa_tui.core.report.pseudonyms import person_columns, pseudonyms
    from piqa_tui.core.round.recorded import round_in_force

    declared = round_in_force(project.workspace)
    columns = person_columns(project, declared.routing.never if declared is not None else ())
    people = [item.meta.get(column, "") for item in items for column in columns]
    people += [person.name for person in declared.annotators] if declared is not None else []
    return columns, pseudonyms(project, people)


def pseudonymised(items: list[Item], columns: list[str], names: dict[str, str]) -> list[Item]:
    """``items`` with every person column written as the person's pseudonym (``release_pseudonyms``)."""
    if not columns:
        return items
    return [
        item.with_changes(meta={**item.meta, **{c: names.get(item.meta.get(c, ""), "") for c in columns}})
        for item in items
    ]


def write_release_card(
    project: Project, args: argparse.Namespace, items: list[Item], written: Path, renamed: dict[str, str]
) -> None:
    """Write the card of the items just written (the release), with the workspace's agreement and curation;
    ``renamed`` maps workspace ids to the readable ids ``items`` carry (``--readable-ids``)."""
    from piqa_tui.cli.commands.card import card_options
    from piqa_tui.core.dataset.atomic import atomic_write
    from piqa_tui.render.card import dataset_card

    card = args.card
    release = written.name if written.resolve().parent == Path(card).resolve().parent else str(written)
    options = replace(
        card_options(args, project.dataset.name, release),
        workspace_ids=tuple((new, old) for old, new in renamed.items()),
    )
    atomic_write(Path(card), dataset_card(project, options, items))


def _made_line(made: ReleaseDefaults) -> str:
    if not made.words():
        return "the project's release defaults are cleared: export --decided writes every item unless told otherwise"
    return f"the project's release defaults are now: {', '.join(made.words())} (every export --decided applies them)"


def _summary(
    project: Project,
    release: Release,
    written: list[Path],
    formulas: int | None,
    options: ReleaseOptions,
    made: ReleaseDefaults | None,
    escaped: bool,
) -> dict[str, object]:
    """What ``export --json`` prints."""
    summary: dict[str, object] = {
        "written": [str(p) for p in written],
        "items": len(release.items),
        "edited": len(project.state.edited),
    }
    if release.found:
        summary["gold_changes"] = [change.to_json() for change in release.changes]
        summary["statuses"] = release.statuses()
    if release.found or options.drop_invalid:
        summary["invalid"] = release.invalid_written()
        summary["left_out"] = release.left_out
    if conflicts := release.conflicts_written():  # only where there are some: the keys stay as they were
        summary["conflicts"] = conflicts
    if options.decided:
        summary["project_defaults"] = json.loads((made or options.defaults).to_json())
        summary["overridden"] = list(options.overridden)
    if formulas is not None:
        summary["formula_cells"] = formulas
        summary["formulas_escaped"] = bool(escaped)
    return summary


def _formula_note(count: int, escaped: bool) -> str:
    """What to tell a spreadsheet user about cells that begin with = + - or @."""
    cells = f"{count} cell{'s' if count != 1 else ''} begin{'s' if count == 1 else ''} with = + - or @"
    if escaped:
        return f"{cells}: written with a leading ' so spreadsheets show them as text (--escape-formulas)"
    return (
        f"{cells}: a spreadsheet may run them as formulas; if this file is for Excel, LibreOffice or "
        "Google Sheets, export again with --escape-formulas"
    )
