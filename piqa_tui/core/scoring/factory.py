"""Which backend scores: the one the ``ModelChoice`` names in the registry (``scoring.backends``).

Callers (the CLI's ``score``, the TUI's engine) describe the model with a
``ModelChoice`` and get an object that speaks the backend protocol; the local
model runs behind the process boundary (``scoring.process``), which keeps a
native crash from taking them down.
"""

from __future__ import annotations

from typing import Any

from piqa_tui.core.scoring.backend import ModelBackend, ModelChoice
from piqa_tui.core.scoring.backends.kind import scoring_backend
from piqa_tui.core.scoring.backends.local import local_backend

__all__ = ["backend_for", "local_backend"]


def backend_for(choice: ModelChoice, **options: Any) -> ModelBackend:
    """The backend ``choice`` names, opened (nothing loaded yet); ``options`` are the local model's threads and
    sizes, which a backend without such knobs ignores. ``ModelError`` when the choice cannot be used."""
    return scoring_backend(choice.kind).open(choice, **options)
