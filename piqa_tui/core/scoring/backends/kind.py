"""What a scoring backend is to the rest of the program (``ScoringBackendKind``) and the backends' registry.

A backend kind names itself, says which table of the config file holds its settings and checks it, adds its own
options to the ``score`` command (``BackendOption``: plain data, so core stays free of argparse), turns those
options into the runs they name (``ModelChoice``), and opens the ``ModelBackend`` that scores. The CLI, the
settings and the TUI's engine ask the registry; none of them names a backend. A new backend is one module (its
``ModelBackend`` and its kind) and one ``register_scoring_backend`` call; the built-in ones, the local llama.cpp
model in its own process and an OpenAI-compatible server, are registered by this package's ``__init__``.
The text-generation backends of the authoring work are meant to follow the same pattern in a sibling registry
(``core/registry.py``'s ``Registry`` with ``BackendOption`` for their command options).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from piqa_tui.core.errors import ModelError
from piqa_tui.core.registry import Registry
from piqa_tui.core.scoring.backend import ModelBackend, ModelChoice


@dataclass(frozen=True)
class BackendOption:
    """One command-line option a backend adds to ``score``: ``flag`` (``--server``), its help, and how it is read:
    repeatable, a whole number of at least ``at_least``, one of ``choices``. Its value reaches the backend under
    the flag's name with ``_`` for ``-`` (``server_model``)."""

    flag: str
    help: str
    metavar: str | None = None
    repeat: bool = False
    number: bool = False
    at_least: int | None = None  # refused below it, before any model loads
    default: object = None
    choices: tuple[str, ...] = ()

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


def repeated(values: Mapping[str, object], dest: str) -> list[object]:
    """A repeatable option's values (none when it was not given)."""
    found = values.get(dest)
    return list(found) if isinstance(found, list) else []


class ScoringBackendKind(Protocol):
    """One kind of scoring backend (see the module docstring).

    ``table`` is the config file's table that holds its settings (None: it has none of its own); ``values`` below
    are the ``score`` options by ``dest`` (None where not given) and ``configured`` the config file's settings by
    name, its backend tables included.
    """

    @property
    def name(self) -> str: ...
    @property
    def table(self) -> str | None: ...
    @property
    def options(self) -> tuple[BackendOption, ...]: ...

    def check_table(self, value: object) -> object:
        """Its config table checked into what ``open`` reads; ``SettingError`` (one line) when it is wrong."""
        ...

    def configured(self, settings: object, origin: str) -> ModelChoice:
        """The choice the config file makes with its table (``settings``: ``check_table``'s result, None when
        the file names the backend without its table); ``origin`` names the file's line in messages."""
        ...

    def choices(self, values: Mapping[str, object], configured: Mapping[str, object]) -> list[ModelChoice]:
        """The runs its ``score`` options name, in order (none when they name none)."""
        ...

    def with_options(
        self, choice: ModelChoice, values: Mapping[str, object], configured: Mapping[str, object]
    ) -> ModelChoice:
        """The configured ``choice`` (of this kind) with its ``score`` options applied."""
        ...

    def usable(self, choice: ModelChoice) -> None:
        """Raise ``ModelError`` (one line) when ``choice`` cannot be scored with, before anything loads."""
        ...

    def open(self, choice: ModelChoice, **options: Any) -> ModelBackend:
        """The backend for ``choice``, not loaded yet; ``options`` are the command's threads and sizes, which a
        backend without such knobs ignores."""
        ...

    def describe(self, choice: ModelChoice, info: Mapping[str, object]) -> str:
        """One line naming the model and where it runs (``info``: the backend's ``describe()``)."""
        ...


SCORING_BACKENDS: Registry[ScoringBackendKind] = Registry("scoring backend")


def register_scoring_backend(kind: ScoringBackendKind) -> ScoringBackendKind:
    """Make ``kind`` a backend the config file and ``score`` may choose (its options listed after those before)."""
    return SCORING_BACKENDS.register(kind)


def scoring_backend(name: str) -> ScoringBackendKind:
    """The backend registered as ``name``; ``ModelError`` when none is."""
    found = SCORING_BACKENDS.get(name)
    if found is None:
        raise ModelError(f"no scoring backend {name!r}; the backends are {', '.join(SCORING_BACKENDS.names())}")
    return found
