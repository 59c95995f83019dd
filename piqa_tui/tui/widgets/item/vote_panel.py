"""The votes on the current item: yours, the others' and the decision, or what blind mode hides."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from piqa_tui.tui.state.ballots import VoteSummary


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

    def show_summary(self, summary: VoteSummary) -> None:
        self.set_class(summary.hidden, "-hidden")
        text = Text(end="")
        text.append("votes   ", "bold")
        text.append(summary.votes, "bold" if summary.mine is not None else "")
        text.append("\n")
        text.append("status  ", "bold")
        text.append(summary.status)
        self.update(text, layout=False)
