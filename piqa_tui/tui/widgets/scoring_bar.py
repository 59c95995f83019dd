"""``scoring 120/1,838 · 2.6 items/s · ETA 11 min · esc cancels`` and a progress bar, while a run goes on."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from piqa_tui.core.scoring.engine import RunProgress


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def progress_text(what: str, progress: RunProgress, cancelling: bool = False) -> str:
    parts = [f"{what} {progress.done:,}/{progress.total:,}"]
    if progress.stage:
        parts.append(progress.stage + "…")
    elif progress.rate is not None:
        parts.append(f"{progress.rate:.2f} items/s")
        if progress.eta is not None and progress.done < progress.total:
            parts.append(f"ETA {duration(progress.eta)}")
    parts.append("cancelling after this chunk…" if cancelling else "esc cancels")
    return " · ".join(parts)


class ScoringBar(Horizontal):
    """A line under the item list and the item (above the footer); shown only while scoring runs."""

    DEFAULT_CSS = """
    ScoringBar {
        height: 1;
        display: none;
        padding: 0 1;
        background: $boost;
    }
    ScoringBar.-running {
        display: block;
    }
    ScoringBar > Static {
        width: 1fr;
        color: $accent;
    }
    ScoringBar > ProgressBar {
        width: auto;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="scoring-text", markup=False)
        yield ProgressBar(show_eta=False, id="scoring-progress")

    def start(self, text: str) -> None:
        self.add_class("-running")
        self.query_one(ProgressBar).update(total=None, progress=0)
        self.query_one("#scoring-text", Static).update(text)

    def show_progress(self, what: str, progress: RunProgress, cancelling: bool = False) -> None:
        self.query_one(ProgressBar).update(total=max(1, progress.total), progress=progress.done)
        self.query_one("#scoring-text", Static).update(progress_text(what, progress, cancelling))

    def stop(self) -> None:
        self.remove_class("-running")
