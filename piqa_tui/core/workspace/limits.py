"""How large one value of the workspace's log may be: the one bound the local writers and the merge gate share.

A value is what one event carries in a column (a note, an item's text, a draft's canonical JSON, an answer, the
round's canonical JSON, a version of the guidelines). Every command replays the log, so a value without a bound
is a cost every later command pays on every machine that merged it (a 60 MiB note; 30 guideline versions of
16 MiB made each command ~600 MB). ``MAX_VALUE_BYTES`` of UTF-8 holds far more than any real value: a round of
about 40,000 annotators, a guidelines book (those are held to 1 MiB of their own), a note of a few pages many
times over. The local write path (``Workspace.append_checked``, ``Workspace.insert_events``) refuses a larger
value in one line before anything is recorded; what arrives from elsewhere is held to the same constant.
"""

from __future__ import annotations

from piqa_tui.core.errors import InputError

MAX_VALUE_BYTES = 4 * 1024**2  # 4 MiB of UTF-8 in one value of one event


class ValueTooLarge(InputError):
    """A value over ``MAX_VALUE_BYTES``: one line naming it; nothing was recorded."""


def check_value(value: str | None, what: str) -> None:
    """``ValueTooLarge`` when ``value`` is over ``MAX_VALUE_BYTES`` of UTF-8; ``what`` names it in the line."""
    if value is None or len(value) * 4 <= MAX_VALUE_BYTES:  # at most 4 bytes a character: no need to encode
        return
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_VALUE_BYTES:
        raise ValueTooLarge(
            f"{what} is {size:,} bytes, more than the {MAX_VALUE_BYTES:,} one value may hold; shorten it"
        )
