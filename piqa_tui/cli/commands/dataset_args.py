"""The options every dataset command shares (--map, --workspace, --annotator, --json) and opening the project."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from piqa_tui.core import strict_json
from piqa_tui.core.dataset.layout import parse_mapping
from piqa_tui.core.gcpause import gc_paused, settle
from piqa_tui.core.text.terminal_safe import json_safe, message_line, terminal_safe
from piqa_tui.core.workspace.project import Project


def add_dataset_arguments(parser: argparse.ArgumentParser, *, json_output: bool = True) -> None:
    parser.add_argument("path", metavar="PATH", help="dataset file (.tsv, .csv, .jsonl (+ -labels.lst), .parquet)")
    parser.add_argument(
        "--map",
        dest="mapping",
        metavar="SPEC",
        help="column mapping for unknown layouts: prompt=COL,solutions=COL|COL,label=COL,id=COL[,label_base=1]",
    )
    parser.add_argument(
        "--workspace", metavar="FILE", help="workspace database (default: PATH.piqa.sqlite beside the file)"
    )
    parser.add_argument("--annotator", metavar="NAME", help="who is acting (default: config file, then login name)")
    if json_output:
        parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def open_project(args: argparse.Namespace, *, create: bool = False) -> Project:
    """The project named by ``args``; read-only commands pass ``create=False`` and make no workspace, unless the
    dataset's git repository holds team's work the workspace lacks (a fresh clone): that is applied first, as the
    TUI does on opening (``core.sync.exchange.catch_up``), so every command sees everyone's work."""
    from piqa_tui.core.sync.exchange import catch_up
    from piqa_tui.settings.config import load_config

    mapping = parse_mapping(args.mapping) if getattr(args, "mapping", None) else None
    annotator = getattr(args, "annotator", None) or load_config().annotator
    for line in catch_up(Path(args.path), Path(args.workspace) if args.workspace else None):
        warn(line)
    with gc_paused():
        project = Project.open(args.path, mapping=mapping, workspace=args.workspace, annotator=annotator, create=create)
        settle()  # a command's collections then skip what it loaded: 0.18 s of passes over 100,000 items, none freed
    if project.file_changed:
        warn(project.file_changed)
    for notice in project.workspace.take_notices() if project.workspace else []:
        warn(notice)
    return project


def print_json(data: object) -> None:
    """``data`` as JSON on stdout: exact values, with characters a terminal would act on as \\u escapes.

    Indented for a person at a terminal; one line for a pipe or a file, which the json module writes in C
    (an indent makes it use its Python encoder, several times slower on a large report): jq reads either.
    """
    indent = 2 if sys.stdout.isatty() else None
    text, _ = strict_json.dumps(data, ensure_ascii=False, indent=indent)  # NaN as null: what every reader reads
    sys.stdout.write(json_safe(text) + "\n")  # one write


def say(*parts: object, sep: str = " ") -> None:
    """A line of human output on stdout, made terminal-safe (the text comes from data)."""
    print(terminal_safe(sep.join(map(str, parts))))


_held: list[str] = []  # warnings of the running command, printed when it ends (see end_warnings)


def warn(message: object) -> None:
    """One terminal-safe warning line for stderr, held until the command ends: one that fails shows its error alone."""
    _held.append(f"piqa-tui: warning: {message_line(message)}")


def end_warnings(show: bool) -> None:
    """Print the held warnings on stderr when ``show`` (the command finished), else drop them (it failed)."""
    lines = list(dict.fromkeys(_held))  # once each: a command that reopens its project warns of it once
    _held.clear()
    for line in lines if show else []:
        print(line, file=sys.stderr)
