"""The writing model's suggestions on the current item, on the main screen.

Keys (``keymap.SUGGEST_ACTIONS``): w a correction of language and spelling, z a wrong solution one or two words
from the right one, t the item's empty translation column. The model (``settings/writer_choice.py``: the
config's ``writer_server`` or ``writer_model``) is opened and loaded in a worker on first use and kept; its
tokens stream into the suggestion dialog (``dialogs/suggestion.py``) and escape stops it. The answer becomes
word-level changes (``core.authoring.suggesting``); only what the person takes, with enter, is submitted to the
write queue: the suggestions with their provenance and each decision, an accepted field an ordinary edit that
names its suggestion. Nothing reaches the item without a key press.

S reviews the suggestions recorded earlier (a batch job's, a colleague's brought by merge or sync) on the
item's text fields — the goal, the solutions, the translation columns — in the same dialog, no model asked:
each field's newest pending suggestion as changes of the field's text now, and on enter the decisions on
those suggestions as one action (``core.authoring.suggesting.stored_review``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

from piqa_tui.core.authoring.job_templates import JobTemplate, job_catalog
from piqa_tui.core.authoring.suggesting import (
    Decided,
    Proposal,
    StoredReview,
    SuggestError,
    Target,
    decide,
    decide_stored,
    proposals,
    stored_review,
    suggestion_request,
)
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.render.safe_text import markup_safe
from piqa_tui.tui.controllers.host import Background, Host
from piqa_tui.tui.dialogs.suggestion import SuggestionDialog, Taken
from piqa_tui.tui.state.fields import text_suggestion_field, translation_columns
from piqa_tui.tui.state.session import Session

if TYPE_CHECKING:  # the generation backends load when the first suggestion is asked for
    from piqa_tui.core.generation.protocol import GenerationBackend, GenerationRequest, GenerationResult


class SuggestingHost(Host, Background, Protocol):
    """The main screen, as the suggestion keys need it."""


class SuggestingController:
    """Asks the writing model about the current item and records what the person takes of its answer."""

    def __init__(self, session: Session, host: SuggestingHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host
        self.backend: GenerationBackend | None = None
        self.cancel = threading.Event()
        self.lock = threading.Lock()  # one model load, whichever worker asks first
        self.pending: tuple[list[Proposal], str] = ([], "")  # the shown suggestion's proposals and provenance

    def suggest(self, job: str) -> None:
        """Ask for a ``job`` suggestion (correct, distractor, fill) on the current item."""
        item = self.host.current
        if item is None:
            return
        try:
            template = self._template(job)
            target = self._target(job, item)
            language = "the item's own language" if job != "fill" else f"the language of column {target.column[5:]}"
            request = suggestion_request(template, target, language)
        except PiqaError as exc:
            self.host.notify(markup_safe(str(exc), one_line=True), severity="warning", timeout=6)
            return
        self.cancel = threading.Event()
        cancel = self.cancel
        dialog = SuggestionDialog(f"{template.description} — {item.id}", cancel.set)
        self.host.push_screen(dialog, lambda taken: self._decided(item.id, taken))
        self.host.launch(
            lambda: self._write(dialog, template, target, request, cancel), group="suggest", exclusive=True
        )

    def _template(self, job: str) -> JobTemplate:
        from piqa_tui.settings.locations import user_templates_dir

        return job_catalog(user_templates_dir() / "jobs")[job]

    def _target(self, job: str, item: Item) -> Target:
        if job != "fill":
            return Target(item)
        for owner, columns in translation_columns(self.project.dataset).items():
            for column in columns:
                if not item.meta.get(column, "").strip():
                    return Target(item, f"meta:{column}", owner)
        raise SuggestError(f"item {item.id} has no empty translation column to suggest")

    def _write(
        self,
        dialog: SuggestionDialog,
        template: JobTemplate,
        target: Target,
        request: GenerationRequest,
        cancel: threading.Event,
    ) -> None:
        """In a worker: load the model once, stream its answer into the dialog, hand the result back."""
        try:
            backend = self._writer()
            result = backend.generate(request, lambda piece: self.host.deliver(dialog.add_tokens, piece), cancel)
            provenance = self._provenance(backend, template)
        except PiqaError as exc:
            self.host.deliver(dialog.show_error, str(exc))
            return
        self.host.deliver(self._answered, dialog, template, target, result, provenance)

    def _writer(self) -> GenerationBackend:
        from piqa_tui.core.generation.backends.kind import open_generation_backend
        from piqa_tui.settings.locations import config_path
        from piqa_tui.settings.writer_choice import ENV_VAR as WRITER_ENV
        from piqa_tui.settings.writer_choice import writer_values

        with self.lock:
            if self.backend is None:
                values = writer_values()
                if not values:  # the TUI takes no --model for writing: say where the writer is named
                    raise PiqaError(
                        f'no writing model: set writer_model = "FILE.gguf" (an instruction-tuned GGUF) or '
                        f'writer_server = "URL" in {config_path()}, or ${WRITER_ENV} = FILE.gguf'
                    )
                backend = open_generation_backend(values)
                backend.load()
                self.backend = backend
            return self.backend

    def _provenance(self, backend: GenerationBackend, template: JobTemplate) -> str:
        from piqa_tui.core.generation.protocol import Provenance

        params = {"temperature": template.temperature, "max_tokens": template.max_tokens}
        return Provenance.now(
            backend.source(),
            self.project.annotator,
            template.job,
            template=template.name,
            template_sha256=template.digest,
            params=params,
            seed=0,
        ).to_json()

    def _answered(
        self, dialog: SuggestionDialog, template: JobTemplate, target: Target, result: GenerationResult, provenance: str
    ) -> None:
        if self.cancel.is_set() or not dialog.is_attached:
            return
        if not result.ok:
            dialog.show_error(result.error or f"the model stopped ({result.stop})")
            return
        try:
            found = proposals(template, target, result.data)
        except SuggestError as exc:
            dialog.show_error(str(exc))
            return
        self.pending = (found, provenance)
        dialog.show_proposals(found)

    def _decided(self, item_id: str, taken: Taken | None) -> None:
        """Enter in the dialog: record the suggestions and the decisions (escape: nothing)."""
        found, provenance = self.pending
        self.pending = ([], "")
        if taken is None or not found:
            return
        self.host.submit(
            "suggestion",
            lambda: decide(self.project, item_id, found, taken, provenance),
            lambda done: self._written(item_id, done),
        )

    def _written(self, item_id: str, done: object) -> None:
        self.host.after_change([item_id])
        if isinstance(done, Decided):
            fields = ", ".join(done.changed) or "nothing"
            down = f", turned down {done.rejected}" if done.rejected else ""
            self.host.notify(f"{markup_safe(item_id, one_line=True)}: changed {fields}{down} (u undoes)", timeout=3)

    def review_stored(self) -> None:
        """Open the current item's pending suggestions on its text fields for review (S)."""
        item = self.host.current
        if item is None:
            return
        shown = stored_review(self.project, item, lambda field: text_suggestion_field(self.project.dataset, field))
        if not shown.proposals and not shown.same:
            self.host.notify("no pending model suggestion for this item's text", timeout=2)
            return
        count = len(shown.proposals) + len(shown.same)
        title = f"{count} stored suggestion{'s' * (count != 1)} — {item.id}"
        dialog = SuggestionDialog(title, lambda: None, (shown.proposals, shown.note()))
        self.host.push_screen(dialog, lambda taken: self._reviewed(item.id, shown, taken))

    def _reviewed(self, item_id: str, shown: StoredReview, taken: Taken | None) -> None:
        """Enter in the dialog: record the decisions on the stored suggestions (escape: nothing)."""
        if taken is None:
            return
        self.host.submit(
            "suggestion", lambda: decide_stored(self.project, shown, taken), lambda done: self._written(item_id, done)
        )

    def stop(self) -> None:
        """The screen closes: stop any writing and close the model's process."""
        self.cancel.set()
        if self.backend is not None:
            self.backend.close()
            self.backend = None
