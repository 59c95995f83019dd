"""How a value the maths may leave undefined is written: never as 0 or 1, as "undefined"."""

from __future__ import annotations


def format_value(value: float | None, unit: str = "") -> str:
    """3 decimals for κ, α and accuracies, 1 for percentages (``unit="%"``), 'undefined' for None."""
    if value is None:
        return "undefined"
    return f"{value:.1f}%" if unit == "%" else f"{value:.3f}"
