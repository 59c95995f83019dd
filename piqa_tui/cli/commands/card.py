"""``piqa-tui card PATH [--to README.md]``: a Hugging Face dataset card (stdout, or written atomically to FILE).

The card's metadata takes the licence from ``--license``, else the config
file's ``license``; the name from ``--name``; the split from ``--split``.
Without them the card keeps ``[More Information Needed]`` for the team to
fill, and a warning on stderr says which metadata is still a placeholder.
An existing FILE is replaced only with ``--force`` (never the dataset or its workspace).
What the data holds is written as stdout shows it: control and bidi characters as visible escapes.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    say,
    warn,
)
from piqa_tui.cli.exit_codes import OK
from piqa_tui.cli.progress import progress_line, reading
from piqa_tui.core.dataset.atomic import atomic_write
from piqa_tui.core.errors import PiqaError
from piqa_tui.render.card import FILL, CardOptions, dataset_card

# The Hub's licence identifiers teams use most; any other lower-case identifier is accepted with a warning.
KNOWN_LICENSES = frozenset(
    {
        "apache-2.0",
        "mit",
        "cc0-1.0",
        "cc-by-4.0",
        "cc-by-sa-4.0",
        "cc-by-nc-4.0",
        "cc-by-nc-sa-4.0",
        "cc-by-nd-4.0",
        "cc-by-nc-nd-4.0",
        "cc-by-3.0",
        "cc-by-sa-3.0",
        "odc-by",
        "odbl",
        "pddl",
        "gpl-3.0",
        "lgpl-3.0",
        "bsd-3-clause",
        "openrail",
        "other",
        "unknown",
    }
)
_IDENTIFIER = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")
SPLITS = ("train", "validation", "test")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser, json_output=False)
    parser.add_argument(
        "--to", "--out", dest="to", metavar="FILE", help="write the card to FILE (e.g. README.md) instead of stdout"
    )
    parser.add_argument(
        "--force", action="store_true", help="replace FILE if it exists (never the dataset or its workspace)"
    )
    add_name_and_license(parser)
    parser.add_argument(
        "--split", choices=SPLITS, help="the split this file is (default: from the file name, else test)"
    )
    parser.add_argument(
        "--pseudonyms",
        action="store_true",
        help="name annotators and editors 'annotator 1', 'annotator 2', … instead of as the workspace records them",
    )


def add_name_and_license(parser: argparse.ArgumentParser, needs: str = "") -> None:
    """``--name`` and ``--license``, which :func:`card_options` reads (``card``, ``export --card`` and
    ``export --release``); ``needs`` opens their help with the options they go with ("with --release: ")."""
    parser.add_argument(
        "--name", metavar="TEXT", help=f"{needs}the dataset's name (pretty_name and the title); default: a placeholder"
    )
    parser.add_argument(
        "--license",
        metavar="ID",
        help=f"{needs}the Hub licence identifier, e.g. cc-by-4.0 (default: the config's license, else a placeholder)",
    )


def card_options(args: argparse.Namespace, dataset_name: str, release: str | None = None) -> CardOptions:
    """The card's metadata from the options and the config file, checked; ``release`` names the file an
    export wrote, which the card then describes (its --name and --license as ``card``'s, else placeholders)."""
    from piqa_tui.settings.config import load_config
    from piqa_tui.settings.template_catalog import available_templates

    config = load_config()
    licence = getattr(args, "license", None) or config.license
    if licence is not None and not _IDENTIFIER.match(licence):
        raise PiqaError(
            f"--license {licence!r} is not a licence identifier; use the Hub's, e.g. cc-by-4.0, mit or other"
        )
    if licence is not None and licence not in KNOWN_LICENSES:
        warn(
            f"licence {licence!r} is not one of the Hub's common identifiers; check it at huggingface.co/docs/hub/repositories-licenses"
        )
    given = getattr(args, "name", None)
    name = " ".join(given.split()) if given else None
    if given is not None and not name:
        raise PiqaError("--name is empty; give the dataset's name, e.g. --name 'Algerian Darija PIQA'")
    return CardOptions(
        pretty_name=name,
        license=licence,
        split=getattr(args, "split", None) or split_of(release or dataset_name),
        known_templates=available_templates(config),
        pseudonyms=getattr(args, "pseudonyms", False),
        release=release,
        question_columns=release is not None and bool(getattr(args, "decided", False)),
    )


def split_of(file_name: str) -> str:
    """The split a file's name says (train, validation/dev/valid, test); an evaluation set is test otherwise."""
    words = set(re.split(r"[^a-z]+", file_name.lower()))
    if "train" in words:
        return "train"
    if words & {"validation", "valid", "val", "dev"}:
        return "validation"
    return "test"


def run(args: argparse.Namespace) -> int:
    with progress_line(args) as progress:
        progress.show(reading(args))
        project = open_project(args)
        if args.to:
            project.check_outputs([Path(args.to)], replace=args.force)  # before any work
        options = card_options(args, project.dataset.name)
        progress.show(f"describing {len(project.items):,} items")
        card = dataset_card(project, options)
        if args.to:
            progress.show(f"writing {Path(args.to).name}")
            atomic_write(Path(args.to), card)
    if args.to:
        say(f"wrote {args.to} ({card.count(FILL)} places marked {FILL} to fill)")
    else:  # the card shows every control character as its escape already, in a file as on the terminal
        print(card, end="")
    missing = [what for what, value in (("--license", options.license), ("--name", options.pretty_name)) if not value]
    if missing:
        warn(f"the card's metadata has placeholders: pass {' and '.join(missing)} (or fill them in the file)")
    return OK
