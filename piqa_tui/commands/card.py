"""``piqa-tui card PATH``: a dataset card in Markdown (stdout, or --out FILE)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.card import dataset_card
from ..core.dataset import atomic_write
from ..exit_codes import OK
from .dataset_args import add_dataset_arguments, open_project


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser, json_output=False)
    parser.add_argument("--out", metavar="FILE", help="write the card to FILE instead of stdout")


def run(args: argparse.Namespace) -> int:
    card = dataset_card(open_project(args))
    if args.out:
        atomic_write(Path(args.out), card)
        print(f"wrote {args.out}")
    else:
        print(card, end="")
    return OK
