"""Resolving duplicate clusters: keep one, mark as distinct, or merge notes — each logged.

A decision is an event of kind ``dedup`` in the workspace (``field`` = the
cluster's key, ``new`` = ``keep:ID`` | ``distinct`` | ``merge:ID``), so it is
undoable history like every other action. Keeping one flags the other members
``duplicate`` (their votes are kept); export drops them with ``--drop-flagged``.
The flags (or the merged note) and the decision are one action
(``Project.record``): one transaction, one undo step, so a busy workspace or a
kill part-way never leaves members flagged while the cluster stays open.
A cluster marked distinct is never shown again, nor any cluster whose members
all lie inside it.
"""

from __future__ import annotations

from piqa_tui.core.dedup.clusters import Cluster
from piqa_tui.core.workspace.log import Change, Part
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


def _decision(cluster: Cluster, decision: str, note: str | None = None) -> Part:
    return Part("dedup", (Change(None, cluster_key(cluster), None, decision),), note)


def keep_one(project: Project, cluster: Cluster, keep_id: str) -> list[str]:
    """Keep ``keep_id``; flag every other member of this dataset as a duplicate of it. Returns the flagged ids.

    The flags and the decision are one action: recorded together or not at all, undone in one step.
    """
    local = [m.id for m in cluster.members if m.source in (None, project.dataset.name) and m.id in project.index]
    flagged = [item_id for item_id in local if item_id != keep_id]
    flags = tuple(Change(item_id, "duplicate", None, "1") for item_id in flagged)
    parts = [Part("flag", flags, f"duplicate of {keep_id}")] if flags else []
    project.record([*parts, _decision(cluster, f"keep:{keep_id}")])
    return flagged


def mark_distinct(project: Project, cluster: Cluster, reason: str = "") -> None:
    """Record that the members are different items; the cluster is not shown again."""
    project.record([_decision(cluster, "distinct", reason or None)])


def merge_notes(project: Project, cluster: Cluster, into_id: str) -> str:
    """Gather the members' notes into ``into_id``'s note (each prefixed with its id); returns the new note.

    The note and the decision are one action, as in ``keep_one``.
    """
    before = project.state.notes.get(into_id)
    texts = [before or ""]
    for member in cluster.members:
        note = project.state.notes.get(member.id, "")
        if member.id != into_id and note and member.id in project.index:
            texts.append(f"[{member.id}] {note}")
    merged = "\n".join(t for t in texts if t)
    parts = [Part("note", (Change(into_id, "note", before, merged),))] if merged != (before or "") else []
    project.record([*parts, _decision(cluster, f"merge:{into_id}")])
    return merged
