"""The rules every event in the log obeys, written once as data: what this program writes and what it takes in.

``RULES`` holds one ``KindRule`` per event kind: whether the event names an item and a field, which values its
``new`` may hold (a check of the payload), and nothing else is accepted. ``Workspace`` checks each event it
records against the table (a kind missing from it cannot be written), and the gate for incoming events
(``core.sync.gate``) checks every row another machine's file brings against the same table before anything is
committed. The common rules hold for every kind: the time is a real instant in the log's one form (as
``votes import`` reads times) and not in the far future, the clock an integer the log can order, every value text
of bounded size.

A payload only a higher layer can read (a round's JSON) is checked by the function that layer registers with
``register_payload`` when it is imported; the gate imports every such layer, so none is missing there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from piqa_tui.core import strict_json
from piqa_tui.core.strict_json import JsonRuleError
from piqa_tui.core.workspace.limits import ValueTooLarge, check_value

YEARS = (1900, 2999)  # a time outside these years is a typo or a placeholder, not a moment someone worked
LOG_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"  # the one form of a time in the log (UTC, microseconds)
FUTURE_SLACK = timedelta(days=1)  # a machine's clock may run ahead; past this a time is forged or wrong
CLOCK_LIMIT = 2**62  # clocks at or above this cannot be ordered with the ones after them (2**63 is SQLite's end)
_SHOWN = 40  # characters of a bad value quoted in a reason
_PLAIN_UTC = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{6})?Z")
_LOG_FORM = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")
_CHOICE = re.compile(r"[0-9]{1,2}")
_QUOTED_TIME = re.compile(r"^time '.*?'(: | )")  # the start of canonical_time's reasons

# Where an item the log added began (``core/round/origin.py`` reads it): typed in, imported from a file, drafted
# or translated by a model. A person's edits never change it.
ORIGIN_KINDS = ("written", "imported", "drafted", "translated")

Payload = Callable[[str], None]  # raises ValueError saying why the value is not one its readers accept


def shown(text: str) -> str:
    """A value quoted in a reason: its first characters."""
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def canonical_time(value: str) -> str:
    """An ISO 8601 time as the log stores it (UTC, microseconds, Z); ValueError saying why when it is not a real instant."""
    text = value.strip()
    if not text.isascii():
        raise ValueError(f"time '{shown(text)}' has characters other than ASCII (digits must be 0-9)")
    try:
        parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" and text else text)
        if _PLAIN_UTC.fullmatch(text) and YEARS[0] <= parsed.year <= YEARS[1]:  # the usual form: no formatting needed
            return text if len(text) == 27 else text[:-1] + ".000000Z"
    except ValueError:
        raise ValueError(f"time '{shown(text)}' is not a real ISO 8601 time (e.g. 2026-11-20T09:14:03Z)") from None
    if not YEARS[0] <= parsed.year <= YEARS[1]:
        raise ValueError(f"time '{shown(text)}': year {parsed.year} is out of range ({YEARS[0]}-{YEARS[1]})")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)  # no offset: read as UTC (said in docs/voting.md)
    try:
        utc = parsed.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"time '{shown(text)}' is out of range in UTC") from None
    if not YEARS[0] <= utc.year <= YEARS[1]:  # the offset can carry a time just inside the range out of it
        raise ValueError(f"time '{shown(text)}' is {utc.year} in UTC, out of range ({YEARS[0]}-{YEARS[1]})")
    return utc.strftime(LOG_TIME)


def latest_time() -> str:
    """The latest time an event may carry now, in the log's form (times compare as text in that form)."""
    return (datetime.now(UTC) + FUTURE_SLACK).strftime(LOG_TIME)


def check_time(value: object, latest: str | None = None) -> None:
    """A stored time: the log's exact form, a real instant (as ``votes import`` reads it), not in the far future."""
    if type(value) is not str:
        raise ValueError(f"time is {_type_name(value)}, not text")
    if not (_LOG_FORM.fullmatch(value) and YEARS[0] <= int(value[:4]) <= YEARS[1] and _real_instant(value)):
        try:
            canonical_time(value)
            why = ""
        except ValueError as exc:  # "time '…' is …": what is wrong with it as an instant
            rest = _QUOTED_TIME.sub("", str(exc), count=1)
            why = ("; it " if rest.startswith(("is ", "has ")) else "; ") + rest
        raise ValueError(f"time '{shown(value)}' is not as the log writes it (2026-11-20T09:14:03.000000Z){why}")
    check_not_future(value, value, latest)


def check_not_future(value: str, written: str, latest: str | None = None) -> None:
    """A time in the log's form (``written`` as its file gave it) not past ``latest`` (default: a day from now)."""
    if value > (latest or latest_time()):
        raise ValueError(f"time '{shown(written)}' is in the future (more than a day ahead of this machine)")


def _real_instant(value: str) -> bool:
    """Whether a time of the log's form names a real date and time (a 30 February, a 25th hour do not)."""
    try:
        datetime.fromisoformat(value[:-1])
    except ValueError:
        return False
    return True


def check_clock(value: object) -> None:
    """A clock the log can order: an integer from 0 up to ``CLOCK_LIMIT``."""
    if type(value) is not int:
        raise ValueError(f"clock is {_type_name(value)}, not an integer")
    if not 0 <= value < CLOCK_LIMIT:
        raise ValueError(f"clock {value} is out of range (0 to 2^62)")


def _type_name(value: object) -> str:
    return {type(None): "empty", str: "text", bytes: "a blob", float: "a real number"}.get(type(value), "odd")


def check_new_item(text: str) -> None:
    """A ``new-item`` event's fields, as the replay reads them: a JSON object with a text prompt, 2-4 text
    solutions, a label that names one of them (or none), meta columns of text and, optionally, its origin (a
    table of texts with a ``kind``: imported, drafted, translated) ("" withdraws the item)."""
    if text == "":
        return
    try:
        data = strict_json.loads(text)
    except JsonRuleError as exc:  # which of two prompts would the item have? (the writers never repeat a key)
        raise ValueError(f"the new item {exc}") from None
    except (ValueError, RecursionError):
        raise ValueError("the new item is not readable JSON") from None
    if not isinstance(data, dict):
        raise ValueError("the new item is not a JSON object")
    solutions, label, meta = data.get("solutions"), data.get("label"), data.get("meta", {})
    if not isinstance(data.get("prompt"), str):
        raise ValueError("the new item has no text prompt")
    if (
        not isinstance(solutions, list)
        or not 2 <= len(solutions) <= 4
        or not all(isinstance(s, str) for s in solutions)
    ):
        raise ValueError("the new item's solutions are not 2 to 4 texts")
    if label is not None and (type(label) is not int or not 0 <= label < len(solutions)):
        raise ValueError(f"the new item's label {shown(json.dumps(label))} names none of its solutions")
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ValueError("the new item's meta is not a table of texts")
    origin = data.get("origin", {"kind": "written"})
    if not isinstance(origin, dict) or not all(isinstance(v, str) for v in origin.values()):
        raise ValueError("the new item's origin is not a table of texts")
    if origin.get("kind") not in ORIGIN_KINDS:
        raise ValueError(
            f"the new item's origin kind {shown(str(origin.get('kind')))} is none of {', '.join(ORIGIN_KINDS)}"
        )


def check_choice(text: str) -> None:
    """A vote's or an adjudication's choice: a solution's 0-based position, ``skip``, or "" (withdrawn)."""
    if text not in ("", "skip") and not _CHOICE.fullmatch(text):
        raise ValueError(f"choice '{shown(text)}' is no solution's position, 'skip' or empty")


SUGGEST_KIND = "suggest"  # a model's value for an item's field, waiting for a person (``core/workspace/suggestions``)
SUGGEST_REVIEW_KIND = "suggest-review"  # a person's decision on one suggestion (its id is the field)
REVIEW_DECISIONS = ("accept", "amend", "reject")  # kept as it was, kept after the person changed it, turned down


def check_provenance(text: str) -> None:
    """A suggestion's note: its provenance, a strict JSON object naming the model that made it (``source``)."""
    try:
        data = strict_json.loads(text)
    except JsonRuleError as exc:
        raise ValueError(f"the suggestion's provenance {exc}") from None
    except (ValueError, RecursionError):
        raise ValueError("the suggestion's provenance is not readable JSON") from None
    source = data.get("source") if isinstance(data, dict) else None
    if not isinstance(source, dict) or not isinstance(source.get("model"), str) or not source["model"]:
        raise ValueError("the suggestion's provenance is not a JSON object naming its model (source.model)")


def check_review(text: str) -> None:
    """A review's decision: accept, amend, reject, or "" (withdrawn by an undo)."""
    if text not in ("", *REVIEW_DECISIONS):
        raise ValueError(f"review '{shown(text)}' is not {', '.join(REVIEW_DECISIONS)} or empty")


def check_flag(text: str) -> None:
    if text not in ("0", "1"):
        raise ValueError(f"flag value '{shown(text)}' is not 0 or 1")


def check_release_id(text: str) -> None:
    """A ``release-id`` event's ``new``: the id an item is released under, one line of at most 200 characters
    with no spaces ("" takes it away)."""
    if len(text) > 200 or any(c.isspace() or not c.isprintable() for c in text):
        raise ValueError(f"release id '{shown(text)}' is not one line of at most 200 characters without spaces")


def check_release(text: str) -> None:
    """A ``release`` event's record (``core.workspace.releases``): a JSON object with the release's options, the
    SHA-256 of each file and the state of the log it came from (events, last clock, hash)."""
    try:
        data = strict_json.loads(text)
    except (JsonRuleError, ValueError, RecursionError):
        raise ValueError("the release record is not readable JSON") from None
    if not isinstance(data, dict):
        raise ValueError("the release record is not a JSON object")
    files, log = data.get("files"), data.get("log")
    if not isinstance(data.get("options"), dict) or not isinstance(data.get("dataset"), dict):
        raise ValueError("the release record has no options or dataset")
    if not isinstance(files, dict) or not all(
        isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v) for v in files.values()
    ):
        raise ValueError("the release record's files are not a table of SHA-256 hashes")
    if (
        not isinstance(log, dict)
        or type(log.get("events")) is not int
        or type(log.get("last_clock")) is not int
        or not isinstance(log.get("events_sha256"), str)
    ):
        raise ValueError("the release record has no log state (events, last clock, hash)")
    if not isinstance(data.get("defaults"), str | None):
        raise ValueError("the release record's defaults are not text")


ANY, NEEDED, NONE = "any", "needed", "none"  # whether an event names an item (a field): either, must, must not


@dataclass(frozen=True)
class KindRule:
    """What an event of one kind holds: whether it names an item and a field, and the check of its ``new``."""

    item: str = ANY
    field: str = ANY
    new: Payload | None = None
    registered: bool = False  # ``new`` is checked by the function its reader registers (``register_payload``)
    note: Payload | None = None  # the check of its ``note``, for kinds whose note is data (a suggestion's provenance)


RULES: dict[str, KindRule] = {
    "vote": KindRule(item=NEEDED, field=NEEDED, new=check_choice),
    "edit": KindRule(item=NEEDED, field=NEEDED),
    "undo": KindRule(),
    "redo": KindRule(),
    "flag": KindRule(item=NEEDED, field=NEEDED, new=check_flag),
    "note": KindRule(item=NEEDED),
    "dedup": KindRule(field=NEEDED),
    "adjudicate": KindRule(item=NEEDED, field=NEEDED, new=check_choice),
    "new-item": KindRule(item=NEEDED, new=check_new_item),
    "stage": KindRule(item=NEEDED, field=NEEDED),
    "round": KindRule(item=NONE, field=NEEDED, registered=True),
    "assign": KindRule(item=NEEDED, field=NEEDED),
    "guidelines": KindRule(field=NEEDED),
    "ask": KindRule(field=NEEDED),
    "reply": KindRule(field=NEEDED),
    "answer": KindRule(item=NEEDED, field=NEEDED),
    "order": KindRule(item=NEEDED, field=NEEDED),
    "release-id": KindRule(item=NEEDED, field=NEEDED, new=check_release_id),
    SUGGEST_KIND: KindRule(item=NEEDED, field=NEEDED, note=check_provenance),
    SUGGEST_REVIEW_KIND: KindRule(item=NEEDED, field=NEEDED, new=check_review),
    "release": KindRule(item=NONE, field=NEEDED, new=check_release),
}
_REGISTERED: dict[str, Payload] = {}


def register_payload(kind: str, check: Payload) -> None:
    """The check of a kind's payload, given by the layer that reads it (see the module's docstring)."""
    if kind not in RULES or not RULES[kind].registered:
        raise ValueError(f"event kind {kind!r} takes no registered payload check")
    _REGISTERED[kind] = check


def unregistered() -> list[str]:
    """The kinds whose payload check nobody has registered in this process."""
    return [kind for kind, rule in RULES.items() if rule.registered and kind not in _REGISTERED]


def _text(name: str, value: object, needed: bool) -> None:
    """Text, or None where allowed, of at most ``limits.MAX_VALUE_BYTES`` (the one bound the writers share)."""
    if type(value) is str:
        try:
            check_value(value, name)
        except ValueTooLarge as exc:
            raise ValueError(str(exc)) from None
        return
    if value is None:
        if needed:
            raise ValueError(f"no {name}")
        return
    raise ValueError(f"{name} is {_type_name(value)}, not text")


def _presence(name: str, value: object, rule: str) -> None:
    _text(name, value, rule == NEEDED)
    if rule == NONE and value is not None:
        raise ValueError(
            f"names {'an item' if name == 'item id' else 'a ' + name}, which this kind of event never does"
        )


def check_event(event: Sequence[object], *, latest: str | None = None, times: bool = True) -> None:
    """One event, (kind, time, annotator, item_id, field, old, new, note), against the rules of its kind (the clock
    and the id are checked apart); ValueError saying why. ``times=False`` leaves the time's form alone (events an
    older version wrote: only what breaks a replay is looked for)."""
    kind, time, annotator, item_id, field, old, new, note = event
    rule = RULES.get(kind) if isinstance(kind, str) else None
    if rule is None:
        raise ValueError(f"unknown event kind '{shown(str(kind))}'")
    if times:
        check_time(time, latest)
    _text("annotator", annotator, True)
    _presence("item id", item_id, rule.item)
    _presence("field", field, rule.field)
    _text("old value", old, False)
    _text("new value", new, False)
    _text("note", note, False)
    check = _REGISTERED.get(str(kind)) if rule.registered else rule.new
    if check is not None and isinstance(new, str):
        check(new)
    if rule.note is not None:
        if not isinstance(note, str):
            raise ValueError(f"a {kind} event carries no note")
        rule.note(note)
