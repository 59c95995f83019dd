"""The themes piqa-tui ships, as data files in ``themes/``: dark, light and high contrast.

Widgets style themselves only with the standard theme colours ($primary,
$accent, $warning, $error, $success, $foreground, ...), so any Textual theme
works too (``--theme textual-dark``, or the palette's "Theme" command).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from textual.theme import BUILTIN_THEMES, Theme

from piqa_tui.core.errors import PiqaError

THEMES_DIR = Path(__file__).resolve().parents[2] / "themes"


def _user_themes_dir() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir("piqa-tui")) / "themes"


def load_theme_file(path: Path) -> Theme:
    """A Textual theme from a TOML file of theme variables (see themes/*.toml)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return Theme(**{"name": path.stem, **data})
    except (tomllib.TOMLDecodeError, TypeError, ValueError) as exc:
        raise PiqaError(f"{path}: not a valid theme file ({exc}); compare it with themes/piqa-dark.toml") from None


def _load_themes() -> dict[str, Theme]:
    """The bundled themes (themes/), then the user's own (config folder/themes/*.toml), which may override them."""
    found: dict[str, Theme] = {}
    for folder in (THEMES_DIR, _user_themes_dir()):
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
            theme = load_theme_file(path)
            found[theme.name] = theme
    return found


THEMES: dict[str, Theme] = _load_themes()
PIQA_DARK = THEMES["piqa-dark"]
ALIASES = {"dark": "piqa-dark", "light": "piqa-light", "high-contrast": "piqa-high-contrast", "hc": "piqa-high-contrast"}


def theme_name(name: str | None) -> str:
    """The registered name for ``name`` (an alias, one of ours or a Textual built-in); PiqaError if unknown."""
    if not name:
        return PIQA_DARK.name
    name = ALIASES.get(name, name)
    if name in THEMES or name in BUILTIN_THEMES:
        return name
    known = ", ".join([*THEMES, *ALIASES, *sorted(BUILTIN_THEMES)])
    raise PiqaError(f"unknown theme '{name}'; choose one of: {known}")
