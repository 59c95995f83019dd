"""What the model makes of the current item: every solution's log-likelihood, its choice, the margin, the checks.

Shown under the votes once scoring was used on the dataset. Its height is
fixed per dataset (a line per solution column plus two), so moving between
items repaints it without a relayout. In shuffled validation its lines and
numbers follow the order the annotator sees (``ScoreView.order``).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from piqa_tui.core.scoring.results import ItemScore


@dataclass(frozen=True)
class ScoreView:
    """Everything the panel draws for one item (built by the screen, which knows blind mode and the votes)."""

    rows: int  # solution lines: the dataset's most solutions
    score: ItemScore | None = None
    baseline: ItemScore | None = None  # the solution-only score
    state: str = ""  # "scoring…", "loading the model…", an error, or "" for the score or the hint
    error: bool = False
    gold_hidden: bool = False
    votes: tuple[int, ...] = ()  # the votes the user may see, as solution indices
    decided: int | None = None  # the votes' decision, when there is one
    template: str = ""
    order: tuple[int, ...] | None = None  # the solutions' order shown (shown place → file index); None: file order

    def pick(self, index: int) -> str:
        """Solution ``index`` of the file as the annotator numbers it: its place on their screen, from 1."""
        if self.order is not None and index in self.order:
            return str(self.order.index(index) + 1)
        return str(index + 1)

    def row(self, place: int) -> int:
        """The file index of the solution on line ``place``."""
        return self.order[place] if self.order is not None and place < len(self.order) else place


class ScorePanel(Static):
    """Lines ``model``, one per solution, and ``check``."""

    DEFAULT_CSS = """
    ScorePanel {
        height: auto;
        padding: 0 2;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;
    }
    """

    _rows = -1

    def show_view(self, view: ScoreView) -> None:
        relayout = self._rows != view.rows
        if relayout:
            self._rows = view.rows
            self.styles.height = view.rows + 2
        self.update(self._render_view(view), layout=relayout)

    def _render_view(self, view: ScoreView) -> Text:
        text = Text(end="")
        text.append("model   ", "bold")
        score = view.score
        if score is None:
            if view.state:
                text.append(view.state, "red" if view.error else "italic")
            else:
                text.append("not scored · m scores this item, M every item, R shows the results", "dim")
            text.append("\n" * view.rows)
            if view.baseline is not None:
                text.append("\ncheck   ", "bold")
                self._append_checks(text, view, None)
            else:
                text.append("\n")
            return text

        if view.gold_hidden:  # blind mode: the model's choice would point at the answer as much as gold does
            return self._hidden_choice(text, view)
        acc, norm = score.prediction, score.prediction_norm
        text.append(f"prefers {view.pick(acc)}", "bold")
        if norm != acc:
            text.append(" · per char ")
            text.append(view.pick(norm), "bold")
        text.append(f" · margin {score.margin:.2f}")
        if view.state:
            text.append(f" · {view.state}", "red" if view.error else "italic")
        elif view.template:
            text.append(f"  ({view.template})", "dim")
        for place in range(view.rows):
            text.append("\n")
            i = view.row(place)
            if i >= len(score.logliks):
                continue
            text.append(f"  {place + 1}  ", "bold")
            text.append(f"{score.logliks[i]:8.2f}")
            text.append(f" ({score.n_tokens[i]} tok)  ", "dim")
            text.append(f"{score.normalised[i]:.3f}/char")
            if i == acc:
                text.append("  ◀ acc", "bold")
            if i == norm:
                text.append("  ◀ norm", "bold")
        text.append("\n")
        text.append("check   ", "bold")
        self._append_checks(text, view, score)
        return text

    @staticmethod
    def _hidden_choice(text: Text, view: ScoreView) -> Text:
        """A scored item the annotator has not voted on: the same lines, without the model's choice."""
        text.append("scored · its choice stays hidden until you vote on this item (blind mode)", "dim")
        if view.state:
            text.append(f" · {view.state}", "red" if view.error else "italic")
        text.append("\n" * view.rows)
        text.append("\ncheck   ", "bold")
        text.append("gold and the model's choice hidden until you vote", "dim")
        return text

    @staticmethod
    def _append_checks(text: Text, view: ScoreView, score: ItemScore | None) -> None:
        """Gold and votes against the model's choice, then the solution-only baseline."""
        parts: list[tuple[str, str]] = []
        if score is not None:
            if view.gold_hidden:
                parts.append(("gold hidden until you vote", "dim"))
            elif score.label is None:
                parts.append(("no gold label", "dim"))
            elif score.correct:
                parts.append((f"✓ agrees with gold ({view.pick(score.label)})", "green"))
            else:
                parts.append((f"✗ disagrees with gold ({view.pick(score.label)})", "bold red"))
            if not view.gold_hidden:
                if view.votes:
                    agree = sum(v == score.prediction for v in view.votes)
                    style = "green" if agree * 2 > len(view.votes) else "yellow"
                    what = f"{agree} of {len(view.votes)} votes agree"
                    if view.decided is not None:
                        what += f" (decided {view.pick(view.decided)})"
                    parts.append((what, style))
                else:
                    parts.append(("no votes yet", "dim"))
        baseline = view.baseline
        if baseline is not None and not view.gold_hidden:
            shortcut = not view.gold_hidden and baseline.correct is True
            parts.append(
                (
                    f"no prompt: picks {view.pick(baseline.prediction)}" + (" = gold: a shortcut" if shortcut else ""),
                    "yellow" if shortcut else "",
                )
            )
        for n, (part, style) in enumerate(parts):
            if n:
                text.append(" · ", "dim")
            text.append(part, style)
