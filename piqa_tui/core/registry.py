"""Extension points that take a new kind in one place: a registry of kinds by name, in registration order.

The round's question kinds (``core/round/question_kinds``), the dataset shapes (``core/dataset/shapes``) and the
scoring backends (``core/scoring/backends``) each keep one ``Registry``; a new kind is one module whose object
is registered there, and every face asks the registry rather than naming the kinds it knows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar


class Named(Protocol):
    """What a registry holds: a kind that names itself."""

    @property
    def name(self) -> str: ...


K = TypeVar("K", bound=Named)


class Registry(Generic[K]):
    """The kinds of one extension point, by name, in the order they were registered (the order faces list them)."""

    def __init__(self, what: str) -> None:
        self.what = what  # "question kind", "dataset shape": how a message names one
        self._kinds: dict[str, K] = {}

    def register(self, kind: K) -> K:
        """Add ``kind``; a name already taken by another kind is a ``ValueError`` (a programming error)."""
        held = self._kinds.get(kind.name)
        if held is not None and held is not kind:
            raise ValueError(f"a {self.what} named {kind.name!r} is already registered")
        self._kinds[kind.name] = kind
        return kind

    def unregister(self, name: str) -> None:
        """Take the kind named ``name`` out (nothing when there is none)."""
        self._kinds.pop(name, None)

    def get(self, name: str) -> K | None:
        return self._kinds.get(name)

    def names(self) -> tuple[str, ...]:
        return tuple(self._kinds)

    def __iter__(self) -> Iterator[K]:
        return iter(tuple(self._kinds.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._kinds
