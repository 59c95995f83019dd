"""The one route of the TUI's actions to the workspace: the write queue commits them, retrying a busy one.

Each session owns one queue (``Session.writes``). On the write path a controller *submits* an action to its
host (``Host.submit``), the host hands it to this queue, which *commits* it (``Writes.commit``: the action's
own call, e.g. ``Project.vote``, in which the project records it in the log). Votes, edits, flags, notes,
undo, adjudications, questions and duplicate-cluster decisions all come this way, never from a screen calling
core itself. Another process may hold the workspace's write lock for a long time (a large
``votes import``, a backup tool, a stuck script). An action that finds it busy
is kept here, in order, and retried every ``RETRY_SECONDS`` with a short wait
so the screen stays responsive; the screen shows it only once it is committed.
After ``GIVE_UP_SECONDS`` the waiting actions are dropped and the user is told
which were not recorded. Any other failure (full disk, read-only workspace) is
reported at once: nothing is shown that was not recorded. The queue imports
nothing of Textual: the app lends it its toasts and its timer (``attach``).

A preference the workspace keeps for the next session (where the annotator is: ``commit_preference``) takes
the same route without a word: it is no data, so it waits behind the actions already waiting (never
freezing a key on a busy workspace twice), a newer one of the same kind replaces one still waiting (only the
last place matters), it is never named among the actions not recorded, and a workspace that cannot take it
(read-only, gone) simply does not keep it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from piqa_tui.core.errors import PiqaError, WorkspaceBusy

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

    from piqa_tui.core.workspace.log import Workspace

RETRY_SECONDS = 1.0
RETRY_WAIT = 0.05  # how long one retry waits for the lock: the keys stay live between retries
# How long an action's first try waits for another process's lock, on the UI thread: long enough for another
# annotator's commit (milliseconds) to pass unseen, short enough that a long holder (a large votes import)
# makes the key wait in the queue instead of freezing the screen for the workspace's whole busy timeout.
FIRST_WAIT = 0.3
GIVE_UP_SECONDS = 120.0

T = TypeVar("T")


@dataclass
class Pending:
    """One action not yet recorded: what to call, what to do once it is, and how to name it to the user."""

    what: str
    attempt: Callable[[], Any]
    done: Callable[[Any], None]
    since: float = field(default_factory=time.monotonic)


class Writes:
    """A session's write queue: commits each action, keeping those that find the workspace busy (one per session)."""

    def __init__(self, workspace: Workspace | None) -> None:
        self.workspace = workspace
        self.queue: deque[Pending] = deque()
        self.preferences: dict[str, Pending] = {}  # what -> the latest write of that preference still waiting
        self._app: App[Any] | None = None
        self._timer: Timer | None = None

    def attach(self, app: App[Any]) -> None:
        """Tell the user through ``app``'s toasts and retry on its timer (the session is on screen now)."""
        self._app = app

    @property
    def app(self) -> App[Any]:
        if self._app is None:
            raise RuntimeError("the write queue is not attached to an app: call attach() first")
        return self._app

    def abandon(self) -> None:
        """The session is closing (another file opened, the same one reloaded): say what was not recorded."""
        self.preferences.clear()
        if self.queue:
            names = ", ".join(p.what for p in self.queue)
            self.queue.clear()
            self.app.notify(
                f"not recorded: {names} (the workspace was still busy); do them again", severity="error", timeout=30
            )
        self._stop()

    def commit(self, what: str, attempt: Callable[[], T], done: Callable[[T], None]) -> None:
        """Run ``attempt`` (which records in the workspace) then ``done`` with its result; when the
        workspace is busy, keep it pending and retry; when it fails otherwise, say so."""
        action = Pending(what, attempt, done)
        if self.queue:  # behind the ones already waiting, so actions are recorded in the order made
            self.queue.append(action)
            self.app.notify(f"workspace busy, retrying: {what} waits its turn ({len(self.queue)} pending)", timeout=4)
            return
        try:
            result = self._attempt(action, self.workspace, FIRST_WAIT)
        except WorkspaceBusy:
            self.queue.append(action)
            self.app.notify(f"workspace busy, retrying: {what} is not recorded yet", severity="warning", timeout=6)
            self._schedule()
            return
        except PiqaError as exc:
            self.app.notify(f"{what} was not recorded: {exc}", severity="error", timeout=12)
            return
        done(result)

    def commit_preference(self, what: str, attempt: Callable[[], object]) -> None:
        """Run ``attempt`` (which keeps a preference in the workspace) in its turn, saying nothing: behind the
        actions waiting, replacing one of the same ``what`` still waiting; a busy workspace keeps it waiting
        and retried, any other failure drops it (a place to resume is no data)."""
        if not (self.queue or self.preferences):
            try:
                self._attempt(Pending(what, attempt, _nothing), self.workspace, FIRST_WAIT)
                return
            except WorkspaceBusy:
                pass
            except PiqaError:
                return
        if self._app is not None:  # else nothing is on screen to retry on: the preference is not kept
            self.preferences[what] = Pending(what, attempt, _nothing)
            self._schedule()

    def _schedule(self) -> None:
        if self._timer is None:
            self._timer = self.app.set_interval(RETRY_SECONDS, self._retry)

    def _retry(self) -> None:
        while self.queue:
            head = self.queue[0]
            try:
                result = self._attempt(head, self.workspace)
            except WorkspaceBusy:
                if time.monotonic() - head.since > GIVE_UP_SECONDS:
                    self._give_up()
                return
            except PiqaError as exc:
                self.queue.popleft()
                self.app.notify(f"{head.what} was not recorded: {exc}", severity="error", timeout=12)
                continue
            self.queue.popleft()
            head.done(result)
            self.app.notify(f"recorded after waiting: {head.what}", timeout=3)
        for what, preference in list(self.preferences.items()):
            try:
                self._attempt(preference, self.workspace)
            except WorkspaceBusy:
                if time.monotonic() - preference.since <= GIVE_UP_SECONDS:
                    return
            except PiqaError:
                pass
            del self.preferences[what]
        self._stop()

    @staticmethod
    def _attempt(action: Pending, workspace: Workspace | None, wait: float = RETRY_WAIT) -> Any:
        if workspace is None:
            return action.attempt()
        with workspace.waiting(min(wait, workspace.busy_timeout)):
            return action.attempt()

    def _give_up(self) -> None:
        names = ", ".join(p.what for p in self.queue)
        self.queue.clear()
        self.preferences.clear()
        self._stop()
        self.app.notify(
            f"workspace still busy after {GIVE_UP_SECONDS:g} s: not recorded: {names}; do them again later",
            severity="error",
            timeout=30,
        )

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None


def _nothing(_: object) -> None:
    """What follows a preference kept: nothing to show."""
