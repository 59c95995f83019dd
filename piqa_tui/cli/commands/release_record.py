"""A release's place in the workspace's history (``core.workspace.releases``), as ``export --release`` and
``piqa-tui release`` use it: the event recorded, the name refused when taken, the card's changelog, a rebuild.

A recorded release is made again by ``build`` (``export.build_recorded``: the export run again with the recorded
options and time, on a copy of the workspace holding only the events the release was made from); it is passed in,
so this module and ``export`` do not import each other.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path

from piqa_tui.core.dataset.reading import source_files
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.release.diff import changelog, diff_releases, read_release
from piqa_tui.core.release.folder import MANIFEST, ReleaseError, check_target, publish, read_manifest
from piqa_tui.core.release.manifest import file_sha256, folder_files
from piqa_tui.core.votes.release_defaults import RELEASE_DEFAULTS_KEY
from piqa_tui.core.workspace.log import Change
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.releases import (
    RELEASE_KIND,
    HistoryError,
    Recorded,
    as_of,
    payload,
    recorded_releases,
)

# Export options a release's record leaves out: where it was written and how this run spoke, not what it holds.
NOT_RECORDED = frozenset({"path", "workspace", "release", "force", "json", "run", "annotator", "to", "card", "format"})
Build = Callable[[Project, Recorded, Path, Path, bool], None]  # (project, release, folder, workspace copy, changelog)


def record_release(project: Project, args: argparse.Namespace, folder: Path, time: str) -> None:
    """Record the release just written to ``folder`` in the workspace: one ``release`` event."""
    assert project.workspace is not None  # export --release opens the project with its workspace
    manifest = read_manifest(folder) or {}
    state = manifest.get("workspace") if isinstance(manifest.get("workspace"), dict) else {}
    assert isinstance(state, dict)
    files = {name: str(entry["sha256"]) for name, entry in folder_files(folder).items()}
    files[MANIFEST] = file_sha256(folder / MANIFEST)
    options = {k: v for k, v in sorted(vars(args).items()) if k not in NOT_RECORDED and _plain(v)}
    recorded = Recorded(
        name=folder.name,
        time=time,
        by=project.annotator,
        args=options,
        files=files,
        log=dict(state),  # with the workspace id: a clone that received the release by sync has its own
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


def changelog_notes(project: Project, build: Build | None) -> Callable[[Path, dict[str, object]], list[str]] | None:
    """The card's changelog against the latest recorded release (made again with ``build``), given the new
    release's folder and draft manifest (None: this is the first release, or ``build`` is None: a rebuild made
    only to be compared)."""
    if build is None:
        return None
    previous = recorded_releases(project.workspace)
    if not previous:
        return None
    last = previous[-1]

    def notes(folder: Path, draft: dict[str, object]) -> list[str]:
        with tempfile.TemporaryDirectory(prefix="piqa-release-") as tmp:
            try:
                old = rebuild(project, last, Path(tmp) / last.name, build, changelog=False)
            except PiqaError as exc:
                return [f"Changes since the previous release, `{last.name}`, cannot be listed: {exc}."]
            return changelog(diff_releases(read_release(old), read_release(folder, draft)), last.name, last.time)

    return notes


# ------------------------------------------------------------------ rebuilding


def rebuild(
    project: Project, recorded: Recorded, to: Path, build: Build, *, changelog: bool = True, force: bool = False
) -> Path:
    """Make ``recorded`` again in ``to`` with ``build``, from a copy of the workspace as it found it (``as_of``);
    ``to`` is new, an empty folder or (``force``) a release of its own files, as ``export --release`` takes it.
    It is built under its own name beside ``to`` (the name is in its card and manifest), then renamed to ``to``."""
    if project.workspace is None:
        raise HistoryError(f"{project.dataset.name} has no workspace: no release is recorded")
    if recorded.dataset.get("sha256") != project.dataset.sha256:
        raise HistoryError(
            f"{project.dataset.name} is no longer the file release {recorded.name!r} was made from (its SHA-256 "
            "differs): check out that version of the file to rebuild it"
        )
    check_target(to, force, [*source_files(project.dataset), project.workspace_path])
    with tempfile.TemporaryDirectory(prefix=".piqa-rebuild-", dir=to.parent) as stage:
        built = Path(stage) / recorded.name
        copy = as_of(project.workspace, recorded, Path(stage) / "workspace.sqlite", RELEASE_DEFAULTS_KEY)
        build(project, recorded, built, copy, changelog)
        publish(built, to)
    return to
