"""Where piqa-tui's files live: the user's config and data folders, and what ships inside the package.

The themes and samples travel inside the wheel as the data packages
``piqa_tui.themes`` and ``piqa_tui.samples`` (mapped from the repository's
top-level ``themes/`` and ``samples/`` at build time), so they are found through
``importlib.resources`` wherever the package is installed, never through paths
relative to a source tree.
"""

from __future__ import annotations

import os
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

APP_NAME = "piqa-tui"
DEFAULT_SAMPLE = "darija-algerian.tsv"


def config_dir() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME))


def config_path() -> Path:
    """The config file: $PIQA_TUI_CONFIG, else config.toml in the platform's config folder."""
    override = os.environ.get("PIQA_TUI_CONFIG")
    return Path(override) if override else config_dir() / "config.toml"


def user_themes_dir() -> Path:
    return config_dir() / "themes"


def user_templates_dir() -> Path:
    """The user's prompt templates: ``*.toml`` files in ``templates/`` beside the config file."""
    return config_path().parent / "templates"


def bundled_themes() -> list[Traversable]:
    """The theme files shipped in the package, by name."""
    folder = resources.files("piqa_tui.themes")
    return sorted((f for f in folder.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)


def bundled_sample(name: str = DEFAULT_SAMPLE) -> Path:
    """A sample dataset shipped in the package, as a real file path (the wheel is installed unzipped)."""
    return Path(str(resources.files("piqa_tui.samples").joinpath(name)))


def is_bundled(path: Path) -> bool:
    """Whether ``path`` is one of the shipped samples (its workspace then goes to the user data folder)."""
    try:
        return path.resolve().parent == bundled_sample().resolve().parent
    except OSError:
        return False
