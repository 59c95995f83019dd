"""The round a lead declares: annotators with roles and attributes, validators per item, routing rules, a seed.

Read once from a small TOML file (``parse_round``) and checked there, so everything after holds a
``Round``, never a table to look into again. Its canonical JSON (``Round.canonical``) is what the
workspace records: the same declaration gives the same text on every machine. Unknown keys are refused
(a typo would otherwise silently route nothing). ``[[question]]`` tables declare the extra questions
asked per item, checked by ``core/round/questions.py``.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from piqa_tui.core.dataset.input_file import read_input
from piqa_tui.core.errors import InputError
from piqa_tui.core.round.questions import Question, QuestionError, checked_questions, question_from_table

ROLES = ("writer", "reviewer", "validator", "lead")
ROUND_KEYS = ("name", "seed", "validators_per_item", "shuffle", "routing", "annotator", "question")
ROUTING_KEYS = ("same", "never", "balance")
ANNOTATOR_KEYS = ("name", "roles", "active")  # every other key of an annotator is an attribute
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_TOML_WHERE = re.compile(r"\(at line (\d+), column (\d+)\)$")


class RoundError(InputError):
    """A round file (or a recorded round) that cannot be used: one line naming the file, where and what to do."""


@dataclass(frozen=True, slots=True)
class Annotator:
    """One person in the round. ``attributes`` maps a name (country, dialect, languages) to its values;
    ``active = false`` marks someone who left: they keep what they did, their open items go to others."""

    name: str
    roles: tuple[str, ...]
    attributes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    active: bool = True

    def values(self, attribute: str) -> tuple[str, ...]:
        """The annotator's values of one attribute (none when they have no such attribute)."""
        return dict(self.attributes).get(attribute, ())

    @property
    def validates(self) -> bool:
        """Whether assignment may give this annotator items to validate now."""
        return self.active and "validator" in self.roles

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "roles": list(self.roles),
            "active": self.active,
            "attributes": {key: list(values) for key, values in self.attributes},
        }


@dataclass(frozen=True, slots=True)
class Routing:
    """Rules over item metadata. ``same``: a validator's attribute of that name must hold the item's value of
    the column of that name (validators from the item's country). ``never``: a column naming a person who must
    not validate the item (its author). ``balance``: spread items evenly over the validators who may take them."""

    same: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    balance: bool = True

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.same, *self.never)

    def to_json(self) -> dict[str, object]:
        return {"same": list(self.same), "never": list(self.never), "balance": self.balance}


@dataclass(frozen=True, slots=True)
class Round:
    """A declared round (see the module docstring); ``validators_per_item`` validators are drawn per item.
    ``shuffle``: validators see each item's solutions in an order of their own (``core/round/order.py``)."""

    name: str
    seed: int
    validators_per_item: int
    annotators: tuple[Annotator, ...]
    routing: Routing = field(default_factory=Routing)
    shuffle: bool = False
    questions: tuple[Question, ...] = ()  # the extra questions asked per item (core/round/questions.py)
    _named: dict[str, Annotator] = field(default_factory=dict, init=False, compare=False, repr=False)

    def question(self, question_id: str) -> Question | None:
        return next((q for q in self.questions if q.id == question_id), None)

    def annotator(self, name: str) -> Annotator | None:
        """The annotator of that name (None: the round names nobody so): a look-up, asked once per person."""
        if not self._named:
            self._named.update((a.name, a) for a in self.annotators)
        return self._named.get(name)

    def shuffles_for(self, name: str) -> bool:
        """Whether ``name`` sees solutions in an order of their own: the round shuffles, and they validate
        (or the round does not name them); a writer, reviewer or lead without the validator role sees file order."""
        person = self.annotator(name)
        return self.shuffle and (person is None or "validator" in person.roles)

    @property
    def validators(self) -> tuple[Annotator, ...]:
        """The annotators assignment may give items to now (validator role, active), in name order."""
        return tuple(sorted((a for a in self.annotators if a.validates), key=lambda a: a.name))

    def to_json(self) -> dict[str, object]:
        found: dict[str, object] = {
            "name": self.name,
            "seed": self.seed,
            "validators_per_item": self.validators_per_item,
            "routing": self.routing.to_json(),
            "annotators": [a.to_json() for a in self.annotators],
            **({"questions": [q.to_json() for q in self.questions]} if self.questions else {}),
        }
        if self.shuffle:  # only when on: a round recorded before the key existed keeps its canonical text
            found["shuffle"] = True
        return found

    def canonical(self) -> str:
        """The round as the workspace records it: sorted keys, no spaces, text as is (one text per round)."""
        return json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    @staticmethod
    def from_canonical(text: str) -> Round:
        """The round a workspace recorded (``canonical``), checked as a file would be."""
        try:
            table = json.loads(text)
        except ValueError:
            raise RoundError(
                "the workspace's recorded round is not readable JSON; import the round file again"
            ) from None
        if not isinstance(table, dict):
            raise RoundError("the workspace's recorded round is not a table; import the round file again")
        table = dict(table)
        table["annotator"] = [
            {**{k: v for k, v in a.items() if k != "attributes"}, **a.get("attributes", {})}
            for a in table.pop("annotators", [])
            if isinstance(a, dict)
        ]
        if "questions" in table:
            table["question"] = table.pop("questions")
        return round_from_table(table, _Where("the workspace's recorded round", ""))


# ------------------------------------------------------------------------- reading a file


def read_round_file(path: Path) -> Round:
    """The round declared in a TOML file; ``RoundError`` (one line: file, line where known, what to do) if not."""
    data = read_input(path, "round file")
    try:
        text = data.decode("utf-8-sig")  # a BOM from a Windows editor is no statement
    except UnicodeDecodeError as exc:
        raise RoundError(f"{path}: not UTF-8 text (byte {exc.start}); save the round file as UTF-8") from None
    return parse_round(text, str(path))


def parse_round(text: str, source: str) -> Round:
    """The round declared in TOML ``text`` read from ``source`` (a file name, for the messages)."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _TOML_WHERE.search(message)
        where = f"{source}:{found[1]}:{found[2]}" if found else source
        reason = _TOML_WHERE.sub("", message).strip()
        raise RoundError(f"{where}: not valid TOML ({reason}); fix the round file") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise RoundError(f"{source}: nested too deeply to be a round file; fix it") from None
    except ValueError:  # an integer of over 4,300 digits, which Python will not read
        raise RoundError(f"{source}: a number too long to read (over 4,300 digits); fix the round file") from None
    return round_from_table(table, _Where(source, text))


@dataclass(frozen=True, slots=True)
class _Where:
    """Names the place of a problem: the file, and the line when the text shows it. The lines matching a pattern
    are found once per pattern (a round of 10,000 annotators asks for the line of each: one pass, not one each)."""

    source: str
    text: str
    _found: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)

    def at(self, pattern: str, nth: int = 0) -> str:
        """``source:LINE`` for the ``nth`` line matching ``pattern`` (just ``source`` when none does)."""
        matches = self._found.get(pattern)
        if matches is None:
            compiled = re.compile(pattern)
            lines = enumerate(self.text.splitlines(), 1)
            matches = self._found[pattern] = [n for n, line in lines if compiled.match(line)]
        return f"{self.source}:{matches[nth]}" if nth < len(matches) else self.source

    def key(self, name: str) -> str:
        return self.at(rf"\s*{re.escape(name)}\s*=")

    def annotator(self, nth: int) -> str:
        return self.at(r"\s*\[\[\s*annotator\s*\]\]", nth)


def round_from_table(table: Mapping[str, object], where: _Where) -> Round:
    """Check a parsed round table and build the ``Round``; ``RoundError`` names the first problem."""
    _refuse_unknown(table, ROUND_KEYS, "the round", where.source)
    annotators = table.get("annotator", [])
    if not isinstance(annotators, list) or not annotators:
        raise RoundError(
            f"{where.source}: the round names no annotators; "
            'add one [[annotator]] table per person (name = "…", roles = […])'
        )
    people = tuple(_annotator(entry, n, where) for n, entry in enumerate(annotators))
    seen: set[str] = set()
    for n, person in enumerate(people):
        if person.name in seen:
            raise RoundError(
                f"{where.annotator(n)}: {person.name!r} is named twice; give each person one [[annotator]] table"
            )
        seen.add(person.name)
    return Round(
        name=_text(table.get("name", ""), "name", where.key("name"), allow_empty=True),
        seed=_integer(table.get("seed", 0), "seed", where.key("seed"), minimum=0),
        validators_per_item=_panel(table.get("validators_per_item", 1), len(people), where.key("validators_per_item")),
        annotators=people,
        routing=_routing(table.get("routing", {}), where),
        shuffle=_flag(table.get("shuffle", False), "shuffle", where.key("shuffle")),
        questions=_questions(table.get("question", []), where),
    )


def _questions(entries: object, where: _Where) -> tuple[Question, ...]:
    """The ``[[question]]`` tables, checked (see core/round/questions.py); a problem is a ``RoundError``."""
    if not isinstance(entries, list):
        raise RoundError(f'{where.key("question")}: question should be [[question]] tables, each with id = "…"')
    try:
        found = [question_from_table(e, where.at(r"\s*\[\[\s*question\s*\]\]", n)) for n, e in enumerate(entries)]
        return checked_questions(found, where.source)
    except QuestionError as exc:
        raise RoundError(str(exc)) from None


def _annotator(entry: object, nth: int, where: _Where) -> Annotator:
    place = where.annotator(nth)
    if not isinstance(entry, Mapping):
        raise RoundError(f'{place}: annotator {nth + 1} is not a table; write [[annotator]] then name = "…"')
    if "name" not in entry:
        raise RoundError(f'{place}: annotator {nth + 1} has no name; add name = "…"')
    name = _text(entry["name"], "name", place)
    who = f"{place}: annotator {name!r}"
    roles = entry.get("roles")
    if isinstance(roles, str):
        roles = [roles]
    if not isinstance(roles, list) or not roles:
        raise RoundError(f'{who} has no roles; add roles = ["validator"] (any of {", ".join(ROLES)})')
    unknown = next((r for r in roles if r not in ROLES), None)
    if unknown is not None:
        raise RoundError(f"{who}: role {str(unknown)!r} is not one of {', '.join(ROLES)}; fix the roles list")
    active = entry.get("active", True)
    if not isinstance(active, bool):
        raise RoundError(f"{who}: active = {active!r} should be true or false")
    attributes = tuple(
        (key, _values(value, f"{who}: {key}")) for key, value in entry.items() if key not in ANNOTATOR_KEYS
    )
    return Annotator(name, tuple(dict.fromkeys(roles)), attributes, active)


def _routing(table: object, where: _Where) -> Routing:
    place = where.at(r"\s*\[\s*routing\s*\]")
    if not isinstance(table, Mapping):
        raise RoundError(f'{place}: routing should be a table: [routing] with same = "country", never = "author"')
    _refuse_unknown(table, ROUTING_KEYS, "[routing]", place)
    balance = table.get("balance", True)
    if not isinstance(balance, bool):
        raise RoundError(f"{where.key('balance')}: balance = {balance!r} should be true or false")
    return Routing(
        same=_values(table.get("same", ()), f"{where.key('same')}: routing same"),
        never=_values(table.get("never", ()), f"{where.key('never')}: routing never"),
        balance=balance,
    )


def _refuse_unknown(table: Mapping[str, object], known: tuple[str, ...], what: str, place: str) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise RoundError(f"{place}: unknown key {unknown[0]!r} in {what}; the keys are {', '.join(known)}")


def _text(value: object, name: str, place: str, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and not value.strip()) or _CONTROL.search(value):
        raise RoundError(f"{place}: {name} = {str(value)[:40]!r} should be non-empty text without control characters")
    return value


def _flag(value: object, name: str, place: str) -> bool:
    if not isinstance(value, bool):
        raise RoundError(f"{place}: {name} = {str(value)[:40]!r} should be true or false")
    return value


def _integer(value: object, name: str, place: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RoundError(f"{place}: {name} = {str(value)[:40]!r} should be a whole number, {minimum} or more")
    return value


def _panel(value: object, people: int, place: str) -> int:
    """``validators_per_item``: a whole number from 0 to the round's number of annotators, the largest panel
    that can sit (a larger one could never be staffed, and each seat would cost every command that counts them)."""
    per_item = _integer(value, "validators_per_item", place, minimum=0)
    if per_item > people:
        shown = str(per_item) if per_item < 10**40 else "a number of over 40 digits"  # str() fails past 4,300
        raise RoundError(
            f"{place}: validators_per_item = {shown} is more than the round's {people} "
            f"annotator{'s' * (people != 1)}; give {people} or fewer, or name more annotators"
        )
    return per_item


def _values(value: object, what: str) -> tuple[str, ...]:
    """A string or a list of strings, as a tuple (an attribute, a routing rule's columns)."""
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in values):
        raise RoundError(f'{what} should be text or a list of texts, e.g. "Egypt" or ["ar", "en"]')
    return tuple(values)
