"""The model backend protocol: text in (:class:`ScoreRequest`), summed log-probabilities out.

Backends see only text, so a served model (an OpenAI-compatible endpoint) can
replace the local llama.cpp one without the callers noticing. The llama.cpp
backend lives in ``scoring.llama`` and is imported only when a model is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable

# --------------------------------------------------------------------------- backends


@dataclass(frozen=True, slots=True)
class ScoreRequest:
    """One item as a backend sees it: a context and 2+ continuations to score after it."""

    context: str
    continuations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ContinuationScore:
    """Summed log-probability of a continuation's tokens given the context."""

    loglik: float
    n_tokens: int


@runtime_checkable
class ModelBackend(Protocol):
    """A model that scores continuations. Implementations: ``LlamaBackend``.

    ``load`` may be slow and raises :class:`ModelError` for a model that cannot
    be used; ``score`` is called from a worker thread, never concurrently;
    ``describe`` must be cheap and its ``"identity"`` stable for the same model
    file (it keys the score cache).
    """

    def load(self) -> None:
        """Make the model ready; calling it again is a no-op."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[ContinuationScore, ...]]:
        """Score every continuation of every request, in order."""

    def describe(self) -> dict[str, object]:
        """At least ``identity`` (str) and ``backend`` (str); anything else is for display."""

    def close(self) -> None:
        """Free the model."""


class Repack(StrEnum):
    """Whether llama.cpp may repack the weights for this CPU's fastest kernels (``auto``: not on AMX CPUs)."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


@dataclass(frozen=True)
class ServerChoice:
    """An OpenAI-compatible server to score through instead of a local file (see ``scoring.served``)."""

    url: str
    model: str | None = None  # None: the first model the server lists
    concurrency: int = 4


@dataclass(frozen=True)
class ModelChoice:
    """The model file to score with and where the choice came from; ``path`` None says why in ``problem``."""

    path: Path | None
    source: str = ""  # "config", "$PIQA_TUI_MODEL", "packaged"
    n_gpu_layers: int = 0
    problem: str = ""
    repack: Repack = Repack.AUTO  # llama.cpp weight repacking
    server: ServerChoice | None = None  # set: score through this server, ``path`` unused
    origin: str = ""  # how to name the source in a message, e.g. "the config file's model (~/.config/...)"

    @property
    def name(self) -> str:
        if self.server is not None:
            return self.server.model or self.server.url
        return self.path.name if self.path is not None else "no model"
