"""Readable, stable ids for a release: items written in the workspace (ids ``new-<hex>``, as
``core.round.stages`` makes them) take the dataset's own scheme, the most common prefix of its numbered ids
followed by the next free number (``msa-031``, ``msa-032``, …).

Stable: the mapping is kept in the workspace's log, one ``release-id`` event per item renamed (``field``
``release_id``, ``new`` the id it is released under), so it travels with ``workspace merge`` and ``sync`` like
any other record, and every later release reuses it: an item keeps its release id whatever items are written or
withdrawn after it, and a number once given is never given to another item. Two copies that released apart
and gave one number to two items settle it the same way in any order: the earliest event in the log's order
keeps the number, the other item takes the next free one at the next release. A workspace an earlier version
kept the mapping in (meta ``release_ids``) is still read, under the events. Items from the file keep their ids.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.workspace.log import Change, Part
from piqa_tui.core.workspace.project import Project

RELEASE_IDS_KEY = "release_ids"  # the workspace meta an earlier version kept the mapping in
RELEASE_ID_KIND = "release-id"
RELEASE_ID_FIELD = "release_id"
NEW_PREFIX = "new-"  # the ids of items written in the workspace
FALLBACK_PREFIX = "item-"  # when the file has no numbered ids to follow
_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def kept_ids(project: Project) -> dict[str, str]:
    """The mapping earlier releases gave (empty without a workspace or before any), one release id per item."""
    return _recorded(project)[0]


def _recorded(project: Project) -> tuple[dict[str, str], set[str]]:
    """(item → release id in force, every release id ever given): the log's ``release-id`` events in its order
    over the meta an earlier version kept; a number another item holds already stays that item's."""
    if project.workspace is None:
        return {}, set()
    kept = _kept_in_meta(project)
    given = set(kept.values())
    holder = {name: item for item, name in kept.items()}
    for event in project.workspace.events(kinds=[RELEASE_ID_KIND]):
        item_id, new = event.item_id or "", event.new or ""
        given.add(new)
        if holder.get(new, item_id) != item_id:
            continue  # another item holds this number already
        if kept.get(item_id):
            holder.pop(kept.pop(item_id), None)
        if new:
            kept[item_id], holder[new] = new, item_id
    given.discard("")
    return kept, given


def _kept_in_meta(project: Project) -> dict[str, str]:
    """The mapping as an earlier version kept it (workspace meta ``release_ids``)."""
    text = project.workspace.get_meta(RELEASE_IDS_KEY) if project.workspace is not None else None
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def readable_ids(project: Project, items: Iterable[Item]) -> dict[str, str]:
    """Old id → release id for each of ``items`` written in the workspace (see the module docstring)."""
    kept, ever_given = _recorded(project)
    prefix, width = _scheme(item.id for item in project.items if not item.id.startswith(NEW_PREFIX))
    taken = {item.id for item in project.items} | ever_given
    numbers = [int(m.group(2)) for name in taken if (m := _NUMBERED.match(name)) and m.group(1) == prefix]
    following = max(numbers, default=0) + 1
    mapping: dict[str, str] = {}
    for item in items:
        if not item.id.startswith(NEW_PREFIX):
            continue
        if item.id in kept:
            mapping[item.id] = kept[item.id]
            continue
        while (given := f"{prefix}{following:0{width}d}") in taken:
            following += 1
        mapping[item.id] = given
        taken.add(given)
    return mapping


def keep_ids(project: Project, mapping: dict[str, str]) -> None:
    """Record the ids of ``mapping`` not kept yet (one action of ``release-id`` events), so later releases, here
    and on every copy this log reaches, give the same ids."""
    kept = kept_ids(project)
    changes = tuple(
        Change(old, RELEASE_ID_FIELD, kept.get(old), new) for old, new in mapping.items() if kept.get(old) != new
    )
    if project.workspace is not None and changes:
        project.record([Part(RELEASE_ID_KIND, changes, f"release ids of {len(changes)} items")])


def _scheme(ids: Iterable[str]) -> tuple[str, int]:
    """The most common (prefix, digits) of the numbered ids; ``item-`` and 4 digits when none is."""
    found = Counter((m.group(1), len(m.group(2))) for name in ids if (m := _NUMBERED.match(name)))
    return found.most_common(1)[0][0] if found else (FALLBACK_PREFIX, 4)
