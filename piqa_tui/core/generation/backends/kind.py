"""What a generation backend kind is to the rest of the program (``GenerationBackendKind``) and their registry.

As for scoring (``core/scoring/backends/kind.py``): a kind names itself, adds its own command-line options
(``BackendOption``, plain data), says whether the options given choose it, and opens the ``GenerationBackend``
they name. A command that generates (draft, translate, suggest) adds every kind's options with
``generation_options`` and opens the backend with ``open_generation_backend``; none names a backend. A new
backend is one module and one ``register_generation_backend`` call; the built-in ones, the local GGUF model in
its own process and an OpenAI-compatible server, are registered by this package's ``__init__``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from piqa_tui.core.errors import ModelError
from piqa_tui.core.generation.protocol import GenerationBackend
from piqa_tui.core.registry import Registry
from piqa_tui.core.scoring.backends.kind import BackendOption


class GenerationBackendKind(Protocol):
    """One kind of generation backend. ``values`` are the command's options by ``dest`` (None where not
    given)."""

    @property
    def name(self) -> str: ...
    @property
    def options(self) -> tuple[BackendOption, ...]: ...

    def chosen(self, values: Mapping[str, object]) -> bool:
        """Whether ``values`` choose this kind (``--server`` chooses the served one)."""
        ...

    def open(self, values: Mapping[str, object]) -> GenerationBackend:
        """The backend ``values`` name, not loaded yet; ``ModelError`` (one line) when they name none usable."""
        ...


GENERATION_BACKENDS: Registry[GenerationBackendKind] = Registry("generation backend")


def register_generation_backend(kind: GenerationBackendKind) -> GenerationBackendKind:
    """Make ``kind`` a backend the generating commands may choose (its options listed after those before)."""
    return GENERATION_BACKENDS.register(kind)


def generation_options() -> list[BackendOption]:
    """Every registered kind's options, each flag once (two kinds may share ``--model``)."""
    seen: dict[str, BackendOption] = {}
    for kind in GENERATION_BACKENDS:
        for option in kind.options:
            seen.setdefault(option.flag, option)
    return list(seen.values())


def open_generation_backend(values: Mapping[str, object]) -> GenerationBackend:
    """The backend of the first registered kind that ``values`` choose, else of the last registered kind that is
    the default (the local model); ``ModelError`` when no kind is registered."""
    kinds = list(GENERATION_BACKENDS)
    if not kinds:
        raise ModelError("no generation backend is registered")
    for kind in reversed(kinds):  # the later kinds are the more specific (--server over a local file)
        if kind.chosen(values):
            return kind.open(values)
    return kinds[0].open(values)
