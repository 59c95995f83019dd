"""``export --decided --release DIR``: a release folder that ``datasets``, pandas and a spreadsheet each open.

One Parquet file and one text file (the dataset's own CSV/TSV/JSONL; JSONL for Parquet and PIQA sources) per
split under ``data/``, the card (``README.md``, its ``configs`` naming each split's Parquet file and its
``dataset_info`` the columns and rows), ``manifest.json`` (``core.release.manifest``), the exact guidelines and
round protocol it was made under, and on request ``global-piqa/SPLIT.tsv``. The folder is built beside the
target, checked (``core.release.verify``: the card and manifest claim only what the files hold) and renamed
into place (``core.release.folder``); any refusal is one line and leaves the target as it was.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from piqa_tui import __version__
from piqa_tui.cli.commands.card import add_name_and_license, card_options, split_of
from piqa_tui.core.dataset.atomic import atomic_write
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import source_files
from piqa_tui.core.dataset.writing import output_table, write_dataset
from piqa_tui.core.release.features import arrow_bytes, features_of
from piqa_tui.core.release.folder import (
    CARD,
    DATA,
    GLOBAL_PIQA,
    GUIDELINES,
    MANIFEST,
    ROUND,
    ReleaseError,
    SplitFiles,
    check_target,
    publish,
    read_manifest,
    split_files,
    staged,
)
from piqa_tui.core.release.manifest import manifest, manifest_text
from piqa_tui.core.release.splits import assign_splits, split_rules
from piqa_tui.core.release.tasks import TASKS, applicable, tag_name, write_tasks
from piqa_tui.core.release.verify import verify_release
from piqa_tui.core.scoring.templates import Template, shipped_templates
from piqa_tui.core.workspace.project import Project

TEXT_FORMATS = ("tsv", "csv", "jsonl")  # a Parquet or PIQA source's text file is JSON Lines


def add_release_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``export --release``."""
    parser.add_argument(
        "--release",
        metavar="DIR",
        help="write a release folder (implies --decided): one Parquet and one text file per split, the card, "
        "manifest.json, guidelines and round",
    )
    parser.add_argument("--split-by", metavar="COLUMN", help="with --release: the column whose values name the splits")
    parser.add_argument(
        "--splits",
        action="append",
        default=[],
        metavar="NAME=COLUMN:VALUE[|VALUE]",
        help="with --release: a split and the values that put an item in it (repeat it per split)",
    )
    parser.add_argument(
        "--drop-columns", metavar="A,B", help="with --release: leave these columns out of the files and the card"
    )
    add_name_and_license(parser, needs="with --release or --card: ")
    parser.add_argument(
        "--global-piqa-tsv",
        action="store_true",
        help="with --release: also write global-piqa/SPLIT.tsv (prompt, solution0…, label from 0)",
    )


def release_refusals(args: argparse.Namespace) -> str | None:
    """The one line refusing options that make no sense together (None: they do)."""
    if args.release is None:
        given = [f for f, on in (("--split-by", args.split_by), ("--splits", args.splits)) if on]
        given += [
            f for f, on in (("--drop-columns", args.drop_columns), ("--global-piqa-tsv", args.global_piqa_tsv)) if on
        ]
        if args.to is None:
            return "say where to write: --to FILE (one file) or --release DIR (a release folder)"
        if given:
            return f"{given[0]} needs --release DIR"
        card = [f for f, on in (("--name", args.name), ("--license", args.license)) if on]
        return f"{card[0]} describes a card: give --card FILE or --release DIR" if card and not args.card else None
    clash = [f for f, on in (("--to", args.to), ("--card", args.card), ("--format", args.format)) if on]
    if clash:
        return f"--release DIR writes its own files and card: leave out {clash[0]}"
    if args.split_by and args.splits:
        return "give --split-by COLUMN or --splits NAME=COLUMN:VALUE, not both"
    return None


def write_release_folder(
    project: Project,
    args: argparse.Namespace,
    items: list[Item],
    extra: dict[str, list[object]],
    head: dict[str, object],
    names: dict[str, str] | None,
    changelog: Callable[[Path, dict[str, object]], list[str]] | None = None,
    renamed: dict[str, str] | None = None,
) -> tuple[Path, list[SplitFiles]]:
    """Build, check and publish the release folder (see the module docstring); ``head`` is the manifest's
    description of how it was made, ``names`` the pseudonyms (``--pseudonyms``), ``changelog`` the card's lines
    on what changed since the previous release, given the folder with its data written and its draft manifest,
    ``renamed`` the readable ids ``items`` carry (workspace id -> release id). Returns the folder and its splits."""
    folder = Path(args.release).expanduser()
    dataset = project.dataset
    check_target(folder, args.force, [*source_files(dataset), project.workspace_path])
    _refuse_another_dataset(folder, project)
    extra = dict(extra)
    label = dataset.layout.label
    if label is None and dataset.layout.labels_file:  # PIQA's labels file: a column of the release
        label = "label"
        extra[label] = [dataset.codec.encode(item.label, 0) for item in items]
    dropped = dropped_columns(project, args.drop_columns, extra, label)
    text_format = dataset.format if dataset.format in TEXT_FORMATS else "jsonl"
    rules = split_rules(items, dataset.meta_columns, args.split_by, args.splits, split_of(dataset.name))
    by_split = assign_splits(items, rules)
    _refuse_same_file_names(list(by_split))
    position = {id(item): k for k, item in enumerate(items)}
    with staged(folder) as temp:
        (temp / DATA).mkdir()
        splits: list[tuple[SplitFiles, list[object]]] = []
        for name, chosen in by_split.items():
            files = split_files(name, len(chosen), text_format, args.global_piqa_tsv)
            part = {column: [values[position[id(i)]] for i in chosen] for column, values in extra.items()}
            columns, labels = write_split(project, args, temp, files, chosen, part, dropped, label)
            splits.append((files, labels))
        protocol = write_protocol(project, temp, names)
        templates = release_templates(project, items, columns)
        parquet = [files.parquet for files, _ in splits]
        tasks = write_tasks(temp, folder.name, templates, parquet, task_columns(project, columns, label))
        features = features_of([temp / files.parquet for files, _ in splits])
        splits = [(replace(files, num_bytes=arrow_bytes(temp / files.parquet, features)), v) for files, v in splits]
        head = {**head, "name": folder.name, "protocol": protocol}
        notes = changelog(temp, manifest(temp, head, columns, label, splits, tasks)) if changelog is not None else []
        write_card(
            project,
            args,
            items,
            temp,
            [files for files, _ in splits],
            features,
            dropped,
            protocol,
            tasks,
            notes,
            renamed or {},
        )
        found = manifest(temp, head, columns, label, splits, tasks)
        atomic_write(temp / MANIFEST, manifest_text(found))
        verify_release(temp)
        publish(temp, folder)
    return folder, [files for files, _ in splits]


def write_split(
    project: Project,
    args: argparse.Namespace,
    folder: Path,
    files: SplitFiles,
    items: list[Item],
    extra: dict[str, list[object]],
    dropped: set[str],
    label: str | None,
) -> tuple[list[str], list[object]]:
    """Write one split's files; returns the columns and label values the manifest claims for them, from the
    table the writers write (the check then reads the files)."""
    dataset = project.dataset
    text_format = files.text.rsplit(".", 1)[1]
    for path, fmt in ((files.parquet, "parquet"), (files.text, text_format)):
        write_dataset(
            dataset, items, folder / path, fmt, extra or None, args.escape_formulas, sorted(dropped), flat=True
        )
    if files.global_piqa:
        (folder / GLOBAL_PIQA).mkdir(exist_ok=True)
        atomic_write(folder / files.global_piqa, global_piqa_tsv(items))
    columns, rows = output_table(dataset, items, extra or None, dropped)
    return columns, [row.get(label) for row in rows] if label else []


def _refuse_another_dataset(folder: Path, project: Project) -> None:
    """A release of another dataset is never replaced, even with --force: its name is taken."""
    found = read_manifest(folder) if folder.is_dir() else None
    if found is None:
        return
    source = found.get("dataset")
    theirs = source.get("file") if isinstance(source, dict) else None
    if theirs is not None and theirs != project.dataset.name:
        raise ReleaseError(
            f"{folder} is the release of {theirs}, not of {project.dataset.name}: give this release another name"
        )


def _refuse_same_file_names(names: Sequence[str]) -> None:
    """Two splits whose files would be one on a case-insensitive disk (``Test``, ``test``): one line."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name.casefold(), name)
        if other != name:
            raise ReleaseError(
                f"the splits {other!r} and {name!r} would share files on macOS and Windows; "
                "name them apart with --splits NAME=COLUMN:VALUE"
            )


def dropped_columns(project: Project, text: str | None, extra: dict[str, list[object]], label: str | None) -> set[str]:
    """The columns ``--drop-columns`` names, checked: each one the release would write, and none the
    items need (id, prompt, solutions, label)."""
    names = [name.strip() for name in (text or "").split(",") if name.strip()]
    layout = project.dataset.layout
    needed = {c for c in (layout.id, layout.prompt, *layout.solutions, label) if c}
    written = [*project.dataset.columns, *extra]
    for name in names:
        if name not in written:
            raise ReleaseError(
                f"--drop-columns {name}: the release has no such column; its columns: {', '.join(written)}"
            )
        if name in needed:
            raise ReleaseError(f"--drop-columns {name}: the items' id, prompt, solutions and label stay in a release")
    return set(names)


def global_piqa_tsv(items: Sequence[Item]) -> str:
    """The items in Global PIQA's layout: ``prompt``, ``solution0`` … ``solutionN``, ``label`` (0-based)."""
    width = max((len(item.solutions) for item in items), default=2)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(["prompt", *(f"solution{k}" for k in range(width)), "label"])
    for item in items:
        solutions = [*item.solutions, *[""] * (width - len(item.solutions))]
        writer.writerow([item.prompt, *solutions, "" if item.label is None else item.label])
    return buffer.getvalue()


def write_protocol(project: Project, folder: Path, names: dict[str, str] | None) -> dict[str, object]:
    """``guidelines.md`` and ``round.json`` as the workspace records the ones in force (none: not written);
    with ``names`` (pseudonyms) the round's annotators are named as the release names them. Returns their
    manifest entry."""
    from piqa_tui.core.round.guidelines import guidelines_in_force, sha256_of
    from piqa_tui.core.round.recorded import round_in_force

    found: dict[str, object] = {"guidelines": None, "round": None}
    guidelines = guidelines_in_force(project.workspace)
    if guidelines is not None:
        atomic_write(folder / GUIDELINES, guidelines.text)
        found["guidelines"] = {"file": GUIDELINES, "version": guidelines.version, "sha256": guidelines.sha256}
    declared = round_in_force(project.workspace)
    if declared is not None:
        recorded = declared.canonical()
        text = recorded
        if names is not None:
            table = json.loads(recorded)
            for person in table["annotators"]:
                person["name"] = names[person["name"]]
            text = json.dumps(table, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        atomic_write(folder / ROUND, text)  # as recorded: its SHA-256 is the manifest's (without pseudonyms)
        pseudonymised = {"pseudonyms": True} if names is not None else {}
        found["round"] = {"file": ROUND, "name": declared.name, "recorded_sha256": sha256_of(recorded), **pseudonymised}
    return found


def write_card(
    project: Project,
    args: argparse.Namespace,
    items: list[Item],
    folder: Path,
    splits: list[SplitFiles],
    features: list[tuple[str, str]],
    dropped: set[str],
    protocol: dict[str, object],
    tasks: list[dict[str, str]],
    changelog: list[str] | None = None,
    renamed: dict[str, str] | None = None,
) -> None:
    """The release's card: the card of ``items`` with the folder's splits, columns and files (and ``changelog``,
    what changed since the previous release); what it looks up in the workspace, it looks up by the workspace's
    ids (``renamed``: workspace id -> the readable id ``items`` carry)."""
    from piqa_tui.render.card import dataset_card

    options = replace(
        card_options(args, project.dataset.name, Path(args.release).name),
        splits=tuple(splits),
        features=tuple(features),
        release_notes=tuple(
            [
                *release_notes(project, args, splits, dropped, protocol),
                *task_notes(Path(args.release).name, tasks),
                *(changelog or []),
            ]
        ),
        dropped=frozenset(dropped),
        workspace_ids=tuple((new, old) for old, new in (renamed or {}).items()),
    )
    atomic_write(folder / CARD, dataset_card(project, options, items))


def release_notes(
    project: Project, args: argparse.Namespace, splits: list[SplitFiles], dropped: set[str], protocol: dict[str, object]
) -> list[str]:
    """What the card says about the folder's files, the people and ids in them, and what was left out."""
    first = splits[0]
    text = (
        f'`pandas.read_json("{first.text}", lines=True, dtype=False)`'
        if first.text.endswith(".jsonl")
        else f'`pandas.read_csv("{first.text}"'
        + (', sep="\\t"' if first.text.endswith(".tsv") else "")
        + ", dtype=str, keep_default_na=False)` (every value as written)"
    )
    notes = [
        f'`{DATA}/` holds each split twice: `datasets.load_dataset("PATH")` reads the Parquet files, as pandas\' '
        f'`pandas.read_parquet("{first.parquet}")` does; the text file beside it holds the same rows: {text}.',
        f"`{MANIFEST}` lists every file with its SHA-256, the items per split and label, the options this release "
        "was written with and the state of the workspace's log it came from (events, last clock, a hash of the events).",
    ]
    guidelines, declared = protocol.get("guidelines"), protocol.get("round")
    if isinstance(guidelines, dict):
        notes.append(
            f"`{GUIDELINES}`: the exact text of the annotation guidelines in force (version {guidelines['version']})."
        )
    else:
        notes.append("No annotation guidelines were recorded in the workspace: the release has no guidelines file.")
    if isinstance(declared, dict):
        named = " with its annotators named by their pseudonyms" if args.pseudonyms else ""
        notes.append(f"`{ROUND}`: the round protocol in force, as the workspace records it{named}.")
    notes += people_notes(project, args, dropped)
    if args.readable_ids:
        notes.append(
            "Items written during curation carry ids in the dataset's own scheme; the workspace keeps the mapping, "
            "so every later release gives each item the same id."
        )
    if dropped:
        notes.append(
            f"Left out of this release: the column{'s' * (len(dropped) != 1)} {', '.join(f'`{c}`' for c in sorted(dropped))}."
        )
    if first.global_piqa:
        notes.append(
            f"`{GLOBAL_PIQA}/SPLIT.tsv`: the items in Global PIQA's layout (`prompt`, `solution0`…, `label` from 0)."
        )
    return notes


def people_notes(project: Project, args: argparse.Namespace, dropped: set[str]) -> list[str]:
    """The card's line on the columns that name people by pseudonyms (``--pseudonyms``; none without)."""
    from piqa_tui.core.report.pseudonyms import person_columns
    from piqa_tui.core.round.recorded import round_in_force

    current = round_in_force(project.workspace)
    columns = [c for c in person_columns(project, current.routing.never if current else ()) if c not in dropped]
    if not args.pseudonyms or not columns:
        return []
    shown = ", ".join(f"`{c}`" for c in columns)
    return [
        f'The column{"s" * (len(columns) != 1)} {shown} name people by pseudonyms ("annotator 1", "annotator 2", '
        "…), one per person throughout this release and numbered as this card numbers annotators; the team's "
        "workspace keeps who is who."
    ]


def manifest_head(
    project: Project, args: argparse.Namespace, options: dict[str, object], time: str
) -> dict[str, object]:
    """The manifest's account of how the release was made: when (``time``), by whom, from which file and log, with
    which options, and which columns hold the items' id, texts and label (``release diff`` reads them)."""
    workspace = project.workspace
    by = "withheld (--pseudonyms)" if args.pseudonyms else project.annotator
    layout = project.dataset.layout
    return {
        "made": {"time": time, "by": by, "piqa_tui_version": __version__},
        "dataset": {"file": project.dataset.name, "format": project.dataset.format, "sha256": project.dataset.sha256},
        "workspace": None if workspace is None else {"id": workspace.workspace_id, **workspace.log_state()},
        "options": options,
        "layout": {"id": layout.id, "prompt": layout.prompt, "solutions": list(layout.solutions)},
    }


def release_templates(project: Project, items: Sequence[Item], columns: Sequence[str]) -> list[Template]:
    """The templates the release's tasks render: every shipped template that renders every labelled item,
    and every other template the card reports a model's figures for (scored in the workspace)."""
    from piqa_tui.core.scoring.stored import model_results
    from piqa_tui.settings.template_catalog import available_templates

    known = available_templates()
    chosen = dict(shipped_templates())
    if project.workspace is not None:
        for run, _ in model_results(project.workspace.conn, list(items), known):
            if run.template_name in known:
                chosen.setdefault(run.template_name, known[run.template_name])
    return [t for _, t in sorted(chosen.items()) if applicable(t, items, columns)]


def task_columns(project: Project, columns: Sequence[str], label: str | None) -> dict[str, object]:
    """What ``tasks/release_docs.py`` needs to read an item from the release's columns (its roles, how its
    label is written, its other columns)."""
    layout, codec = project.dataset.layout, project.dataset.codec
    roles = {layout.prompt, *layout.solutions, layout.id, layout.question, label}
    return {
        "prompt": layout.prompt,
        "solutions": list(layout.solutions),
        "question": layout.question,
        "id": layout.id,
        "label": {"column": label, "kind": codec.kind, "base": codec.base, "letters": codec.letters},
        "meta": [c for c in columns if c not in roles],
    }


def task_notes(release: str, tasks: list[dict[str, str]]) -> list[str]:
    """The card's lines on ``tasks/``: the command that reproduces each template's figures."""
    if not tasks:
        return []
    lines = [
        f"`{TASKS}/`: one lm-evaluation-harness task per scoring template, rendering exactly the contexts and "
        "continuations piqa-tui scores; its metrics `acc`, `acc_norm` and `acc_bytes` are the card's. In the "
        f"release folder, `lm_eval --model hf --model_args pretrained=MODEL --tasks TASK --include_path {TASKS}` "
        "evaluates a model on a template's task (a backend computes log-likelihoods its own way, so a model "
        "served another way can differ on close items):"
    ]
    lines += [f"template `{t['template']}`: `--tasks {t['task']}` ({t['file']})" for t in tasks]
    return lines + [f"`--tasks {tag_name(release)}` runs them all (the tag every task of this release carries)."]
