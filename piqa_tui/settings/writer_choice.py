"""Which model the TUI's suggestion keys write with: the config's ``writer_server`` (an OpenAI-compatible
server), else its ``writer_model`` (a GGUF file), else $PIQA_TUI_WRITER_MODEL.

The answer is the generation backends' option values (``--server``, ``--model``), so the TUI opens its writer
exactly as ``piqa-tui draft`` does (``core.generation.backends.kind.open_generation_backend``). No model is
packaged for writing: without one the keys say how to name one.
"""

from __future__ import annotations

import os

from piqa_tui.settings.config import Config, load_config

ENV_VAR = "PIQA_TUI_WRITER_MODEL"


def writer_values(config: Config | None = None) -> dict[str, object]:
    """The backend option values naming the writer (empty: none is configured)."""
    config = load_config() if config is None else config
    if config.writer_server:
        return {"server": config.writer_server}
    model = config.writer_model or os.environ.get(ENV_VAR)
    return {"model": str(model)} if model else {}
