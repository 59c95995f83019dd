"""The local generation backend: a GGUF model in its own process (the scoring model's ``ProcessBackend``), so a
native crash in llama.cpp costs a message, never the app; ``--model`` a file, ``--n-gpu-layers`` the offload.

The writing itself is ``core/generation/llama_writer.py``, run in the child; this side streams its tokens and
finished items back and passes the caller's cancel on.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from piqa_tui.core.errors import ModelError
from piqa_tui.core.generation.protocol import (
    GenerationRequest,
    GenerationResult,
    ModelSource,
    ResultSink,
    TokenSink,
)
from piqa_tui.core.generation.schema import check_schema
from piqa_tui.core.scoring.backends.kind import BackendOption
from piqa_tui.core.scoring.gguf_file import check_model_file

WRITER = "piqa_tui.core.generation.llama_writer.LlamaWriter"
_HASH_BLOCK = 1 << 20


class LocalGeneration:
    """A GGUF model that writes, in a child process (see the module docstring). ``options`` are
    ``LlamaWriter``'s: n_gpu_layers, n_threads, n_ctx, n_batch, n_parallel."""

    def __init__(self, path: str | Path, **options: Any) -> None:
        from piqa_tui.core.scoring.process import ProcessBackend

        self.path = Path(path).expanduser()
        self.options = options
        self.process = ProcessBackend(WRITER, {"path": str(self.path), **options})
        self._sha256: str | None = None

    def load(self) -> None:
        check_model_file(self.path, on_cpu=not self.options.get("n_gpu_layers"))
        self.process.load()

    def generate(
        self,
        request: GenerationRequest,
        on_token: TokenSink | None = None,
        cancel: threading.Event | None = None,
    ) -> GenerationResult:
        if request.schema is not None:
            check_schema(request.schema)
        sink = on_token or _ignore
        return self.process.stream("stream_generate", (request,), lambda piece: sink(str(piece)), cancel)

    def generate_many(
        self,
        requests: Sequence[GenerationRequest],
        on_result: ResultSink | None = None,
        cancel: threading.Event | None = None,
    ) -> list[GenerationResult]:
        for request in requests:
            if request.schema is not None:
                check_schema(request.schema)

        def arrived(payload: Any) -> None:
            if on_result is not None:
                on_result(*payload)

        return self.process.stream("stream_generate_many", (list(requests),), arrived, cancel)

    def source(self) -> ModelSource:
        """The file's name and SHA-256 (read once per backend: a few seconds for gigabytes)."""
        if self._sha256 is None:
            check_model_file(self.path, on_cpu=False)
            digest = hashlib.sha256()
            with self.path.open("rb") as f:
                while block := f.read(_HASH_BLOCK):
                    digest.update(block)
            self._sha256 = digest.hexdigest()
        return ModelSource(self.path.name, sha256=self._sha256, backend=LocalWriterKind.name)

    def describe(self) -> dict[str, object]:
        return self.process.describe()

    def close(self) -> None:
        self.process.close()


def _ignore(_piece: str) -> None:
    """No one listens to the tokens."""


class LocalWriterKind:
    """The local GGUF model's generation backend kind: chosen unless ``--server`` is given."""

    name = "local"
    options = (
        BackendOption("--model", "the GGUF model file that writes (an instruction-tuned one)", metavar="FILE.gguf"),
        BackendOption(
            "--n-gpu-layers",
            "layers offloaded to the GPU: 0 = CPU only, -1 = all (default 0)",
            metavar="N",
            number=True,
        ),
        BackendOption(
            "--parallel",
            "requests written at once as parallel sequences of one context (default 8)",
            metavar="N",
            number=True,
            at_least=1,
        ),
        BackendOption(
            "--n-ctx",
            "the context's tokens, shared by the parallel sequences (default 4096)",
            metavar="N",
            number=True,
            at_least=256,
        ),
    )

    def chosen(self, values: Mapping[str, object]) -> bool:
        return values.get("model") is not None

    def open(self, values: Mapping[str, object]) -> LocalGeneration:
        model = values.get("model")
        if not isinstance(model, str) or not model:
            raise ModelError(
                "no model to write with; pass --model FILE.gguf (an instruction-tuned GGUF) or --server URL"
            )
        options: dict[str, Any] = {}
        for dest, name in (("n_gpu_layers", "n_gpu_layers"), ("parallel", "n_parallel"), ("n_ctx", "n_ctx")):
            if isinstance(values.get(dest), int):
                options[name] = values[dest]
        path = check_model_file(model, on_cpu=not options.get("n_gpu_layers"))
        return LocalGeneration(path, **options)
