"""The backends that score, one module each, registered here (see ``kind.py``): ``local`` (a GGUF model run by
llama.cpp in its own process) and ``served`` (an OpenAI-compatible server); a project adds one with
``register_scoring_backend``.
"""

from __future__ import annotations

from piqa_tui.core.scoring.backends.kind import register_scoring_backend
from piqa_tui.core.scoring.backends.local import LocalModel
from piqa_tui.core.scoring.backends.served import ServedModel

register_scoring_backend(LocalModel())
register_scoring_backend(ServedModel())
