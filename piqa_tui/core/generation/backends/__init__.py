"""The backends that generate text, one module each, registered here (see ``kind.py``): ``local`` (a GGUF model
run by llama.cpp in its own process) and ``served`` (an OpenAI-compatible server); a project adds one with
``register_generation_backend``."""

from __future__ import annotations

from piqa_tui.core.generation.backends.kind import register_generation_backend
from piqa_tui.core.generation.backends.local import LocalWriterKind
from piqa_tui.core.generation.backends.served import ServedWriterKind

register_generation_backend(LocalWriterKind())
register_generation_backend(ServedWriterKind())
