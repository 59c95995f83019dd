"""Readable, stable ids for a release: items written in the workspace (ids ``new-<hex>``, as
``core.round.stages`` makes them) take the dataset's own scheme, the most common prefix of its numbered ids
followed by the next free number (``msa-031``, ``msa-032``, …).

Stable: the mapping is kept in the workspace (meta ``release_ids``, old id → release id) and every later
release reuses it, so an item keeps its release id whatever items are written or withdrawn after it, and a
number once given is never given to another item. Items from the file keep their ids.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.workspace.project import Project

RELEASE_IDS_KEY = "release_ids"
NEW_PREFIX = "new-"  # the ids of items written in the workspace
FALLBACK_PREFIX = "item-"  # when the file has no numbered ids to follow
_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def kept_ids(project: Project) -> dict[str, str]:
    """The mapping earlier releases gave (empty without a workspace or before any)."""
    text = project.workspace.get_meta(RELEASE_IDS_KEY) if project.workspace is not None else None
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def readable_ids(project: Project, items: Iterable[Item]) -> dict[str, str]:
    """Old id → release id for each of ``items`` written in the workspace (see the module docstring)."""
    kept = kept_ids(project)
    prefix, width = _scheme(item.id for item in project.items if not item.id.startswith(NEW_PREFIX))
    taken = {item.id for item in project.items} | set(kept.values())
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
    """Record ``mapping`` with the ones kept before, so later releases give the same ids."""
    if project.workspace is not None and mapping:
        merged = kept_ids(project) | mapping
        project.workspace.set_meta(
            {RELEASE_IDS_KEY: json.dumps(merged, sort_keys=True, ensure_ascii=False, allow_nan=False)}
        )


def _scheme(ids: Iterable[str]) -> tuple[str, int]:
    """The most common (prefix, digits) of the numbered ids; ``item-`` and 4 digits when none is."""
    found = Counter((m.group(1), len(m.group(2))) for name in ids if (m := _NUMBERED.match(name)))
    return found.most_common(1)[0][0] if found else (FALLBACK_PREFIX, 4)
