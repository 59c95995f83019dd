"""Which backend scores: a served model, or the local GGUF model in its own process (or in this one).

Callers (the CLI's ``score``, the TUI's engine) describe the model with a
``ModelChoice`` and get an object that speaks the backend protocol; the
process boundary (``scoring.process``) keeps a native crash from taking them
down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.backend import ModelBackend, ModelChoice

LLAMA_BACKEND = "piqa_tui.core.scoring.llama.LlamaBackend"


def local_backend(path: Path, *, in_process: bool = False, **options: Any) -> ModelBackend:
    """The llama.cpp backend for the GGUF at ``path``, behind a process boundary unless ``in_process``.

    ``options`` are ``LlamaBackend``'s (n_gpu_layers, n_threads, n_ctx,
    n_batch, repack, ...). Nothing is loaded yet.
    """
    from piqa_tui.core.scoring.llama import LlamaBackend  # cheap: llama.cpp is imported on load

    local = LlamaBackend(path, **options)
    if in_process:
        return local
    from piqa_tui.core.scoring.process import ProcessBackend

    return ProcessBackend(LLAMA_BACKEND, {"path": str(path), **options}, local=local)


def backend_for(choice: ModelChoice, **options: Any) -> ModelBackend:
    """The choice's server when it names one, else its GGUF file in a child process (``options`` for that)."""
    if choice.server is not None:
        from piqa_tui.core.scoring.served import ServedBackend

        return ServedBackend(choice.server.url, choice.server.model, concurrency=choice.server.concurrency)
    if choice.path is None:
        raise ModelError(choice.problem)
    return local_backend(choice.path, n_gpu_layers=choice.n_gpu_layers, repack=choice.repack, **options)
