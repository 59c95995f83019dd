"""Keys typed ahead: each key the terminal sends reaches the app only once the app is done with the keys before it.

Over SSH a burst of keys arrives at once. Textual hands each key to the widget focused when the key comes in, and
much of what a key does happens later: a binding runs once the key has bubbled up to the app, a dialog moves the
focus once it has handled its editor's message, a new screen takes the keys once it is mounted. Left alone, the
text typed after a Tab lands in the field before it, the goal typed after ``I`` goes to the list's keys instead of
the new-item form, and ``ctrl+u`` in a field runs after the text typed behind it.

The app hands every key and paste from the terminal to ``TypeAhead.arrive``, in the order they came:

* a key the focused widget only types or edits with (``TakesKeys``: a field editor's text, cursor and deletion
  keys) goes on at once; the editor takes its keys in the order they came and none of them moves the focus;
* any other key goes on, and the keys after it wait until the app is at rest again: no message waits in the
  app's or the screen's queues, every widget is mounted, the screen has drawn (its after-refresh callbacks ran),
  the screen has no work under way (``Busy``: the main screen's save or search, during which its edit keys are
  off), and two such checks in a row found the same screen, the same focused widget and the same widgets. Then
  the waiting keys go on, the same way, in order.

A key that arrives while nothing waits goes on at once, so keys typed one at a time are never held. While the
screen is busy it is asked again every ``STALLED`` seconds (no check runs meanwhile); a check that a closing
screen would never run is asked for again after as long. The wait ends at the latest after ``MOST_CHECKS``
checks, so an app that never comes to rest still takes keys.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Protocol, runtime_checkable

from textual import events
from textual.app import App
from textual.timer import Timer
from textual.widget import Widget

MOST_CHECKS = 400  # checks before waiting keys go on anyway (each follows a redraw, or STALLED while busy)
STALLED = 0.1  # seconds: the next check while the screen is busy, or when the screen that was to make it closed

WORKING = ("busy",)  # what a check finds while the screen's work (a save, a search) is under way

KeyOrPaste = events.Key | events.Paste


@runtime_checkable
class TakesKeys(Protocol):
    """A widget some of whose keys only type or edit in it (the field editor)."""

    def takes_key(self, event: KeyOrPaste) -> bool:
        """Whether ``event`` only types or edits here: it cannot move the focus or open anything."""
        ...


@runtime_checkable
class Busy(Protocol):
    """A screen that says what work it has under way (saving, searching; empty: none)."""

    @property
    def busy(self) -> str: ...


class TypeAhead:
    """Passes the terminal's keys and pastes on to ``deliver`` in order, each once the app is done with the last."""

    def __init__(self, app: App[None], deliver: Callable[[KeyOrPaste], Awaitable[None]]) -> None:
        self.app = app
        self.deliver = deliver  # Textual's own handling of an input event (the app's on_event)
        self.held: deque[KeyOrPaste] = deque()
        self.waiting = False  # a key went on whose effects may still be on their way
        self.check = 0  # the number of the latest check asked for (an older one that comes late is ignored)
        self.checks = 0  # checks made since the wait began
        self.seen: Hashable | None = None  # what the last check found, None: the app was not at rest
        self.watchdog: Timer | None = None
        self.watched = 0  # the check the watchdog saw asked for last time it looked

    async def arrive(self, event: KeyOrPaste) -> None:
        """A key or paste from the terminal: it goes on now, or after the keys that already wait."""
        if self.waiting or self.held:
            self.held.append(event)
            return
        await self.send(event)

    async def send(self, event: KeyOrPaste) -> None:
        """Hand ``event`` to Textual; unless the focused editor only types or edits with it, later keys wait."""
        focused = self.app.focused
        stays = isinstance(focused, TakesKeys) and focused.takes_key(event)
        await self.deliver(event)
        if not stays:
            self.wait()

    def wait(self) -> None:
        """Hold later keys until the app is at rest."""
        self.waiting = True
        self.checks = 0
        self.seen = None
        if self.watchdog is None:
            self.watchdog = self.app.set_interval(STALLED, self.look, name="type-ahead")
        else:
            self.watchdog.reset()
            self.watchdog.resume()
        self.ask()

    def ask(self) -> None:
        """Check once the screen has drawn: after the callbacks it was already asked to run then (a focus move)."""
        self.check += 1
        self.app.call_after_refresh(self.at_rest, self.check)

    def look(self) -> None:
        """The watchdog: a check asked for a whole interval ago and never made (its screen closed) is asked again."""
        if not self.waiting:
            return
        if self.watched == self.check:
            self.ask()
        self.watched = self.check

    def at_rest(self, number: int) -> None:
        """Check ``number``: release the waiting keys once two checks in a row found the app at rest, the same."""
        if number != self.check or not self.waiting:
            return
        self.checks += 1
        state = self.state()
        if state == WORKING and self.checks < MOST_CHECKS:
            self.seen = None
            return  # the watchdog asks again in a moment: a worker's time, not a loop of checks
        if (state is not None and state == self.seen) or self.checks >= MOST_CHECKS:
            self.waiting = False
            if self.watchdog is not None:
                self.watchdog.pause()
            self.app.call_later(self.release)
            return
        self.seen = state
        self.ask()

    def state(self) -> Hashable | None:
        """The screen, the focused widget and the number of widgets; None while a message waits or a widget is not
        yet mounted, ``WORKING`` while the screen is busy."""
        app = self.app
        screens = app.screen_stack
        if not screens:
            return ("no screen",)
        screen = screens[-1]
        widgets = screen.walk_children(Widget, with_self=True)
        if app.message_queue_size or any(w.message_queue_size or not w.is_mounted for w in widgets):
            return None
        if isinstance(screen, Busy) and screen.busy:
            return WORKING
        return (id(screen), id(app.focused), len(widgets))

    async def release(self) -> None:
        """Pass the waiting keys on in order, until one of them makes the rest wait again."""
        while self.held and not self.waiting:
            await self.send(self.held.popleft())
