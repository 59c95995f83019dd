"""``piqa-tui export PATH --to OUT``: the dataset with the workspace's edits, written atomically."""

from __future__ import annotations

import argparse

from ..core.dataset import FORMATS
from ..exit_codes import OK
from .dataset_args import add_dataset_arguments, open_project, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("--to", required=True, metavar="OUT", help="output file; the extension picks the format")
    parser.add_argument("--format", choices=FORMATS, help="override the format ('piqa' = .jsonl plus -labels.lst)")


def run(args: argparse.Namespace) -> int:
    project = open_project(args)
    written = project.export(args.to, args.format)
    if args.json:
        print_json({"written": [str(p) for p in written], "items": len(project.items), "edited": len(project.state.edited)})
    else:
        print(f"wrote {len(project.items)} items ({len(project.state.edited)} edited) to {', '.join(map(str, written))}")
    return OK
