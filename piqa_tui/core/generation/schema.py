"""Structured output checked on arrival: the text a model wrote against the JSON schema it was asked to fit.

Both backends constrain the output (a llama.cpp grammar, a server's ``response_format``), yet a server may ignore
the constraint, a stream may be cut, a grammar may allow what the schema does not (lengths, formats): so every
answer is parsed as strict JSON (no repeated keys, no NaN) and validated with ``jsonschema`` before anything is
recorded. A failure is one line naming what does not fit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from piqa_tui.core import strict_json
from piqa_tui.core.errors import ModelError
from piqa_tui.core.strict_json import JsonRuleError

_SHOWN = 60  # characters of the output quoted in a message


def check_schema(schema: Mapping[str, object]) -> None:
    """``ModelError`` (one line) when ``schema`` is not a valid JSON schema: refused before any model runs."""
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ModelError(f"the JSON schema is not valid: {exc.message}") from None


def fitted(text: str, schema: Mapping[str, object]) -> tuple[object | None, str | None]:
    """(the parsed JSON, None) when ``text`` is JSON that fits ``schema``; (None, one line saying why) else."""
    import jsonschema

    quoted = text.strip()
    quoted = quoted if len(quoted) <= _SHOWN else quoted[:_SHOWN] + "…"
    try:
        data = strict_json.loads(text)
    except JsonRuleError as exc:
        return None, f"the output {exc}: {quoted!r}"
    except (ValueError, RecursionError):
        return None, f"the output is not complete JSON: {quoted!r}"
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top"
        return None, f"the output does not fit the schema at {where}: {error.message[: _SHOWN * 2]}"
    return data, None


def schema_text(schema: Mapping[str, object]) -> str:
    """The schema as JSON text, as grammars and servers take it."""
    return json.dumps(schema, ensure_ascii=False, allow_nan=False)
