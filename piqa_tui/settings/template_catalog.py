"""The prompt templates this user can score with: shipped, their own files, and their config file's tables.

Core parses templates from texts and folders it is handed; this module hands
it the user's folder (``templates/`` beside the config file) and the config
file's ``[templates.NAME]`` tables.
"""

from __future__ import annotations

from piqa_tui.core.scoring.templates import Template, template_catalog
from piqa_tui.settings.config import Config, load_config
from piqa_tui.settings.locations import config_path, user_templates_dir


def available_templates(config: Config | None = None) -> dict[str, Template]:
    """Every template by name (a user file or config table of a shipped name replaces it).

    TemplateError (one line naming the file) when a user template file is bad.
    """
    config = load_config() if config is None else config
    return template_catalog(user_templates_dir(), config.templates, config_source=str(config_path()))
