"""The served generation backend kind: any OpenAI-compatible ``/v1/chat/completions`` (``--server URL``,
``--server-model NAME``, ``--concurrency N``); the writing is ``core/generation/served_writer.py``."""

from __future__ import annotations

from collections.abc import Mapping

from piqa_tui.core.generation.served_writer import ServedWriter
from piqa_tui.core.scoring.backends.kind import BackendOption


class ServedWriterKind:
    """Chosen by ``--server``."""

    name = "served"
    options = (
        BackendOption("--server", "an OpenAI-compatible server that writes, e.g. http://127.0.0.1:8000", metavar="URL"),
        BackendOption(
            "--server-model", "the served model's name (default: the first the server lists)", metavar="NAME"
        ),
        BackendOption(
            "--concurrency", "requests sent to the server at once (default 4)", metavar="N", number=True, at_least=1
        ),
    )

    def chosen(self, values: Mapping[str, object]) -> bool:
        return values.get("server") is not None

    def open(self, values: Mapping[str, object]) -> ServedWriter:
        model = values.get("server_model")
        concurrency = values.get("concurrency")
        return ServedWriter(
            str(values["server"]),
            model if isinstance(model, str) else None,
            concurrency=concurrency if isinstance(concurrency, int) else 4,
        )
