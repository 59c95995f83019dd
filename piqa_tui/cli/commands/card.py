"""``piqa-tui card PATH``: a dataset card in Markdown (stdout, or --out FILE)."""

from __future__ import annotations

import argparse
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, say
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.dataset.files import atomic_write
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.render.card import dataset_card


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser, json_output=False)
    parser.add_argument("--out", metavar="FILE", help="write the card to FILE instead of stdout")
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists (never the dataset or its workspace)")


def run(args: argparse.Namespace) -> int:
    project = open_project(args)
    if args.out:
        project.check_outputs([Path(args.out)], replace=args.force)
    card = dataset_card(project)
    if args.out:
        atomic_write(Path(args.out), card)
        say(f"wrote {args.out}")
    else:  # the file keeps the text as typed; the terminal gets it made safe
        print(terminal_safe(card), end="")
    return OK
