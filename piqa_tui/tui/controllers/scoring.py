"""Model scoring on the main screen, as a plain object the screen owns.

Keys (``keymap.SCORING_ACTIONS``): m scores the current item; M scores every
item in the background (a template, or the solution-only baseline), with a
progress strip, items/s and an ETA; escape cancels the run (what finished
stays cached, so the next M resumes); R opens the results. The model work
runs off the UI thread (``ScoringHost.launch``) through the session's
``ScoringEngine``; results come back on the UI thread (``ScoringHost.deliver``)
and land in the session's ``ModelScores``, which the panel, the list's ✗ marks
and the model queues read.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Protocol

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.scoring.results import ItemScore
from piqa_tui.core.scoring.stored import StoredRun, runs_stamp
from piqa_tui.core.scoring.templates import LETTERS, Template
from piqa_tui.render.values import format_figure
from piqa_tui.tui.controllers.background import BackgroundRuns, Run
from piqa_tui.tui.controllers.host import Background, Host, Strip
from piqa_tui.tui.dialogs.prompts import ChoiceDialog
from piqa_tui.tui.state.model_scores import ModelScores
from piqa_tui.tui.state.session import Session
from piqa_tui.tui.widgets.progress_strip import duration

if TYPE_CHECKING:  # the engine (and the model process behind it) is imported by the worker that first reads scores
    from piqa_tui.core.scoring.engine import RunProgress, RunResult


class ScoringHost(Host, Background, Protocol):
    @property
    def strip(self) -> Strip: ...

    def scores_changed(self, refilter: bool) -> None:
        """Redraw what shows scores: the list's marks, the queues (``refilter``), the item, other screens."""
        ...

    def redraw_score(self, item_id: str) -> None:
        """Redraw the score panel if ``item_id`` is the current item."""
        ...

    def show_current(self) -> None: ...


def available_templates() -> dict[str, Template]:
    """The shipped templates, the user's template files and the config file's own.

    A broken user file or config leaves the shipped templates (the CLI names the bad file).
    """
    from piqa_tui.core.scoring.templates import shipped_templates
    from piqa_tui.settings.template_catalog import available_templates as catalog

    try:
        return catalog()
    except PiqaError:
        return dict(shipped_templates())


def progress_text(what: str, progress: RunProgress, cancelling: bool = False) -> str:
    """``scoring 120/1,838 · 2.6 items/s · ETA 11 min · esc cancels``."""
    parts = [f"{what} {progress.done:,}/{progress.total:,}"]
    if progress.stage:
        parts.append(progress.stage + "…")
    elif progress.rate is not None:
        parts.append(f"{progress.rate:.2f} items/s")
        if progress.eta is not None and progress.done < progress.total:
            parts.append(f"ETA {duration(progress.eta)}")
    parts.append("cancelling after this chunk…" if cancelling else "esc cancels")
    return " · ".join(parts)


def scores_summary(model: ModelScores, items: list[Item], baseline: bool = False) -> str:
    """``acc 0.660 · acc_norm 0.675`` over the scored items with a label."""
    summary = model.summary(items, baseline=baseline)
    if not summary["n"]:
        return "no labelled items"
    return f"acc {format_figure(summary, 'acc')} · acc_norm {format_figure(summary, 'acc_norm')} on {summary['n']:,}"


STORED_WATCH_SECONDS = (
    30.0  # how often the poll looks for runs another process stored (a re-read costs a pass over the cache)
)


class ScoringController:
    """Scores the current item or the whole set, and keeps what the panel says meanwhile."""

    def __init__(self, session: Session, host: ScoringHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host
        self.states: dict[str, tuple[str, bool]] = {}  # item id -> (what the panel says meanwhile, is an error)
        self.runs = BackgroundRuns(partial(host.launch, group="score-all", exclusive=True), host.deliver)
        self.what = ""  # the running run, as the strip and the notes name it
        self.solution_only = False  # the running run scores the baseline
        self.items: list[Item] = []  # the items as the running run read them
        self.last_run: RunResult | None = None  # the last whole-set run's outcome
        self._stored_stamp: tuple[int, float] | None = None  # model_runs as last read (stored.runs_stamp)
        self._stored_checked = 0.0  # when the poll last looked (time.monotonic)
        self._announce_new = False  # the next stored read follows another process's scores: say which runs

    @property
    def scores(self) -> ModelScores:
        return self.session.scores

    @property
    def running(self) -> bool:
        return self.runs.running

    def state(self, item_id: str) -> tuple[str, bool]:
        """What the panel says of ``item_id`` while it has no score (``scoring…``, an error) and whether it is an error."""
        return self.states.get(item_id, ("", False))

    def refresh(self, item_ids: Iterable[str] | None = None, refilter: bool = True) -> None:
        """The scores of ``item_ids`` (all when None) changed: the ✗ marks follow, the host redraws."""
        self.session.refresh_model_marks(item_ids)
        self.host.scores_changed(refilter)

    # ---------------------------------------------------------------- startup

    def load_cached(self) -> None:
        """Show the scores an earlier session computed (only when the workspace has some)."""
        items, default = list(self.project.items), self.scores.template
        self.host.launch(lambda: self._load_cached(items, default), group="scoring-cache", exclusive=True)
        self.load_stored()

    def load_stored(self) -> None:
        """Read every model and template scored for the project (the side-by-side table, the model queues)."""
        self._stored_stamp = self._runs_stamp()
        items = list(self.project.items)
        self.host.launch(lambda: self._load_stored(items), group="scoring-stored", exclusive=True)

    def _load_stored(self, items: list[Item]) -> None:
        """In a worker thread: the workspace's stored runs, no model work."""
        from piqa_tui.core.scoring.engine import stored_model_results

        try:
            found = stored_model_results(self.project, items, available_templates())
        except (PiqaError, sqlite3.Error):  # WorkspaceError is a PiqaError
            return  # an unreadable cache shows no other models; scoring says what is wrong when asked
        if found:
            self.host.deliver(self._stored_loaded, items, found)

    def _stored_loaded(self, items: list[Item], found: list[tuple[StoredRun, list[ItemScore]]]) -> None:
        before = set(self.scores.run_labels)
        self.scores.put_stored(items, found)
        self.refresh()
        new = [run.label for run, _ in found if run.label not in before]
        if self._announce_new and new:
            self.host.notify(f"Model scores stored by another process: {', '.join(new)} (R shows them)", timeout=10)
        self._announce_new = False

    def watch_stored(self) -> bool:
        """From the app's poll: read the stored runs again when another process (``piqa-tui score``)
        recorded scores since the last read; True when it does. At most every
        :data:`STORED_WATCH_SECONDS`, and not while this app scores (its own run updates them)."""
        now = time.monotonic()
        if self.running or now - self._stored_checked < STORED_WATCH_SECONDS:
            return False
        self._stored_checked = now
        stamp = self._runs_stamp()
        if stamp is None or stamp == self._stored_stamp:
            return False
        self._announce_new = True
        self.load_cached()  # the session's model may be the one scored: its panel and marks too
        return True

    def _runs_stamp(self) -> tuple[int, float] | None:
        workspace = self.project.workspace
        if workspace is None:
            return None
        try:
            return runs_stamp(workspace.conn)
        except sqlite3.Error:
            return None  # a busy or unreadable workspace: the next poll looks again

    def _load_cached(self, items: list[Item], default: Template) -> None:
        """In a worker thread: read the cache, no model work."""
        from piqa_tui.core.scoring.engine import workspace_has_scores

        if not workspace_has_scores(self.project):
            return
        try:
            engine = self.session.engine()
            # The template with the most cached scores (the default on a tie) is the one last used.
            found = [(engine.cached(items, t), t) for t in available_templates().values()]
            scores, template = max(found, key=lambda pair: (len(pair[0]), pair[1].key == default.key))
            template = template if scores else default
            baseline = engine.cached(items, template, solution_only=True)
            identity = engine.identity()
        except PiqaError:
            return  # no model now: nothing to show, and nothing to say until the user asks to score
        if scores or baseline:
            self.host.deliver(self._loaded, items, template, scores, baseline, identity, engine.choice.name)

    def _loaded(
        self,
        items: list[Item],
        template: Template,
        scores: list[ItemScore],
        baseline: list[ItemScore],
        identity: str,
        model_name: str,
    ) -> None:
        model = self.scores
        if model.identity and model.identity != identity:
            return
        busy = model.holds_scores() or self.running or bool(self.states)  # this session scored or is scoring
        if busy and template.key != model.template.key:
            return  # the user scored with another template meanwhile: theirs wins (stored runs do not count)
        model.use(template, identity, model_name)
        model.put(items, scores)
        model.put(items, baseline, baseline=True)
        model.active = True
        self.refresh()

    # ------------------------------------------------------------ one item

    def score_item(self) -> None:
        """Score the current item (the panel says what happens meanwhile)."""
        item = self.host.current
        if item is None:
            return
        model = self.scores
        model.active = True
        self.states[item.id] = ("scoring…", False)
        self.host.redraw_score(item.id)
        template = model.template
        self.host.launch(lambda: self._score_item(item, template), group="score-item", exclusive=False)

    def _score_item(self, item: Item, template: Template) -> None:
        """In a worker thread."""
        try:
            engine = self.session.engine()
            if not engine.loaded:
                self.host.deliver(self._item_state, item.id, f"loading {engine.choice.name}…")
            score = engine.score_one(item, template)
            self.host.deliver(self._item_scored, item, template, score, engine.identity(), engine.choice.name)
        except PiqaError as exc:
            self.host.deliver(self._item_failed, item, str(exc))

    def _item_state(self, item_id: str, state: str) -> None:
        self.states[item_id] = (state, False)
        self.host.redraw_score(item_id)

    def _item_failed(self, item: Item, error: str) -> None:
        self.states[item.id] = (error, True)
        self.host.redraw_score(item.id)
        self.host.notify(error, severity="error", timeout=10)

    def _item_scored(self, item: Item, template: Template, score: ItemScore, identity: str, model_name: str) -> None:
        self.states.pop(item.id, None)
        model = self.scores
        if template.key != model.template.key:
            return  # the user switched template meanwhile
        model.use(template, identity, model_name)
        model.put([item], [score])
        self.refresh([item.id])

    # ------------------------------------------------------------ every item

    def score_all(self) -> None:
        """Ask which template to score every item with (or the solution-only baseline), then start."""
        if self.running:
            self.host.notify("the model is scoring already: esc cancels that run", timeout=3)
            return
        current = self.scores.template
        templates = available_templates()
        rows: list[tuple[str | None, str, str]] = [(None, "Score every item with a template", "")]
        for name in [current.name, *(n for n in templates if n != current.name)]:
            template = templates.get(name, current)
            shown = template.description or (template.context + template.continuation).replace("\n", "⏎")
            rows.append((f"run:{name}", name + (" (now)" if name == current.name else ""), shown))
        rows.append((None, "Baseline", ""))
        rows.append(("baseline", "solution-only", f"{current.name} without the prompt: answerable without reading it?"))

        def chosen(key: str | None) -> None:
            if key == "baseline":
                self.start_run(current, solution_only=True)
            elif key and key.startswith("run:"):
                self.start_run(templates.get(key[4:], current))

        self.host.push_screen(
            ChoiceDialog(
                "Score all items",
                "Scores are cached in the workspace: a cancelled run resumes, "
                "and after edits only the changed items are scored again.",
                rows,
            ),
            chosen,
        )

    def start_run(self, template: Template, solution_only: bool = False) -> None:
        """Score every item in the background (the cached ones cost nothing)."""
        if self.running:
            return
        model = self.scores
        if template.key != model.template.key:
            model.use(template, model.identity, model.model)  # the panel and queues follow the new template
            self.refresh()
        model.active = True
        self.solution_only = solution_only
        self.what = "solution-only baseline" if solution_only else f"scoring ({template.name})"
        items = self.items = list(self.project.items)  # a snapshot: the worker never reads the live list
        self.host.strip.start(f"{self.what}: starting · esc cancels")
        self.runs.start(lambda run: self._run(run, items, template, solution_only))
        self.host.show_current()

    def _run(self, run: Run, items: list[Item], template: Template, solution_only: bool) -> None:
        """In a worker thread: the whole run, reporting each chunk."""
        try:
            engine = self.session.engine()
            identity, name = engine.identity(), engine.choice.name

            def progress(report: RunProgress) -> None:
                run.report(self._progress, run, report, identity, name)

            result = engine.run(items, template, solution_only=solution_only, progress=progress, cancel=run.cancel)
        except PiqaError as exc:
            run.report(self._ended, run, None, str(exc))
            return
        run.report(self._ended, run, result, "")

    def _progress(self, run: Run, progress: RunProgress, identity: str, model_name: str) -> None:
        model = self.scores
        model.use(model.template, identity, model_name)
        # Matched to the items as scored: an item edited meanwhile shows no (stale) score.
        model.put(self.items, progress.scores, baseline=self.solution_only)
        self.host.strip.show(progress_text(self.what, progress, run.cancel.is_set()), progress.done, progress.total)
        self.refresh({s.item_id for s in progress.scores}, refilter=False)

    def _ended(self, run: Run, result: RunResult | None, error: str) -> None:
        if not self.runs.end(run):
            return
        self.host.strip.stop()
        if result is None:
            self.host.notify(f"scoring stopped: {error}", severity="error", timeout=12)
            self.refresh()
            return
        self.last_run = result
        self.host.notify(self._outcome(result), timeout=8)
        self.refresh()
        self.load_stored()  # this run is now among the workspace's models

    def _outcome(self, result: RunResult) -> str:
        """What a finished or cancelled run says."""
        what = self.what
        done, total = len(result.scores), len(result.items)
        speed = f" at {result.rate:.2f} items/s" if result.rate else ""
        if result.cancelled:
            text = f"{what} cancelled at {done:,}/{total:,} ({result.computed:,} computed{speed}); M resumes"
        else:
            shown = self.session.ballots.visible_items(self.project.items)  # blind mode: only the items voted on
            summary = scores_summary(self.scores, shown, baseline=self.solution_only)
            if len(shown) < len(self.project.items):
                summary = (
                    f"{summary} on the items you voted on (blind mode)"
                    if shown
                    else "accuracy hidden until you vote (blind mode)"
                )
            text = f"{what}: {total:,} items, {summary} ({result.computed:,} computed{speed}); R shows the results"
        if result.skipped:
            text += f"; {len(result.skipped)} item(s) skipped (scoring needs 2 to {len(LETTERS)} solutions)"
        return text

    def cancel(self) -> bool:
        """Cancel the running run after its chunk (what finished stays cached); False when none runs."""
        run = self.runs.active
        if run is None:
            return False
        run.cancel.set()
        self.host.strip.say(f"{self.what}: cancelling after this chunk…")
        return True

    def stop(self) -> None:
        """The screen goes away: stop the run and ignore what it still sends."""
        self.runs.drop()
