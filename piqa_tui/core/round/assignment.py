"""Drawing who validates which item, from a declared round and the items' metadata.

Deterministic on any machine: items are visited in the order of a SHA-256 of (seed, id) and ties between
validators are broken by a SHA-256 of (seed, id, name), so neither the file's row order nor the
platform's hash or random number generator changes the result. Balanced: each item takes the validators
with the fewest items so far, which keeps max − min ≤ 1 among validators who may take the same items.
An item with too few eligible validators gets those there are, and one line saying why. Only items ready for
validation (``ready``) get places; the others keep no more than what their validators already did.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.round.declaration import Round, RoundError
from piqa_tui.core.round.recorded import Assignment


@dataclass(frozen=True, slots=True)
class Unstaffed:
    """An item that gets fewer validators than the round asks for, and why (each routing step's count)."""

    item_id: str
    needed: int
    found: int
    steps: tuple[str, ...]
    hint: str

    def line(self) -> str:
        return (
            f"{self.item_id}: needs {self.needed} validator{'s' * (self.needed != 1)}, {self.found} can take it "
            f"({'; '.join(self.steps)}); {self.hint}"
        )

    def to_json(self) -> dict[str, object]:
        return {"item_id": self.item_id, "needed": self.needed, "found": self.found, "why": self.line()}


@dataclass(frozen=True, slots=True)
class Draw:
    """An assignment drawn for a round: what to record, and what could not be staffed."""

    assignment: Assignment
    unstaffed: tuple[Unstaffed, ...]
    seed: int
    kept: int = 0  # (item, validator) pairs a top-up kept
    released: int = (
        0  # pairs taken back: the validator left, may no longer take the item, or it is not at validation; not done
    )
    waiting: int = 0  # items left out because they are not ready for validation (a draft, in review, done)


def check_columns(declared: Round, columns: Iterable[str], source: str) -> None:
    """``RoundError`` when a routing rule names a column the dataset does not have."""
    have = set(columns)
    missing = next((c for c in declared.routing.columns if c not in have), None)
    if missing is not None:
        shown = ", ".join(sorted(have)[:10]) or "none"
        raise RoundError(
            f"{source}: routing names the column {missing!r}, which the dataset lacks (it has {shown}); "
            "fix the routing or add the column"
        )


def eligible(declared: Round, item: Item) -> tuple[list[str], list[str]]:
    """The validators who may take ``item`` under the routing rules (name order), and the count after each rule."""
    pool = list(declared.validators)
    steps = [f"{len(pool)} active validator{'s' * (len(pool) != 1)}"]
    for column in declared.routing.same:
        value = item.meta.get(column, "")
        pool = [a for a in pool if value in a.values(column)]
        steps.append(f"{len(pool)} with {column} {value or '(empty)'}")
    for column in declared.routing.never:
        person = item.meta.get(column, "").strip()
        if person and any(a.name == person for a in pool):
            pool = [a for a in pool if a.name != person]
            steps.append(f"{len(pool)} once the {column} {person} is left out")
        elif person:  # the author validates nothing here: leaving them out takes no one away
            steps.append(f"{len(pool)} (the {column} {person} is not one of them)")
    return [a.name for a in pool], steps


def draw(
    declared: Round,
    items: Iterable[Item],
    seed: int | None = None,
    *,
    keep: Assignment | None = None,
    done: Callable[[str, str], bool] = lambda item_id, name: False,
    ready: Callable[[str], bool] = lambda item_id: True,
    held: Assignment | None = None,
) -> Draw:
    """Assign ``validators_per_item`` validators to every item (see the module docstring).

    With ``keep`` (a top-up) the pairs already assigned stay when the validator still may take the item or
    has done it (``done(item_id, name)``); only the missing places are filled, so the items of someone who
    left (``active = false``) and had not done them go to others. An item not ``ready`` for validation gets no
    new places: of the pairs ``held`` (the assignment in force) it keeps, in a fresh draw too, those whose
    validator has done it, so an item already validated keeps its validators. An item with a panel size of its
    own in ``held`` (``assign --item ID --panel N``) takes that many validators instead of the round's.
    """
    seed = declared.seed if seed is None else seed
    panels = held.panels if held is not None else {}

    by_id = {item.id: item for item in items}
    wanted = {item_id: panels.get(item_id, declared.validators_per_item) for item_id in by_id}
    waiting = {item_id for item_id in by_id if not ready(item_id)}
    order = sorted(by_id, key=lambda item_id: _rank(seed, item_id))
    chosen: dict[str, list[str]] = {}
    pools: dict[str, tuple[list[str], list[str]]] = {}
    kept = released = 0
    for item_id in order:
        pools[item_id] = eligible(declared, by_id[item_id])
        source = held if item_id in waiting and keep is None else keep
        before = source.items.get(item_id, ()) if source is not None else ()
        finished = [n for n in before if done(item_id, n)]
        still = [n for n in before if n not in finished and n in pools[item_id][0] and item_id not in waiting]
        stays = finished + still[: max(0, wanted[item_id] - len(finished))]
        chosen[item_id] = stays
        kept += len(stays)
        released += len(before) - len(stays)
    load = Counter(name for names in chosen.values() for name in names)
    unstaffed = []
    for item_id in (i for i in order if i not in waiting):
        names, steps = pools[item_id]
        missing = wanted[item_id] - len(chosen[item_id])
        free = [n for n in names if n not in chosen[item_id]]
        if declared.routing.balance:
            free.sort(key=lambda n: (load[n], _rank(seed, item_id, n)))
        else:
            free.sort(key=lambda n: _rank(seed, item_id, n))
        taken = free[: max(missing, 0)]
        chosen[item_id] += taken
        load.update(taken)
        if len(chosen[item_id]) < wanted[item_id]:
            unstaffed.append(_unstaffed(declared, by_id[item_id], wanted[item_id], len(chosen[item_id]), steps))
    assignment = Assignment(
        {item_id: tuple(sorted(chosen[item_id])) for item_id in sorted(chosen) if chosen[item_id]}, dict(panels)
    )
    unstaffed.sort(key=lambda u: u.item_id)
    return Draw(assignment, tuple(unstaffed), seed, kept, released, len(waiting))


def _unstaffed(declared: Round, item: Item, needed: int, found: int, steps: list[str]) -> Unstaffed:
    wanted = " ".join(f"{c} {item.meta.get(c, '') or '(empty)'}" for c in declared.routing.same)
    hint = f"add validators{' with ' + wanted if wanted else ''} to the round, or lower validators_per_item"
    return Unstaffed(item.id, needed, found, tuple(steps), hint)


def _rank(seed: int, *parts: str) -> bytes:
    """A position that depends only on the seed and the names: the same on every machine and Python."""
    return hashlib.sha256("\x1f".join((str(seed), *parts)).encode("utf-8")).digest()
