"""The votes on the current item: yours, the others' and the decision, or what blind mode hides."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from piqa_tui.core.text.bidi import rich_text
from piqa_tui.core.text.direction import Direction
from piqa_tui.render.safe_text import shown
from piqa_tui.tui.state.ballots import VoteSummary
from piqa_tui.tui.widgets.drawing import app_bidi_mode


class VotePanel(Static):
    """Two lines under the gold label: ``votes`` and ``status``; fixed height, so moving never relayouts."""

    DEFAULT_CSS = """
    VotePanel {
        height: 2;
        padding: 0 2;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    VotePanel.-hidden {
        color: $text-disabled;
    }
    """

    summary: VoteSummary | None = None  # the one shown, laid out again when the panel's width changes

    def show_summary(self, summary: VoteSummary) -> None:
        self.summary = summary
        self.set_class(summary.hidden, "-hidden")
        text = Text(end="")
        text.append("votes   ", "bold")
        text.append(shown(summary.votes), "bold" if summary.mine is not None else "")  # names from the data
        text.append("\n")
        text.append("status  ", "bold")
        # The status quotes data (an adjudication's reason, in Arabic): laid out by the bidi adapter on the
        # app's left-to-right line, cut in reading order to the panel's width (before the first layout, whole).
        status = summary.status
        room = self.content_region.width - len("status  ")
        width = room if room > 0 else 2 * len(status) + 1
        text.append_text(rich_text(status, width, app_bidi_mode(self), max_lines=1, direction=Direction.LTR))
        self.update(text, layout=False)

    def on_resize(self) -> None:
        """Cut the status again at the new width."""
        if self.summary is not None:
            self.show_summary(self.summary)
