"""User configuration: one TOML file under the platform's config folder.

Example ``~/.config/piqa-tui/config.toml``::

    annotator = "amina"
    bidi = "app"          # auto | app | terminal | off
    theme = "piqa-dark"
    width_policy = "auto"     # auto | wcwidth | codepoint | cluster1 | cluster2

    [keys]                # action id = key(s), comma separated
    vote_1 = "1"
    next_item = "j,down"

The TUI scores with ``model`` (a GGUF file; else $PIQA_TUI_MODEL, else the
packaged Gemma 3 270M when it is installed), ``n_gpu_layers`` of it offloaded,
its weights repacked by llama.cpp per ``repack`` (auto | on | off; auto is off
on CPUs with AMX, where llama.cpp's AMX kernels crash);
a ``[server]`` table (``url``, ``model``, ``concurrency``) scores through an
OpenAI-compatible server instead (docs/scoring.md); items whose best solution beats the runner-up by less than ``low_margin`` nats
(default 1.0) make the low-margin queue.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from piqa_tui.core.errors import PiqaError
from piqa_tui.settings.locations import config_path


@dataclass
class Config:
    annotator: str | None = None
    bidi: str = "auto"
    theme: str = "piqa-dark"
    width_policy: str = "auto"  # auto = ask the terminal how wide it draws Indic syllables
    max_differences: int = 2
    keys: dict[str, str] = field(default_factory=dict)
    templates: dict[str, dict[str, str]] = field(default_factory=dict)
    model: str | None = None  # GGUF file the TUI scores with
    n_gpu_layers: int = 0
    repack: str = "auto"  # llama.cpp weight repacking: auto (off on AMX CPUs) | on | off
    server: dict[str, object] = field(default_factory=dict)  # [server] url, model, concurrency
    low_margin: float = 1.0  # nats: below this the model "barely prefers" a solution


def load_config(path: Path | None = None) -> Config:
    """The config file's settings; a missing file gives the defaults, a broken one a clear error."""
    path = path or config_path()
    if not path.exists():
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PiqaError(f"{path}: not a valid TOML config file ({exc}); fix or remove it") from None
    known = {k: v for k, v in data.items() if k in Config.__dataclass_fields__}
    return Config(**known)
