"""Model scoring on the main screen (issue 6), as a mixin of ``MainScreen``.

Keys (``keymap.SCORING_ACTIONS``): m scores the current item; M scores every
item in the background (a template, or the solution-only baseline), with a
progress bar, items/s and an ETA; escape cancels the run (what finished stays
cached, so the next M resumes); R opens the results. The model work runs in
thread workers through the session's ``ScoringEngine``; results come back as
messages and land in ``ModelScores``, which the panel, the list's ✗ marks and
the model queues read.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from textual import work
from textual.actions import SkipAction
from textual.message import Message
from textual.worker import get_current_worker

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.scoring.engine import (
    RunProgress,
    RunResult,
    workspace_has_scores,
)
from piqa_tui.core.scoring.results import ItemScore
from piqa_tui.core.scoring.templates import (
    BUILTIN_TEMPLATES,
    LETTERS,
    Template,
    get_template,
)
from piqa_tui.core.votes.decisions import choices
from piqa_tui.render.values import format_value
from piqa_tui.tui.model_scores import ModelScores, engine_for, refresh_marks, scores_for
from piqa_tui.tui.screens.dialogs import ChoiceDialog
from piqa_tui.tui.widgets.score_panel import ScorePanel, ScoreView
from piqa_tui.tui.widgets.scoring_bar import ScoringBar

if TYPE_CHECKING:
    from piqa_tui.tui.screens.main import MainScreen


class ItemScoring(Message):
    """A single-item request reached a stage worth saying (``loading the model…``)."""

    def __init__(self, item_id: str, state: str) -> None:
        super().__init__()
        self.item_id, self.state = item_id, state


class ItemScored(Message):
    """One item's score (or why there is none)."""

    def __init__(self, item: Item, template: Template, score: ItemScore | None, identity: str = "",
                 model: str = "", error: str = "") -> None:
        super().__init__()
        self.item, self.template, self.score = item, template, score
        self.identity, self.model, self.error = identity, model, error


class ScoringProgress(Message):
    def __init__(self, run: int, progress: RunProgress, identity: str, model: str) -> None:
        super().__init__()
        self.run, self.progress, self.identity, self.model = run, progress, identity, model


class ScoringEnded(Message):
    """A whole-set run finished, was cancelled (``result.cancelled``) or failed (``error``)."""

    def __init__(self, run: int, result: RunResult | None = None, error: str = "") -> None:
        super().__init__()
        self.run, self.result, self.error = run, result, error


class ScoresLoaded(Message):
    """Scores an earlier session left in the workspace, for the current template and model."""

    def __init__(self, items: list[Item], template: Template, scores: list[ItemScore],
                 baseline: list[ItemScore], identity: str, model: str) -> None:
        super().__init__()
        self.items, self.template, self.scores, self.baseline = items, template, scores, baseline
        self.identity, self.model = identity, model


def available_templates() -> dict[str, Template]:
    """The built-in templates and the config file's own."""
    from piqa_tui.settings.config import load_config

    try:
        user = load_config().templates
    except PiqaError:
        user = {}
    found = dict(BUILTIN_TEMPLATES)
    for name in user:
        try:
            found[name] = get_template(name, user)
        except PiqaError:
            continue
    return found


class ScoringActions:
    """Actions, messages and drawing for model scoring; ``self`` is the MainScreen."""

    _score_states: dict[str, tuple[str, bool]]  # item id -> (what the panel says meanwhile, is an error)
    _scoring_run = 0  # numbers the runs, so a cancelled one's late messages are ignored
    _scoring_cancel: threading.Event | None = None
    _scoring_what = ""
    _scoring_items: list[Item] = []  # the items as the running run read them
    _score_panel: ScorePanel | None = None
    last_scoring_run: RunResult | None = None  # the last whole-set run's outcome

    @property
    def model_scores(self: "MainScreen") -> ModelScores:
        return scores_for(self.project)

    @property
    def scoring_running(self: "MainScreen") -> bool:
        return self._scoring_cancel is not None

    def _states(self: "MainScreen") -> dict[str, tuple[str, bool]]:
        if "_score_states" not in self.__dict__:
            self._score_states = {}
        return self._score_states

    # ---------------------------------------------------------------- startup

    def load_cached_scores(self: "MainScreen") -> None:
        """Show the scores an earlier session computed (only when the workspace has some)."""
        self._load_cached(list(self.project.items), self.model_scores.template)

    @work(thread=True, exclusive=True, group="scoring-cache", description="_load_cached")
    def _load_cached(self: "MainScreen", items: list[Item], default: Template) -> None:
        if not workspace_has_scores(self.project):
            return
        try:
            engine = engine_for(self.project)
            # The template with the most cached scores (the default on a tie) is the one last used.
            found = [(engine.cached(items, t), t) for t in available_templates().values()]
            scores, template = max(found, key=lambda pair: (len(pair[0]), pair[1].key == default.key))
            template = template if scores else default
            baseline = engine.cached(items, template, solution_only=True)
            identity = engine.identity()
        except PiqaError:
            return  # no model now: nothing to show, and nothing to say until the user asks to score
        if scores or baseline:
            self.post_message(ScoresLoaded(items, template, scores, baseline, identity, engine.choice.name))

    def on_scores_loaded(self: "MainScreen", message: ScoresLoaded) -> None:
        model = self.model_scores
        if model.identity and model.identity != message.identity:
            return
        if model.generation and message.template.key != model.template.key:
            return  # the user scored with another template meanwhile: theirs wins
        model.use(message.template, message.identity, message.model)
        model.put(message.items, message.scores)
        model.put(message.items, message.baseline, baseline=True)
        model.active = True
        self._scores_changed()

    # ------------------------------------------------------------ one item

    def action_score_item(self: "MainScreen") -> None:
        item = self.current
        if item is None:
            return
        model = self.model_scores
        model.active = True
        self._states()[item.id] = ("scoring…", False)
        self.show_model_score(item)
        self._score_item(item, model.template)

    @work(thread=True, group="score-item", description="_score_item")
    def _score_item(self: "MainScreen", item: Item, template: Template) -> None:
        try:
            engine = engine_for(self.project)
            if not engine.loaded:
                self.post_message(ItemScoring(item.id, f"loading {engine.choice.name}…"))
            score = engine.score_one(item, template)
            self.post_message(ItemScored(item, template, score, engine.identity(), engine.choice.name))
        except PiqaError as exc:
            self.post_message(ItemScored(item, template, None, error=str(exc)))

    def on_item_scoring(self: "MainScreen", message: ItemScoring) -> None:
        self._states()[message.item_id] = (message.state, False)
        self._redraw_if_current(message.item_id)

    def on_item_scored(self: "MainScreen", message: ItemScored) -> None:
        states = self._states()
        if message.score is None:
            states[message.item.id] = (message.error, True)
            self._redraw_if_current(message.item.id)
            self.notify(message.error, severity="error", timeout=10)
            return
        states.pop(message.item.id, None)
        model = self.model_scores
        if message.template.key != model.template.key:
            return  # the user switched template meanwhile
        model.use(message.template, message.identity, message.model)
        model.put([message.item], [message.score])
        self._scores_changed([message.item.id])

    # ------------------------------------------------------------ every item

    def action_score_all(self: "MainScreen") -> None:
        if self.scoring_running:
            self.notify("the model is scoring already: esc cancels that run", timeout=3)
            return
        current = self.model_scores.template
        templates = available_templates()
        rows: list[tuple[str | None, str, str]] = [(None, "Score every item with a template", "")]
        for name in [current.name, *(n for n in templates if n != current.name)]:
            template = templates.get(name, current)
            shown = (template.context + template.continuation).replace("\n", "⏎")
            rows.append((f"run:{name}", name + (" (now)" if name == current.name else ""), shown))
        rows.append((None, "Baseline", ""))
        rows.append(("baseline", "solution-only", f"{current.name} without the prompt: answerable without reading it?"))

        def chosen(key: str | None) -> None:
            if key == "baseline":
                self.start_scoring_run(current, solution_only=True)
            elif key and key.startswith("run:"):
                self.start_scoring_run(templates.get(key[4:], current))

        self.app.push_screen(
            ChoiceDialog("Score all items", "Scores are cached in the workspace: a cancelled run resumes, "
                         "and after edits only the changed items are scored again.", rows),
            chosen,
        )

    def start_scoring_run(self: "MainScreen", template: Template, solution_only: bool = False) -> None:
        """Score every item in the background (the cached ones cost nothing)."""
        if self.scoring_running:
            return
        model = self.model_scores
        if template.key != model.template.key:
            model.use(template, model.identity, model.model)  # the panel and queues follow the new template
            self._scores_changed()
        model.active = True
        self._scoring_run += 1
        self._scoring_cancel = threading.Event()
        self._scoring_what = "solution-only baseline" if solution_only else f"scoring ({template.name})"
        self._scoring_items = list(self.project.items)  # a snapshot: the worker never reads the live list
        self.query_one(ScoringBar).start(f"{self._scoring_what}: starting · esc cancels")
        self._score_all(self._scoring_run, self._scoring_items, template, solution_only, self._scoring_cancel)
        self.show_current()

    @work(thread=True, exclusive=True, group="score-all", description="_score_all")
    def _score_all(self: "MainScreen", run: int, items: list[Item], template: Template, solution_only: bool,
                   cancel: threading.Event) -> None:
        worker = get_current_worker()
        try:
            engine = engine_for(self.project)
            identity, name = engine.identity(), engine.choice.name

            def progress(report: RunProgress) -> None:
                if worker.is_cancelled:
                    cancel.set()
                self.post_message(ScoringProgress(run, report, identity, name))

            result = engine.run(items, template, solution_only=solution_only, progress=progress, cancel=cancel)
        except PiqaError as exc:
            self.post_message(ScoringEnded(run, error=str(exc)))
            return
        self.post_message(ScoringEnded(run, result))

    def on_scoring_progress(self: "MainScreen", message: ScoringProgress) -> None:
        if message.run != self._scoring_run:
            return
        model = self.model_scores
        solution_only = self._scoring_what.startswith("solution-only")
        model.use(model.template, message.identity, message.model)
        # Matched to the items as scored: an item edited meanwhile shows no (stale) score.
        model.put(self._scoring_items, message.progress.scores, baseline=solution_only)
        by_id = {s.item_id for s in message.progress.scores}
        cancelling = self._scoring_cancel is not None and self._scoring_cancel.is_set()
        self.query_one(ScoringBar).show_progress(self._scoring_what, message.progress, cancelling)
        self._scores_changed(by_id, refilter=False)

    def on_scoring_ended(self: "MainScreen", message: ScoringEnded) -> None:
        if message.run != self._scoring_run:
            return
        self._scoring_cancel = None
        self.query_one(ScoringBar).stop()
        what = self._scoring_what
        if message.result is None:
            self.notify(f"scoring stopped: {message.error}", severity="error", timeout=12)
            self._scores_changed()
            return
        result = self.last_scoring_run = message.result
        done, total = len(result.scores), len(result.items)
        speed = f" at {result.rate:.2f} items/s" if result.rate else ""
        if result.cancelled:
            text = f"{what} cancelled at {done:,}/{total:,} ({result.computed:,} computed{speed}); M resumes"
        else:
            shown = self.ballots.visible_items(self.project.items)  # blind mode: only the items voted on
            summary = scores_summary(self.model_scores, shown, baseline=what.startswith("solution-only"))
            if len(shown) < len(self.project.items):
                summary = f"{summary} on the items you voted on (blind mode)" if shown else "accuracy hidden until you vote (blind mode)"
            text = f"{what}: {total:,} items, {summary} ({result.computed:,} computed{speed}); R shows the results"
        if result.skipped:
            text += f"; {len(result.skipped)} item(s) skipped (scoring needs 2 to {len(LETTERS)} solutions)"
        self.notify(text, timeout=8)
        self._scores_changed()

    def action_cancel_scoring(self: "MainScreen") -> None:
        cancel = self._scoring_cancel
        if cancel is None or self.editing is not None:
            raise SkipAction()  # escape then clears the filters, as it does without a run
        cancel.set()
        self.query_one(ScoringBar).query_one("#scoring-text").update(f"{self._scoring_what}: cancelling after this chunk…")

    def on_unmount(self: "MainScreen") -> None:
        if self._scoring_cancel is not None:
            self._scoring_cancel.set()

    # ------------------------------------------------------------- results

    def action_model_results(self: "MainScreen") -> None:
        from piqa_tui.tui.screens.model_results import ModelResultsScreen

        self.app.push_screen(ModelResultsScreen(self.session), lambda _: self.show_current())

    # ------------------------------------------------------------- drawing

    def _scores_changed(self: "MainScreen", item_ids: set[str] | list[str] | None = None, refilter: bool = True) -> None:
        refresh_marks(self.project, self.session.marks.model_disagrees, item_ids)
        self.item_list.invalidate()
        if refilter:
            self.refilter()
        self.show_current()
        screen = self.app.screen
        if screen is not self and hasattr(screen, "scores_changed"):
            screen.scores_changed()

    def _redraw_if_current(self: "MainScreen", item_id: str) -> None:
        item = self.current
        if item is not None and item.id == item_id:
            self.show_model_score(item)

    def show_model_score(self: "MainScreen", item: Item) -> None:
        """Fill the score panel for ``item`` (hidden until scoring was used on this dataset)."""
        panel = self._score_panel
        if panel is None:
            found = self.item_view.query(ScorePanel)
            if not found:
                return
            panel = self._score_panel = found.first()
        model = self.model_scores
        if not model.active:
            if panel.display:
                panel.display = False
            return
        if not panel.display:
            panel.display = True
        state, error = self._states().get(item.id, ("", False))
        visible = self.ballots.visible(item.id)
        decision = self.ballots.decision(item.id) if visible else None
        panel.show_view(ScoreView(
            rows=max(len(self.project.dataset.layout.solutions), len(item.solutions)),
            score=model.get(item),
            baseline=model.baseline(item),
            state=state,
            error=error,
            gold_hidden=self.app.gold_hidden(item) if hasattr(self.app, "gold_hidden") else False,
            votes=tuple(choices(self.project, item.id).values()) if visible else (),
            decided=decision.label if decision is not None else None,
            template=model.template.name,
        ))


def scores_summary(model: ModelScores, items, baseline: bool = False) -> str:
    """``acc 0.660 · acc_norm 0.675`` over the scored items with a label."""
    summary = model.summary(items, baseline=baseline)
    if not summary["n"]:
        return "no labelled items"
    return f"acc {format_value(summary['acc'])} · acc_norm {format_value(summary['acc_norm'])} on {summary['n']:,}"
