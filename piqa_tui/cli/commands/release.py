"""``piqa-tui release list|rebuild|diff``: the history of a dataset's releases (``core.workspace.releases``).

``list PATH`` names every release the workspace records (when, who, files, the log it came from). ``rebuild PATH
NAME --to DIR`` makes a recorded release again, byte for byte, from the workspace as the release found it (a copy
holding only the events it was made from), whatever was voted or edited since, and checks every file's SHA-256
against the record. ``diff A B`` says what changed between two releases: each a release folder, or (with
``--dataset PATH``) the name of a recorded release, rebuilt for the comparison; with the workspace at hand, each
label change names the votes and decisions recorded between the two.

What ``export --release`` records and how a release is made again: ``release_record``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.commands.export import build_recorded
from piqa_tui.cli.commands.release_record import rebuild
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.core.release.diff import FieldChange, ReleaseDiff, diff_releases, read_release
from piqa_tui.core.release.folder import MANIFEST, ReleaseError
from piqa_tui.core.release.manifest import file_sha256, folder_files
from piqa_tui.core.report.release_ids import kept_ids
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.releases import (
    HistoryError,
    find_release,
    recorded_releases,
)

_SHOWN = 20  # changes of each kind listed on the terminal (--json lists all)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="{list,rebuild,diff}")
    listing = actions.add_parser("list", help="the releases the workspace records")
    add_dataset_arguments(listing)
    rebuild = actions.add_parser("rebuild", help="make a recorded release again, byte for byte, from the workspace")
    add_dataset_arguments(rebuild)
    rebuild.add_argument("name", metavar="NAME", help="the release's name (its folder's name when it was made)")
    rebuild.add_argument("--to", metavar="DIR", required=True, help="the folder to write it to (new or empty)")
    rebuild.add_argument(
        "--force", action="store_true", help="replace DIR when it is a release folder (never anything else)"
    )
    diff = actions.add_parser("diff", help="what changed between two releases (folders, or recorded names)")
    diff.add_argument("old", metavar="A", help="a release folder, or a recorded release's name (with --dataset)")
    diff.add_argument("new", metavar="B", help="a release folder, or a recorded release's name (with --dataset)")
    diff.add_argument("--dataset", metavar="PATH", help="the dataset whose workspace records the releases")
    diff.add_argument("--workspace", metavar="FILE", help="workspace database (default: beside the dataset)")
    diff.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        return run_list(args)
    if args.action == "rebuild":
        return run_rebuild(args)
    return run_diff(args)


def run_rebuild(args: argparse.Namespace) -> int:
    project = open_project(args)
    if project.workspace is None:
        raise HistoryError(f"{project.dataset.name} has no workspace: no release is recorded")
    project.check_outputs([Path(args.to)], replace=True)  # never the dataset or a workspace
    recorded = find_release(project.workspace, args.name)
    folder = rebuild(project, recorded, Path(args.to).expanduser(), build_recorded, force=args.force)
    found = {name: str(entry["sha256"]) for name, entry in folder_files(folder).items()}
    found[MANIFEST] = file_sha256(folder / MANIFEST)
    differ = sorted(name for name in {*found, *recorded.files} if found.get(name) != recorded.files.get(name))
    if differ:
        say(
            f"rebuilt {recorded.name} in {folder}, but {len(differ)} file{'s' * (len(differ) != 1)} differ from the "
            f"release as recorded: {', '.join(differ[:5])}"
        )
        return DATA_PROBLEMS
    say(
        f"rebuilt {recorded.name} (made {recorded.time}) in {folder}: all {len(found)} files as recorded, byte for byte"
    )
    return OK


def run_list(args: argparse.Namespace) -> int:
    project = open_project(args)
    found = recorded_releases(project.workspace)
    if args.json:
        print_json([r.to_json() for r in found])
        return OK
    if not found:
        say(f"no release of {project.dataset.name} is recorded in its workspace")
    for r in found:
        say(
            f"{r.name}  made {r.time} by {r.by}: {len(r.files)} files, from {r.log.get('events')} events "
            f"(clock {r.log.get('last_clock')}, log {str(r.log.get('events_sha256', ''))[:12]})"
        )
    return OK


# ------------------------------------------------------------------ diff


def run_diff(args: argparse.Namespace) -> int:
    project = None
    if args.dataset is not None:
        args.path = args.dataset
        project = open_project(args)
    with tempfile.TemporaryDirectory(prefix="piqa-diff-") as tmp:
        old = read_release(_folder(project, args.old, Path(tmp) / "a"))
        new = read_release(_folder(project, args.new, Path(tmp) / "b"))
        found = diff_releases(old, new)
    if project is not None:
        found.labels = [why_changed(project, c, old.manifest, new.manifest) for c in found.labels]
    if args.json:
        print_json(found.to_json())
        return OK
    for line in diff_lines(found):
        say(line)
    return OK


def _folder(project: Project | None, given: str, scratch: Path) -> Path:
    """A release folder as given, or a recorded release of ``project`` rebuilt into ``scratch``."""
    path = Path(given).expanduser()
    if path.is_dir():
        return path
    if project is None:
        raise ReleaseError(f"{given} is no release folder; to name a recorded release, give --dataset PATH")
    project.check_outputs([scratch], replace=True)  # a scratch folder: never the dataset or a workspace
    scratch.mkdir()
    return rebuild(project, find_release(project.workspace, given), scratch / given, build_recorded, changelog=False)


def why_changed(project: Project, change: FieldChange, old: dict[str, object], new: dict[str, object]) -> FieldChange:
    """``change`` with the votes and adjudications the workspace recorded on its item between the two releases."""
    if project.workspace is None:
        return change
    low, high = _clock(old), _clock(new)
    original = {released: own for own, released in kept_ids(project).items()}.get(change.item, change.item)
    why = tuple(
        f"{kind} by {who}: solution {int(choice) + 1} ({time})"
        if choice.isdecimal()
        else f"{kind} by {who}: {choice or 'withdrawn'} ({time})"
        for kind, who, choice, time in project.workspace.item_events(original, ("vote", "adjudicate"), low, high)
    )
    return FieldChange(change.item, change.field, change.old, change.new, why)


def _clock(manifest: dict[str, object]) -> int:
    state = manifest.get("workspace")
    clock = state.get("last_clock") if isinstance(state, dict) else None
    return clock if isinstance(clock, int) else 0


def diff_lines(found: ReleaseDiff) -> list[str]:
    """The diff for a person: the counts, then each change (up to ``_SHOWN`` of each kind)."""
    lines = [f"{found.old} → {found.new}: {found.summary()}"]
    for title, ids in (("added", found.added), ("removed", found.removed)):
        if ids:
            shown = ", ".join(terminal_safe(i, one_line=True) for i in ids[:_SHOWN])
            lines.append(f"{title}: {shown}" + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""))
    for title, changes in (
        ("label", found.labels),
        ("text", found.texts),
        ("metadata", found.meta),
        ("release", found.release),
    ):
        for c in changes[:_SHOWN]:
            where = f"{c.item} {c.field}" if c.item else c.field
            lines.append(f"{title}: {where}: {c.old!r} → {c.new!r}")
            lines += [f"    {why}" for why in c.why]
        if len(changes) > _SHOWN:
            lines.append(f"{title}: … and {len(changes) - _SHOWN} more (--json lists them all)")
    return lines
