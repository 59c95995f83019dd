"""This machine's id in the team's repository: the name of the one batch folder it writes, kept in the workspace.

Two copies of a workspace must never write into one folder (their batches would share names with other content,
and a git merge would conflict on them), so the id belongs to a workspace file *in its place*: the host's name and
the file's absolute path. The id is drawn once for a place and stored in the workspace's ``meta``
(``sync_machine``: the places this file was synced from, each with its id). A workspace copied elsewhere (``cp``
to another clone, ``scp`` to another computer) carries that record, finds its new place in it under no id and
draws one of its own; the original keeps its id. Nothing here reads the file's inode or device, which change on
NFS and FUSE mounts and after a restore, and stay the same for no copy.

A place that changes without a copy (the folder moved, the host renamed) draws a new id too: harmless, the new
id's batches start where the old one's stopped. One file opened from two hosts (a home on NFS) keeps one id per
host, stable, each host writing its own folder.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
from pathlib import Path

from piqa_tui.core.workspace.log import Workspace

MACHINE_KEY = "sync_machine"
_MAX_PLACES = 64  # a record that grew past this (a file moved around very often) keeps its latest places


def place_of(path: Path) -> str:
    """Where a workspace file is: this host's name and the file's absolute path (the folders' symbolic links
    resolved), as one text."""
    return f"{socket.gethostname()}:{os.path.realpath(path)}"


def stored_id(ws: Workspace) -> str | None:
    """The id this workspace file already has in its place (None: it never synced from here); draws none."""
    return _places(ws.get_meta(MACHINE_KEY)).get(place_of(ws.path))


def machine_id(ws: Workspace) -> str:
    """The id this workspace file syncs under here, drawn (and stored) when this place has none yet."""
    place = place_of(ws.path)
    places = _places(ws.get_meta(MACHINE_KEY))
    found = places.get(place)
    if found is not None:
        return found
    machine = secrets.token_hex(8)
    places[place] = machine
    kept = dict(list(places.items())[-_MAX_PLACES:])
    ws.set_meta({MACHINE_KEY: json.dumps({"places": kept}, allow_nan=False)})
    return machine


def _places(stored: str | None) -> dict[str, str]:
    """The places of a stored record (none for a record this program did not write, or the older one tied to the
    file's inode: that file then draws a new id once)."""
    try:
        record = json.loads(stored or "{}")
    except ValueError:
        return {}
    places = record.get("places") if isinstance(record, dict) else None
    if not isinstance(places, dict):
        return {}
    return {k: v for k, v in places.items() if isinstance(k, str) and isinstance(v, str) and _is_id(v)}


def _is_id(text: str) -> bool:
    return len(text) == 16 and all(c in "0123456789abcdef" for c in text)
