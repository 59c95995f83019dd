"""``piqa-tui audit PATH``: which annotators to talk to and which labels to look at again, and why.

The audit is a list of sections, each an object with ``to_json() -> dict`` (one key of the JSON
object) and ``lines() -> list[str]`` (its text, heading first); a further section joins the list in
``sections``. Nothing here changes a label.
"""

from __future__ import annotations

import argparse
from typing import Protocol

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.errors import InputError


class Section(Protocol):
    """One part of the audit."""

    def to_json(self) -> dict[str, object]: ...

    def lines(self) -> list[str]: ...


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("--top", type=int, default=20, metavar="N", help="labels in doubt to list (default: 20)")


def sections(args: argparse.Namespace) -> list[Section]:
    """The audit's sections for the dataset ``args`` names, in the order they print."""
    from piqa_tui.core.quality.artifacts import artifact_report
    from piqa_tui.core.quality.audit import audit_labels
    from piqa_tui.core.quality.sections import ArtifactsSection, audit_sections
    from piqa_tui.settings.template_catalog import available_templates

    project = open_project(args)
    known = available_templates()
    return [
        *audit_sections(audit_labels(project, known=known), args.top),
        ArtifactsSection(artifact_report(project, known=known)),
    ]


def run(args: argparse.Namespace) -> int:
    if args.top < 0:
        raise InputError(f"--top {args.top}: give a count of 0 or more")
    found = sections(args)
    if args.json:
        print_json({key: value for section in found for key, value in section.to_json().items()})
        return OK
    for n, section in enumerate(found):
        if n:
            say("")
        for line in section.lines():
            say(line)
    return OK
