"""Progress figures as a person reads them, the same in ``piqa-tui progress`` and the TUI's progress screen."""

from __future__ import annotations


def figure(value: float | None, digits: int = 1) -> str:
    """A pace figure (— when it is unknown: fewer than two votes close together)."""
    return "—" if value is None else f"{value:.{digits}f}"


def duration(seconds: float | None) -> str:
    """A time to finish as a person reads it: 0 s, 45 s, 12 min, 3 h 05 min (— when the pace is unknown)."""
    if seconds is None:
        return "—"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
