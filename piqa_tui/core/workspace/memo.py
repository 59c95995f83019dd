"""Views derived from a project's log, worked out again only when the log moved: one memo for all of them.

A queue asks for the stages, the orders or the answers on every cursor move; reading them from the log
each time would cost a query per key press. Each view asks the project's ``LogMemo`` instead, under a key
of its own: the value is kept until the replay's ``version`` moves (an event applied, by this process or
another) or the view's own ``stamp`` (a policy, the stored runs) differs. The memo lives and dies with its
project, so no module keeps a cache of its own keyed on projects.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Protocol, TypeVar, cast

T = TypeVar("T")


class Versioned(Protocol):
    """What the memo follows: a version that moves whenever the log's derived state may have (``Replay``)."""

    @property
    def version(self) -> int: ...


class LogMemo:
    """Values derived from one project's log, each under its own key, kept while the log stands still."""

    def __init__(self, source: Versioned) -> None:
        self._source = source  # not a closure over the project: a project must be freed as soon as it is dropped
        self._values: dict[Hashable, tuple[object, object]] = {}
        self._lock = threading.Lock()  # a worker (the health screen, the audit) and the UI thread both ask

    def get(self, key: Hashable, compute: Callable[[], T], stamp: object = None, follow_log: bool = True) -> T:
        """The value under ``key``, from ``compute()`` when none is kept for the log's version and ``stamp``
        (``follow_log=False``: for ``stamp`` alone, for values that do not change with the log)."""
        full = (self._source.version if follow_log else None, stamp)
        with self._lock:
            found = self._values.get(key)
            if found is not None and found[0] == full:
                return cast(T, found[1])
        value = compute()  # outside the lock: a slow view never holds up another
        with self._lock:
            self._values[key] = (full, value)
        return value

    def peek(self, key: Hashable, stamp: object = None, follow_log: bool = True) -> object:
        """The value under ``key`` if it still holds for the log's version and ``stamp``; None otherwise (never
        works it out)."""
        full = (self._source.version if follow_log else None, stamp)
        with self._lock:
            found = self._values.get(key)
        return found[1] if found is not None and found[0] == full else None

    def forget(self, key: Hashable) -> None:
        """Work the value under ``key`` out again on the next ask (it depends on something the log does not show)."""
        with self._lock:
            self._values.pop(key, None)
