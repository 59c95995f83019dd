"""How a value the maths may leave undefined is written: never as 0 or 1, as "undefined"."""

from __future__ import annotations

from collections.abc import Mapping


def format_value(value: float | None, unit: str = "") -> str:
    """3 decimals for κ, α and accuracies, 1 for percentages (``unit="%"``), 'undefined' for None."""
    if value is None:
        return "undefined"
    return f"{value:.1f}%" if unit == "%" else f"{value:.3f}"


def format_figure(figures: Mapping[str, object], key: str) -> str:
    """``format_value`` of one figure of a scoring summary (``summarise``: a number, or None where undefined)."""
    value = figures[key]
    return format_value(value if isinstance(value, int | float) else None)
