"""The gate for incoming events: everything another machine's file brings is checked before anything is committed.

Every row is held to the rules this program's own writes obey (``core.workspace.event_rules``: the kind's table
row, times as ``votes import`` reads them and not in the far future, clocks the log can order, bounded values,
payloads as their readers read them), and every shared setting to the parser that reads it. The first row that
fails refuses the whole file, in one line naming the file and the row; the local record is untouched.

Importing this module imports every layer that registers a payload check, so none is missing here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import piqa_tui.core.round.recorded  # noqa: F401  (registers the round's payload check)
from piqa_tui.core.dataset.layout import parse_mapping
from piqa_tui.core.errors import InputError, PiqaError
from piqa_tui.core.votes.decisions import POLICY_KEY, parse_policy
from piqa_tui.core.votes.release_defaults import RELEASE_DEFAULTS_KEY, ReleaseDefaults
from piqa_tui.core.workspace.event_rules import check_clock, check_event, latest_time, shown, unregistered
from piqa_tui.core.workspace.limits import MAX_VALUE_BYTES
from piqa_tui.core.workspace.preferences import MAPPING_KEY

MAX_UID = 200  # characters in an event's global id (this program writes 32)

# The shared settings a merge takes over, each with the reader that must accept it.
SETTINGS: dict[str, Callable[[str], object]] = {
    POLICY_KEY: parse_policy,
    MAPPING_KEY: parse_mapping,
    RELEASE_DEFAULTS_KEY: ReleaseDefaults.parse,
}


class Refused(InputError):
    """A file another machine sent that breaks the log's rules: refused whole, nothing recorded."""


def refusal(source: Path, where: str, reason: str) -> Refused:
    return Refused(f"{source}: refused, nothing was merged: {where}: {reason}")


def checked_events(source: Path, rows: Iterable[tuple]) -> Iterator[tuple]:
    """The rows (seq, time, annotator, kind, item_id, field, old, new, action, note, uid, clock) of another
    machine's log, each passed on once it passes the gate; ``Refused`` at the first that fails."""
    missing = unregistered()
    assert not missing, f"no payload check registered for {missing}"  # a layer this module forgot to import
    latest = latest_time()
    seen: set[object] = set()
    for row in rows:
        seq, time, annotator, kind, item_id, field, old, new, action, note, uid, clock = row
        try:
            if uid in seen:
                raise ValueError(f"its global id {shown(str(uid))} is another event's too")
            seen.add(uid)
            check_event((kind, time, annotator, item_id, field, old, new, note), latest=latest)
            check_clock(clock)
            if type(uid) is not str or not 0 < len(uid) <= MAX_UID:
                raise ValueError("its global id is missing or not a short text")
            if action is not None and type(action) is not int:
                raise ValueError("its action is not an event number")
        except ValueError as exc:
            raise refusal(source, f"event {shown(str(seq))}", str(exc)) from None
        yield row


def check_settings(source: Path, meta: dict[str, object]) -> None:
    """The shared settings (keys of ``SETTINGS``) another machine's file brings, each read by its reader;
    ``Refused`` at the first bad one."""
    for key, value in sorted(meta.items()):
        where = f"setting {shown(key)}"
        if type(value) is not str or len(value.encode("utf-8", "surrogatepass")) > MAX_VALUE_BYTES:
            raise refusal(source, where, "not a text of bounded size")
        try:
            SETTINGS[key](value)
        except (PiqaError, ValueError) as exc:
            raise refusal(source, where, f"unreadable ({shown(str(exc))})") from None
