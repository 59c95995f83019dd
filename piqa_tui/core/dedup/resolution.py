"""Resolving duplicate clusters: keep one, mark as distinct, or merge notes — each logged.

A decision is an event of kind ``dedup`` in the workspace (``field`` = the
cluster's key, ``new`` = ``keep:ID`` | ``distinct`` | ``merge:ID``), so it is
undoable history like every other action. Keeping one flags the other members
``duplicate`` (their votes are kept); export drops them with ``--drop-flagged``.
A cluster marked distinct is never shown again, nor any cluster whose members
all lie inside it.
"""

from __future__ import annotations

from piqa_tui.core.dedup.clusters import Cluster
from piqa_tui.core.workspace.log import Change
from piqa_tui.core.workspace.project import Project


def cluster_key(cluster: Cluster) -> str:
    """A stable name for a cluster: its member ids (and sources), sorted."""
    return "|".join(sorted(f"{m.source}:{m.id}" if m.source else m.id for m in cluster.members))


def _members(key: str) -> set[str]:
    return set(key.split("|"))


def resolved(project: Project) -> dict[str, str]:
    """Cluster key → decision (``keep:ID``, ``distinct`` or ``merge:ID``), the latest per cluster."""
    return dict(project.state.dedup)


def _distinct_index(project: Project) -> dict[str, list[set[str]]]:
    """Member → the member sets marked distinct that contain it (built once per call, not per cluster)."""
    index: dict[str, list[set[str]]] = {}
    for key, decision in project.state.dedup.items():
        if decision == "distinct":
            members = _members(key)
            for member in members:
                index.setdefault(member, []).append(members)
    return index


def _hidden(cluster: Cluster, index: dict[str, list[set[str]]]) -> bool:
    members = _members(cluster_key(cluster))
    first = next(iter(members))
    return any(members <= marked for marked in index.get(first, ()))


def open_clusters(project: Project, clusters: list[Cluster]) -> list[Cluster]:
    """The clusters still to walk through: not marked distinct and not yet resolved."""
    index = _distinct_index(project)
    return [c for c in clusters if cluster_key(c) not in project.state.dedup and not _hidden(c, index)]


def _record(project: Project, cluster: Cluster, decision: str, note: str | None = None) -> None:
    ws = project._require_workspace()
    ws.record(project.annotator, "dedup", [Change(None, cluster_key(cluster), None, decision)], note)  # type: ignore[arg-type]
    project.refresh()


def keep_one(project: Project, cluster: Cluster, keep_id: str) -> list[str]:
    """Keep ``keep_id``; flag every other member of this dataset as a duplicate of it. Returns the flagged ids."""
    local = [m.id for m in cluster.members if m.source in (None, project.dataset.name) and m.id in project.index]
    flagged = [item_id for item_id in local if item_id != keep_id]
    for item_id in flagged:
        project.set_flag(item_id, "duplicate", True, f"duplicate of {keep_id}")
    _record(project, cluster, f"keep:{keep_id}")
    return flagged


def mark_distinct(project: Project, cluster: Cluster, reason: str = "") -> None:
    """Record that the members are different items; the cluster is not shown again."""
    _record(project, cluster, "distinct", reason or None)


def merge_notes(project: Project, cluster: Cluster, into_id: str) -> str:
    """Gather the members' notes into ``into_id``'s note (each prefixed with its id); returns the new note."""
    parts = [project.state.notes.get(into_id, "")]
    for member in cluster.members:
        note = project.state.notes.get(member.id, "")
        if member.id != into_id and note and member.id in project.index:
            parts.append(f"[{member.id}] {note}")
    merged = "\n".join(p for p in parts if p)
    if merged != project.state.notes.get(into_id, ""):
        project.set_note(into_id, merged)
    _record(project, cluster, f"merge:{into_id}")
    return merged
