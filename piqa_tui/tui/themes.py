"""The themes piqa-tui ships, as data: dark, light and high contrast.

Widgets style themselves only with the standard theme colours ($primary,
$accent, $warning, $error, $success, $foreground, ...), so any Textual theme
works too (``--theme textual-dark``, or the palette's "Theme" command).
"""

from __future__ import annotations

from textual.theme import BUILTIN_THEMES, Theme

from piqa_tui.core.errors import PiqaError

PIQA_DARK = Theme(
    name="piqa-dark",
    primary="#4C9BE8",
    secondary="#2D5F8B",
    accent="#E5A443",
    warning="#E5C07B",
    error="#E06C75",
    success="#98C379",
    foreground="#DCDFE4",
    background="#1E2127",
    surface="#262A31",
    panel="#2F343D",
    dark=True,
)

PIQA_LIGHT = Theme(
    name="piqa-light",
    primary="#1F5FAD",
    secondary="#5E81AC",
    accent="#A65E00",
    warning="#9A6700",
    error="#B3261E",
    success="#1A7F37",
    foreground="#1F2328",
    background="#FAFAF7",
    surface="#F0F0EB",
    panel="#E3E3DC",
    dark=False,
)

# Pure black and white with saturated signal colours; no tints, no fades.
PIQA_HIGH_CONTRAST = Theme(
    name="piqa-high-contrast",
    primary="#FFFF00",
    secondary="#00FFFF",
    accent="#FFFF00",
    warning="#FFFF00",
    error="#FF5555",
    success="#00FF00",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#000000",
    boost="#FFFFFF",
    dark=True,
    luminosity_spread=0.0,
    text_alpha=1.0,
)

THEMES: dict[str, Theme] = {t.name: t for t in (PIQA_DARK, PIQA_LIGHT, PIQA_HIGH_CONTRAST)}
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
