"""User configuration: one TOML file, read into one typed ``Config`` and checked once, here.

Example ``~/.config/piqa-tui/config.toml``::

    annotator = "amina"
    bidi = "app"          # auto | app | terminal | off
    theme = "piqa-dark"
    width_policy = "auto"     # auto | wcwidth | codepoint | cluster1 | cluster2
    max_differences = 2       # words solutions may differ by (validate's default)
    direction = "auto"    # auto | rtl | ltr: paragraph direction in every dataset

    [directions]          # per dataset (file name), per column of one, per column everywhere
    "darija-algerian.tsv" = "rtl"
    "darija-algerian.tsv:english_translation" = "ltr"
    "*:msa_translation" = "rtl"

    [keys]                # action id = key(s), comma separated
    vote_1 = "1"
    next_item = "j,down"

    [templates.plain]     # scoring templates: the keys of a template file (docs/scoring.md)
    context = "{goal}"

The TUI scores with ``model`` (a GGUF file; else $PIQA_TUI_MODEL, else the
packaged Gemma 3 270M when it is installed), ``n_gpu_layers`` of it offloaded
(0 = CPU only, -1 = all), its weights repacked by llama.cpp per ``repack``
(auto | on | off; auto is off on CPUs with AMX, where llama.cpp's AMX kernels
crash); a ``[server]`` table (``url``, ``model``, ``concurrency``) scores
through an OpenAI-compatible server instead (docs/scoring.md), and ``backend``
names any registered scoring backend, whose own table (its name is the
backend's ``table``) is checked by the backend (``core/scoring/backends/``); items whose
best solution beats the runner-up by less than ``low_margin`` nats (default
1.0) make the low-margin queue. ``license`` (a Hub licence identifier such as
"cc-by-4.0") goes into the dataset cards ``piqa-tui card`` writes. ``sync_every_minutes``
(default 0: off) has the TUI sync with the team through the dataset's git repository that often.
``writer_model`` (a GGUF file; else $PIQA_TUI_WRITER_MODEL) or ``writer_server`` (an OpenAI-compatible
server's URL) is the model the TUI's suggestion keys write with (docs/generation.md).
``draft`` and ``translate`` reject near copies (docs/generation.md, "Repetition control"): lexically at
``repetition_threshold`` (3-gram Jaccard, default 0.8) and, unless ``repetition_semantic = false``, in meaning
with ``repetition_model`` (a name ``dedup --model`` takes; default the best one on this machine) at
``repetition_semantic_threshold`` (cosine; default the model's own); the commands' options win.

Every value is checked when the file is read: a wrong type, a negative
number, an unknown setting name or an unknown ``[keys]`` action id is one
line naming the key and what it should be, and nothing starts half-configured.
The config is read only when it is a regular file (a FIFO or ``/dev/zero``
would hang or fill memory). Callers that know the key map's action ids (the
TUI's launcher) pass them in, so this module imports nothing of the TUI.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from piqa_tui.core.dataset.input_file import read_input
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.scoring.backend import Repack, ServerChoice
from piqa_tui.core.scoring.backends.kind import SCORING_BACKENDS
from piqa_tui.core.setting_values import SettingError, invalid_setting, setting_text, setting_whole
from piqa_tui.core.text.bidi_mode import BidiMode
from piqa_tui.core.text.direction import Direction, Directions
from piqa_tui.core.text.graphemes import WIDTH_MODES, WidthMode, WidthPolicy
from piqa_tui.settings.locations import config_path

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


class ConfigError(PiqaError):
    """A config file that cannot be read, or a value in it of the wrong kind."""


@dataclass(frozen=True)
class Config:
    """Every setting, as the type its consumers use: they never parse a value again."""

    annotator: str | None = None
    bidi: BidiMode = BidiMode.AUTO
    theme: str = "piqa-dark"
    width_policy: WidthPolicy | None = None  # None (auto): ask the terminal how wide it draws Indic syllables
    max_differences: int = 2
    direction: Direction = Direction.AUTO  # paragraph direction: auto (detected per paragraph), rtl or ltr
    directions: dict[str, Direction] = field(default_factory=dict)  # "FILE", "FILE:COLUMN" or "*:COLUMN"
    keys: dict[str, str] = field(default_factory=dict)
    templates: dict[str, dict[str, object]] = field(default_factory=dict)
    model: Path | None = None  # GGUF file the TUI scores with (``~`` expanded)
    n_gpu_layers: int = 0
    repack: Repack = Repack.AUTO  # llama.cpp weight repacking: auto is off on AMX CPUs
    server: ServerChoice | None = None  # [server] url, model, concurrency: score through it
    backend: str | None = None  # the registered scoring backend to use; None: [server] when given, else the local
    backends: dict[str, object] = field(default_factory=dict)  # other registered backends' tables, checked
    low_margin: float = 1.0  # nats: below this the model "barely prefers" a solution
    license: str | None = None  # the Hub licence identifier a dataset card states (``card --license`` wins)
    sync_every_minutes: int = 0  # the TUI syncs with the team this often (0: only by key; docs/workspace.md)
    writer_model: Path | None = None  # the GGUF model the TUI's suggestions are written with (docs/generation.md)
    writer_server: str | None = None  # ... or an OpenAI-compatible server's URL (wins over writer_model)
    repetition_threshold: float = 0.8  # draft/translate: a draft this alike (3-gram Jaccard) a seen item is rejected
    repetition_semantic: bool = True  # ... and one alike in meaning (an embedding model's cosine)
    repetition_model: str | None = None  # the embedding model for that (None: the best on this machine)
    repetition_semantic_threshold: float | None = None  # its cosine (None: the model's own)


def load_config(
    path: Path | None = None,
    *,
    action_ids: Collection[str] | None = None,
    theme_names: Collection[str] | None = None,
) -> Config:
    """The config file's settings, every one checked; a missing file gives the defaults.

    ``action_ids`` and ``theme_names``: the key map's action ids and the
    registered themes, when the caller knows them; then a ``[keys]`` entry for
    any other id, or any other ``theme``, is an error too.
    """
    path = path or config_path()
    data = _read_toml(path)
    where = f"config {path}"
    names = setting_names()
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ConfigError(f"{where}: unknown setting '{unknown[0]}'; the settings are: {', '.join(names)}")
    values = {name: _CHECKS[name](where, name, value) for name, value in data.items() if name in _CHECKS}
    tables = {name: value for name, value in data.items() if name not in _CHECKS}  # registered backends' own
    if tables:
        values["backends"] = {name: _backend_table(name)(where, name, value) for name, value in tables.items()}
    if action_ids is not None:
        _check_action_ids(where, values.get("keys", {}), action_ids)
    if theme_names is not None and values.get("theme", Config.theme) not in theme_names:
        raise _fail(where, "theme", values["theme"], "one of " + ", ".join(theme_names))
    return Config(**values)


def setting_names() -> list[str]:
    """Every top-level name a config file may hold: the ``Config`` fields (all but ``backends``, which holds
    the next ones) and the table of each registered scoring backend (``core/scoring/backends/``)."""
    own = [f.name for f in fields(Config) if f.name != "backends"]
    return [*own, *(k.table for k in SCORING_BACKENDS if k.table is not None and k.table not in own)]


def _read_toml(path: Path) -> dict[str, object]:
    if not os.path.lexists(path):
        return {}
    try:
        text = read_input(path, "config file").decode("utf-8-sig")  # a BOM (Windows editors) is no statement
        return tomllib.loads(text)
    except PiqaError as exc:
        raise ConfigError(str(exc)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a valid TOML config file ({exc}); fix or remove it") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(f"{path}: not a valid config file (nested too deeply); fix or remove it") from None


def _fail(where: str, name: str, value: object, should: str) -> ConfigError:
    return ConfigError(f"{where}: {invalid_setting(name, value, should)}")


def _text(where: str, name: str, value: object) -> str:
    return _in_file(where, lambda: setting_text(name, value))


_T = TypeVar("_T")


def _in_file(where: str, check: Callable[[], _T]) -> _T:
    """``check()``, its ``SettingError`` said as the config file's (``where``) one line."""
    try:
        return check()
    except SettingError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _one_of(options: Collection[str]) -> str:
    return "one of " + ", ".join(f'"{o}"' for o in options)


_E = TypeVar("_E", bound=StrEnum)


def _choice(kind: type[_E]) -> Callable[[str, str, object], _E]:
    """A check that turns one of ``kind``'s values into its member."""

    def check(where: str, name: str, value: object) -> _E:
        values = [member.value for member in kind]
        if not isinstance(value, str) or value not in values:
            raise _fail(where, name, value, _one_of(values))
        return kind(value)

    return check


_WIDTH_MODES: dict[str, WidthMode] = {mode: mode for mode in WIDTH_MODES}


def _width_policy(where: str, name: str, value: object) -> WidthPolicy | None:
    """None for ``auto`` (the terminal is asked when the TUI starts), else the policy of that mode."""
    if value == "auto":
        return None
    if not isinstance(value, str) or value not in _WIDTH_MODES:
        raise _fail(where, name, value, _one_of(("auto", *WIDTH_MODES)))
    return WidthPolicy(_WIDTH_MODES[value])


def _path(where: str, name: str, value: object) -> Path:
    return Path(_text(where, name, value)).expanduser()


def _flag(where: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, name, value, "true or false")
    return value


def _share(where: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise _fail(where, name, value, "a number above 0 and at most 1")
    return float(value)


def _whole(minimum: int) -> Callable[[str, str, object], int]:
    def check(where: str, name: str, value: object) -> int:
        return _in_file(where, lambda: setting_whole(name, value, minimum))

    return check


def _positive(where: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise _fail(where, name, value, "a positive number (nats)")
    return float(value)


def _keys(where: str, name: str, value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _fail(where, name, value, 'a [keys] table of action id = "key,key"')
    for action, keys in value.items():
        if not isinstance(keys, str) or not keys.strip() or _CONTROL.search(keys):
            raise _fail(where, f"[keys] {action}", keys, 'keys as a string, e.g. "j,down"')
    return dict(value)


def _templates(where: str, name: str, value: object) -> dict[str, dict[str, object]]:
    from piqa_tui.core.scoring.templates import templates_from_table

    if not isinstance(value, dict):
        raise _fail(where, name, value, "[templates.NAME] tables with a context")
    for template, spec in value.items():
        if not isinstance(spec, dict):
            raise _fail(where, f"templates.{template}", spec, 'a table: context = "..." (and continuation)')
        try:
            # Every key a template file takes, and its placeholders, checked now rather than halfway through a run.
            templates_from_table(template, spec, f"[templates.{template}]")
        except PiqaError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return {t: dict(spec) for t, spec in value.items()}


def _backend_table(table: str) -> Callable[[str, str, object], object]:
    """The check of a registered scoring backend's config table (``[server]``): the backend's own."""

    def check(where: str, name: str, value: object) -> object:
        kind = next(k for k in SCORING_BACKENDS if k.table == table)
        return _in_file(where, lambda: kind.check_table(value))

    return check


def _backend(where: str, name: str, value: object) -> str:
    """A registered scoring backend's name."""
    names = SCORING_BACKENDS.names()
    if not isinstance(value, str) or value not in names:
        raise _fail(where, name, value, _one_of(names))
    return value


def _directions(where: str, name: str, value: object) -> dict[str, Direction]:
    if not isinstance(value, dict):
        raise _fail(where, name, value, 'a [directions] table of "FILE", "FILE:COLUMN" or "*:COLUMN" = "auto|rtl|ltr"')
    direction = _choice(Direction)
    return {key: direction(where, f'directions."{key}"', setting) for key, setting in value.items()}


def configured_directions(config: Config, dataset_name: str) -> Directions:
    """The directions the config file sets for the dataset file named ``dataset_name`` (values checked on load).

    A column set for this file wins over the same column set for every file
    (``*:COLUMN``); a column's direction wins over the dataset's.
    """
    table = config.directions
    directions = Directions(table.get(dataset_name, config.direction))
    for prefix in ("*:", f"{dataset_name}:"):  # the file's own columns last, so they win
        for key, value in table.items():
            if key.startswith(prefix) and len(key) > len(prefix):
                directions = directions.with_column(key[len(prefix) :], value)
    return directions


def _check_action_ids(where: str, keys: dict[str, str], action_ids: Collection[str]) -> None:
    unknown = sorted(set(keys) - set(action_ids))
    if unknown:
        raise ConfigError(f"{where}: [keys] {unknown[0]} is not an action; the help screen (?) lists the action ids")


_CHECKS: dict[str, Callable[[str, str, object], Any]] = {  # Any: each setting has its own type
    "annotator": _text,
    "bidi": _choice(BidiMode),
    "theme": _text,
    "width_policy": _width_policy,
    "max_differences": _whole(0),
    "direction": _choice(Direction),
    "directions": _directions,
    "keys": _keys,
    "templates": _templates,
    "model": _path,
    "n_gpu_layers": _whole(-1),
    "repack": _choice(Repack),
    "server": _backend_table("server"),
    "backend": _backend,
    "low_margin": _positive,
    "license": _text,
    "sync_every_minutes": _whole(0),
    "writer_model": _path,
    "writer_server": _text,
    "repetition_threshold": _share,
    "repetition_semantic": _flag,
    "repetition_model": _text,
    "repetition_semantic_threshold": _share,
}
