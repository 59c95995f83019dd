"""The local backend: a GGUF model run by llama.cpp in a child process (``scoring.process``), so a native crash
costs a message, not the caller; ``--model`` files, layers offloaded to a GPU, llama.cpp's weight repacking.

Its settings are the config file's top-level ``model``, ``n_gpu_layers`` and ``repack`` (the model the TUI uses
when no other backend is configured: ``settings/model_choice.py``), so it has no table of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.backend import LOCAL, ModelBackend, ModelChoice, Repack
from piqa_tui.core.scoring.backends.kind import BackendOption, repeated

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


class LocalModel:
    """The local GGUF model's backend kind (see the module docstring)."""

    name = LOCAL
    table = None
    options = (
        BackendOption(
            "--model",
            "a GGUF model file; repeat it to compare several, scored one after another "
            "(default: the config's model, else $PIQA_TUI_MODEL, else the packaged Gemma 3 270M)",
            metavar="FILE.gguf",
            repeat=True,
        ),
        BackendOption(
            "--n-gpu-layers",
            "layers offloaded to the GPU: 0 = CPU only, -1 = all (default: the config's n_gpu_layers, else 0)",
            metavar="N",
            number=True,
        ),
        BackendOption(
            "--repack",
            "let llama.cpp repack the weights for this CPU's fastest kernels: auto = on, "
            "except on CPUs with AMX, where they crash (default: the config's repack, else auto)",
            choices=tuple(setting.value for setting in Repack),
        ),
    )

    def check_table(self, value: object) -> object:
        return None

    def configured(self, settings: object, origin: str) -> ModelChoice:
        return ModelChoice(None, problem="the local model is chosen by model, $PIQA_TUI_MODEL or the packaged one")

    def choices(self, values: Mapping[str, object], configured: Mapping[str, object]) -> list[ModelChoice]:
        layers, repack = _offload(values, configured)
        return [ModelChoice(Path(str(m)), "--model", layers, repack=repack) for m in repeated(values, "model")]

    def with_options(
        self, choice: ModelChoice, values: Mapping[str, object], configured: Mapping[str, object]
    ) -> ModelChoice:
        layers, repack = _offload(values, configured)
        return replace(choice, n_gpu_layers=layers, repack=repack, origin="")

    def usable(self, choice: ModelChoice) -> None:
        if choice.path is None:
            raise ModelError(choice.problem)
        if not choice.path.is_file():
            where = choice.origin or choice.source
            raise ModelError(f"{where} names {choice.path}, which is not a file; give the path of a .gguf model there")

    def open(self, choice: ModelChoice, **options: Any) -> ModelBackend:
        if choice.path is None:
            raise ModelError(choice.problem)
        return local_backend(choice.path, n_gpu_layers=choice.n_gpu_layers, repack=choice.repack, **options)

    def describe(self, choice: ModelChoice, info: Mapping[str, object]) -> str:
        where = "CPU" if choice.n_gpu_layers == 0 else f"{choice.n_gpu_layers} GPU layers"
        return f"{info.get('model') or choice.name} · {where} · {choice.source}"


def _offload(values: Mapping[str, object], configured: Mapping[str, object]) -> tuple[int, Repack]:
    """The GPU layers and repacking: the command line's, else the config file's."""
    layers = values.get("n_gpu_layers")
    repack = values.get("repack")
    return (
        layers if isinstance(layers, int) else int(str(configured.get("n_gpu_layers", 0))),
        Repack(str(repack)) if repack else Repack(str(configured.get("repack", Repack.AUTO))),
    )
