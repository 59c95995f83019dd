"""The themes piqa-tui ships, as data files in ``themes/`` (inside the wheel): dark, light and high contrast.

Widgets style themselves only with the standard theme colours ($primary,
$accent, $warning, $error, $success, $foreground, ...), so any Textual theme
works too (``--theme textual-dark``, or the palette's "Theme" command).
"""

from __future__ import annotations

import tomllib
from importlib.abc import Traversable
from pathlib import Path

from textual.theme import BUILTIN_THEMES, Theme

from piqa_tui.core.dataset.input_file import check_regular_file
from piqa_tui.core.errors import PiqaError
from piqa_tui.settings.locations import bundled_themes, user_themes_dir


def load_theme_file(path: Traversable) -> Theme:
    """A Textual theme from a TOML file of theme variables (see themes/*.toml)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return Theme(**{"name": path.name.removesuffix(".toml"), **data})
    except (tomllib.TOMLDecodeError, TypeError, ValueError) as exc:
        raise PiqaError(f"{path}: not a valid theme file ({exc}); compare it with themes/piqa-dark.toml") from None


def _load_themes() -> dict[str, Theme]:
    """The bundled themes (themes/), then the user's own (config folder/themes/*.toml), which may override them."""
    found: dict[str, Theme] = {}
    user = user_themes_dir()
    user_files = sorted(user.glob("*.toml")) if user.is_dir() else []
    for path in [*bundled_themes(), *user_files]:
        if isinstance(path, Path):  # a user's file: a FIFO named *.toml must not hang start-up
            check_regular_file(path, "theme file")
        theme = load_theme_file(path)
        found[theme.name] = theme
    return found


THEMES: dict[str, Theme] = _load_themes()
PIQA_DARK = THEMES["piqa-dark"]
ALIASES = {
    "dark": "piqa-dark",
    "light": "piqa-light",
    "high-contrast": "piqa-high-contrast",
    "hc": "piqa-high-contrast",
}


def known_theme_names() -> list[str]:
    """Every name a config or --theme may give: ours, their aliases and Textual's built-ins."""
    return [*THEMES, *ALIASES, *sorted(BUILTIN_THEMES)]


def theme_name(name: str | None) -> str:
    """The registered name for ``name`` (an alias, one of ours or a Textual built-in); PiqaError if unknown."""
    if not name:
        return PIQA_DARK.name
    name = ALIASES.get(name, name)
    if name in THEMES or name in BUILTIN_THEMES:
        return name
    known = ", ".join(known_theme_names())
    raise PiqaError(f"unknown theme '{name}'; choose one of: {known}")
