"""The checks a setting's value shares wherever it is declared: the config file (``settings/config.py``) and the
tables a registered extension reads from it (a scoring backend's ``[server]``), so every bad value is one line
of the same form, ``NAME = VALUE is not valid; it should be …``; the settings layer adds which file said it.
"""

from __future__ import annotations

import re

from piqa_tui.core.errors import PiqaError

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


class SettingError(PiqaError):
    """A configuration value that cannot be used (without the file: the settings layer adds it)."""


def invalid_setting(name: str, value: object, should: str) -> SettingError:
    """The one line a bad setting gives (a table or a list is named by kind, not printed)."""
    shown = (
        repr(value) if not isinstance(value, (dict, list)) else f"a {'table' if isinstance(value, dict) else 'list'}"
    )
    return SettingError(f"{name} = {shown[:60]} is not valid; it should be {should}")


def setting_text(name: str, value: object) -> str:
    """A non-empty string without control characters (such as ESC)."""
    if not isinstance(value, str) or not value.strip():
        raise invalid_setting(name, value, "a non-empty quoted string")
    if _CONTROL.search(value):
        raise invalid_setting(name, value, "text without control characters (such as ESC)")
    return value


def setting_whole(name: str, value: object, minimum: int) -> int:
    """A whole number (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise invalid_setting(name, value, f"a whole number of at least {minimum}")
    return value
