"""``BackgroundRuns`` with real threads: a run's reports reach the owner until the run is dropped or replaced."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from piqa_tui.tui.controllers.background import BackgroundRuns, Run


class Owner:
    """Starts work in plain threads and runs what they deliver when ``drain`` is called (the UI thread)."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.inbox: queue.Queue[tuple[Callable[..., object], tuple[object, ...]]] = queue.Queue()
        self.got: list[tuple[int, str]] = []
        self.runs = BackgroundRuns(self.launch, self.deliver)

    def launch(self, work: Callable[[], None]) -> None:
        thread = threading.Thread(target=work, daemon=True)
        self.threads.append(thread)
        thread.start()

    def deliver(self, callback: Callable[..., object], *args: object) -> None:
        self.inbox.put((callback, args))

    def drain(self) -> None:
        for thread in self.threads:
            thread.join(10)
        while not self.inbox.empty():
            callback, args = self.inbox.get()
            callback(*args)

    def work(self, release: threading.Event) -> Callable[[Run], None]:
        """A run that reports once, waits for ``release``, reports its end unless cancelled."""

        def body(run: Run) -> None:
            run.report(self.got.append, (run.number, "started"))
            release.wait(10)
            if not run.cancel.is_set():
                run.report(self.ended, run)

        return body

    def ended(self, run: Run) -> None:
        if self.runs.end(run):
            self.got.append((run.number, "ended"))


def test_a_run_reports_and_ends() -> None:
    owner, release = Owner(), threading.Event()
    run = owner.runs.start(owner.work(release))
    assert owner.runs.running and run.current
    release.set()
    owner.drain()
    assert owner.got == [(1, "started"), (1, "ended")]
    assert not owner.runs.running


def test_a_replaced_run_is_cancelled_and_its_late_reports_dropped() -> None:
    owner, first_release, second_release = Owner(), threading.Event(), threading.Event()
    first = owner.runs.start(owner.work(first_release))
    second = owner.runs.start(owner.work(second_release))
    assert first.cancel.is_set() and not first.current and second.current
    first_release.set()
    second_release.set()
    owner.drain()
    assert owner.got == [(2, "started"), (2, "ended")]  # the first run's "started" arrived stale


def test_a_dropped_run_says_nothing_more() -> None:
    owner, release = Owner(), threading.Event()
    run = owner.runs.start(owner.work(release))
    owner.runs.drop()
    release.set()
    owner.drain()
    assert run.cancel.is_set() and owner.got == [] and not owner.runs.running
