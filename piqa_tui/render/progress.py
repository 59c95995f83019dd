"""Progress figures as a person reads them, the same in ``piqa-tui progress`` and the TUI's progress screen."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from piqa_tui.core.dedup.semantic import EmbeddingProgress


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


def embedding_text(progress: EmbeddingProgress) -> str:
    """``embedding 12,000/100,000 texts · 24 texts/s · ETA 61 min · 40,000 were cached``: a first scan's
    embedding phase, the same on the CLI's progress line and the duplicates screen's strip."""
    parts = [f"embedding {progress.done:,}/{progress.total:,} texts"]
    if progress.rate is not None:
        parts.append(f"{progress.rate:.1f} texts/s")
        parts.append(f"ETA {duration(progress.eta)}")
    if progress.cached:
        parts.append(f"{progress.cached:,} were cached")
    return " · ".join(parts)
