"""JSON as every reader reads it: what the program takes in and writes out holds no NaN and no repeated key.

Python's ``json`` module reads ``NaN`` and ``Infinity`` and writes them back, though they are not JSON (RFC
8259) and most other readers refuse them; it also reads an object that repeats a key, keeping the last value,
while the file keeps both (and the verbatim copy of an untouched row writes both back). So every JSON line the
program reads from a file goes through ``loads``, which refuses both with a reason that names them, and every
JSON value written to a file goes through ``dumps``, which writes null for a number JSON cannot hold and says
how many it wrote. The decoder is built once: one made per call (``json.loads`` with hooks) would cost half
again the time of the read.
"""

from __future__ import annotations

import json
import math
from typing import Any


class JsonRuleError(ValueError):
    """A JSON text the json module would read but JSON does not allow: a repeated key, NaN or Infinity."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JsonRuleError(f"repeats the key {json.dumps(key, ensure_ascii=False)[:80]}")
            seen.add(key)
    return found


def _no_constant(name: str) -> object:
    raise JsonRuleError(f"holds {name}, which is not JSON (write null, or the number as text)")


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant)


def loads(text: str) -> Any:
    """``text`` read as JSON; ``JsonRuleError`` for a repeated key, NaN or Infinity, and what ``json.loads``
    raises otherwise (``JSONDecodeError``, ``RecursionError``, ``ValueError`` for a number of 4,300+ digits)."""
    return _DECODER.decode(text)


def finite(value: object) -> tuple[object, int]:
    """``value`` with every float that is NaN or infinite, in lists and objects too, made None; and how many."""
    if isinstance(value, float):
        return (value, 0) if math.isfinite(value) else (None, 1)
    if isinstance(value, dict):
        mapped = {key: finite(inner) for key, inner in value.items()}
        return {key: inner for key, (inner, _) in mapped.items()}, sum(n for _, n in mapped.values())
    if isinstance(value, (list, tuple)):
        pairs = [finite(inner) for inner in value]
        return [inner for inner, _ in pairs], sum(n for _, n in pairs)
    return value, 0


def dumps(value: object, **options: Any) -> tuple[str, int]:
    """``value`` as JSON text (``json.dumps`` with ``options``), a NaN or infinite number written as null; and
    how many were. The usual value, with none, is written once."""
    try:
        return json.dumps(value, allow_nan=False, **options), 0
    except ValueError:
        mapped, count = finite(value)
        if not count:
            raise
        return json.dumps(mapped, allow_nan=False, **options), count


def non_finite(value: object) -> int:
    """How many NaN or infinite numbers ``value`` holds (in lists and objects too): what ``dumps`` writes as null."""
    return finite(value)[1] if isinstance(value, (float, dict, list, tuple)) else 0
