"""``piqa-tui release list|rebuild|diff``: the history of a dataset's releases (``core.release.history``).

``list PATH`` names every release the workspace records (when, who, files, the log it came from). ``rebuild PATH
NAME --to DIR`` makes a recorded release again, byte for byte, from the workspace as the release found it (a copy
holding only the events it was made from), whatever was voted or edited since, and checks every file's SHA-256
against the record. ``diff A B`` says what changed between two releases: each a release folder, or (with
``--dataset PATH``) the name of a recorded release, rebuilt for the comparison; with the workspace at hand, each
label change names the votes and decisions recorded between the two.

``export --release`` calls ``record_release`` (the event), ``refuse_recorded_name`` (two releases with one name)
and ``changelog_notes`` (the card's lines on what changed since the previous recorded release).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.release.diff import FieldChange, ReleaseDiff, changelog, diff_releases, read_release
from piqa_tui.core.release.folder import MANIFEST, ReleaseError, read_manifest
from piqa_tui.core.release.history import (
    RELEASE_KIND,
    HistoryError,
    Recorded,
    as_of,
    find_release,
    payload,
    recorded_releases,
)
from piqa_tui.core.release.manifest import file_sha256, folder_files
from piqa_tui.core.report.release_ids import kept_ids
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.core.votes.release_defaults import RELEASE_DEFAULTS_KEY
from piqa_tui.core.workspace.log import Change
from piqa_tui.core.workspace.project import Project

# Export options a release's record leaves out: where it was written and how this run spoke, not what it holds.
_NOT_RECORDED = frozenset({"path", "workspace", "release", "force", "json", "run", "annotator", "to", "card", "format"})
_SHOWN = 20  # changes of each kind listed on the terminal (--json lists all)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="{list,rebuild,diff}")
    listing = actions.add_parser("list", help="the releases the workspace records")
    add_dataset_arguments(listing)
    rebuild = actions.add_parser("rebuild", help="make a recorded release again, byte for byte, from the workspace")
    add_dataset_arguments(rebuild)
    rebuild.add_argument("name", metavar="NAME", help="the release's name (its folder's name when it was made)")
    rebuild.add_argument("--to", metavar="DIR", required=True, help="the folder to write it to (new or empty)")
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


# ------------------------------------------------------------------ recording (export --release)


def record_release(project: Project, args: argparse.Namespace, folder: Path, time: str) -> None:
    """Record the release just written to ``folder`` in the workspace: one ``release`` event."""
    assert project.workspace is not None  # export --release opens the project with its workspace
    manifest = read_manifest(folder) or {}
    state = manifest.get("workspace") if isinstance(manifest.get("workspace"), dict) else {}
    assert isinstance(state, dict)
    files = {name: str(entry["sha256"]) for name, entry in folder_files(folder).items()}
    files[MANIFEST] = file_sha256(folder / MANIFEST)
    options = {k: v for k, v in sorted(vars(args).items()) if k not in _NOT_RECORDED and _plain(v)}
    recorded = Recorded(
        name=folder.name,
        time=time,
        by=project.annotator,
        args=options,
        files=files,
        log={k: v for k, v in state.items() if k != "id"},
        dataset={"file": project.dataset.name, "sha256": project.dataset.sha256},
        defaults=project.workspace.get_meta(RELEASE_DEFAULTS_KEY),
    )
    project.workspace.append(
        project.annotator, RELEASE_KIND, [Change(None, folder.name, None, payload(recorded))], time=time
    )


def _plain(value: object) -> bool:
    """A value a release's record keeps: text, a number, a yes/no, none, or a list of texts."""
    if isinstance(value, list):
        return all(isinstance(v, str) for v in value)
    return value is None or isinstance(value, str | int | bool)


def refuse_recorded_name(project: Project, folder: Path, force: bool) -> None:
    """Two releases with one name: refused (one line) unless ``--force`` replaces the recorded one."""
    found = [r for r in recorded_releases(project.workspace) if r.name == folder.name]
    if found and not force:
        raise ReleaseError(
            f"a release named {folder.name!r} is already recorded (made {found[-1].time} by {found[-1].by}): give "
            "this release another name, or pass --force to replace it"
        )


def changelog_notes(project: Project, wanted: bool = True) -> Callable[[Path, dict[str, object]], list[str]] | None:
    """The card's changelog against the latest recorded release, given the new release's folder (None: this is
    the first release, or ``wanted`` is False: a rebuild made only to be compared)."""
    if not wanted:
        return None
    previous = recorded_releases(project.workspace)
    if not previous:
        return None
    last = previous[-1]

    def notes(folder: Path, draft: dict[str, object]) -> list[str]:
        with tempfile.TemporaryDirectory(prefix="piqa-release-") as tmp:
            try:
                old = rebuild(project, last, Path(tmp) / last.name, changelog=False)
            except PiqaError as exc:
                return [f"Changes since the previous release, `{last.name}`, cannot be listed: {exc}."]
            return changelog(diff_releases(read_release(old), read_release(folder, draft)), last.name, last.time)

    return notes


# ------------------------------------------------------------------ rebuilding


def rebuild(project: Project, recorded: Recorded, to: Path, *, changelog: bool = True) -> Path:
    """Make ``recorded`` again in ``to`` (new, or an empty folder) from the workspace as it found it (see the
    module docstring). It is built under its own name beside ``to`` (the name is in its card and manifest), then
    renamed to ``to``."""
    if project.workspace is None:
        raise HistoryError(f"{project.dataset.name} has no workspace: no release is recorded")
    if recorded.dataset.get("sha256") != project.dataset.sha256:
        raise HistoryError(
            f"{project.dataset.name} is no longer the file release {recorded.name!r} was made from (its SHA-256 "
            "differs): check out that version of the file to rebuild it"
        )
    if to.is_symlink() or (to.exists() and (not to.is_dir() or any(to.iterdir()))):
        raise HistoryError(f"{to} exists and is not an empty folder: rebuild the release into a new folder")
    if not to.parent.is_dir():
        raise HistoryError(f"{to.parent} is not a folder; make it first, or choose another place")
    with tempfile.TemporaryDirectory(prefix=".piqa-rebuild-", dir=to.parent) as stage:
        built = Path(stage) / recorded.name
        _build(project, recorded, built, Path(stage) / "workspace.sqlite", changelog)
        if to.exists():
            to.rmdir()
        os.replace(built, to)
    return to


def _build(project: Project, recorded: Recorded, folder: Path, copy: Path, changelog: bool) -> None:
    """Write ``recorded`` to ``folder`` from a copy (at ``copy``) of the workspace as the release found it."""
    from piqa_tui.cli.commands import export
    from piqa_tui.cli.progress import progress_line

    assert project.workspace is not None
    as_of(project.workspace, recorded, copy, RELEASE_DEFAULTS_KEY)
    parser = argparse.ArgumentParser()
    export.add_arguments(parser)
    args = parser.parse_args([str(project.dataset.path), "--release", str(folder)])
    for key, value in recorded.args.items():
        if hasattr(args, key) and key not in _NOT_RECORDED:
            setattr(args, key, value)
    args.workspace, args.annotator = str(copy), recorded.by
    then = open_project(args, create=True)
    try:
        with progress_line(args) as progress:
            export.make_release(args, then, progress, recorded.time, changelog=changelog)
    finally:
        if then.workspace is not None:
            then.workspace.close()


def run_rebuild(args: argparse.Namespace) -> int:
    project = open_project(args)
    if project.workspace is None:
        raise HistoryError(f"{project.dataset.name} has no workspace: no release is recorded")
    recorded = find_release(project.workspace, args.name)
    folder = rebuild(project, recorded, Path(args.to).expanduser())
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
    scratch.mkdir()
    return rebuild(project, find_release(project.workspace, given), scratch / given, changelog=False)


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
