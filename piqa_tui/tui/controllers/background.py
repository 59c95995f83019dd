"""One kind of long background run at a time (a duplicate scan, a whole-set scoring run), numbered.

A run works in a thread and reports back to the UI thread; when the user
cancels it or starts another, what the old run still sends is stale.
``BackgroundRuns`` numbers the runs and drops a report whose run is no longer
the current one, so neither screen keeps a run counter of its own. It holds
no Textual objects: the owner says how to start a thread (a Textual thread
worker) and how to call back on the UI thread, so tests drive it with plain
threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

Launch = Callable[[Callable[[], None]], object]  # runs a function off the UI thread
Deliver = Callable[..., object]  # calls ``fn(*args)`` on the UI thread, from any thread, without waiting


class Run:
    """One run: its number, its cancel flag, and its way to report back."""

    def __init__(self, runs: BackgroundRuns, number: int) -> None:
        self._runs = runs
        self.number = number
        self.cancel = threading.Event()  # set when the user cancels: the work stops at its next check

    @property
    def current(self) -> bool:
        """Still the run its owner waits for (not cancelled away, not replaced)."""
        return self._runs.active is self

    def report(self, callback: Callable[..., object], *args: object) -> None:
        """From the run's thread: ``callback(*args)`` on the UI thread, unless the run is stale by then."""
        self._runs.deliver(self._if_current, callback, args)

    def _if_current(self, callback: Callable[..., object], args: tuple[object, ...]) -> None:
        if self.current:
            callback(*args)


class BackgroundRuns:
    """Starts runs one at a time and forgets the old one when a new one starts or it is dropped."""

    def __init__(self, launch: Launch, deliver: Deliver) -> None:
        self.launch = launch
        self.deliver = deliver
        self.active: Run | None = None
        self._count = 0

    @property
    def running(self) -> bool:
        return self.active is not None

    def start(self, work: Callable[[Run], None]) -> Run:
        """Start ``work(run)`` off the UI thread; an earlier run's reports are ignored from now on."""
        self.drop()
        self._count += 1
        run = self.active = Run(self, self._count)
        self.launch(lambda: work(run))
        return run

    def end(self, run: Run) -> bool:
        """On the UI thread, when ``run`` says it ended: True if it was the current one (then none runs)."""
        if run is not self.active:
            return False
        self.active = None
        return True

    def drop(self) -> None:
        """Cancel the current run and ignore whatever it still reports."""
        run, self.active = self.active, None
        if run is not None:
            run.cancel.set()
