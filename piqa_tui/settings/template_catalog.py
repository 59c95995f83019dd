"""The prompt templates this user can score with: shipped, their own files, and their config file's tables.

Core parses templates from texts and folders it is handed; this module hands
it the user's folder (``templates/`` beside the config file) and the config
file's ``[templates.NAME]`` tables.
"""

from __future__ import annotations

from collections.abc import Sequence

from piqa_tui.core.errors import TemplateError
from piqa_tui.core.scoring.templates import (
    DEFAULT_LANGUAGE,
    DEFAULT_TEMPLATE,
    Template,
    get_template,
    protocol_template,
    template_catalog,
)
from piqa_tui.settings.config import Config, load_config
from piqa_tui.settings.locations import config_path, user_templates_dir


def available_templates(config: Config | None = None) -> dict[str, Template]:
    """Every template by name (a user file or config table of a shipped name replaces it).

    TemplateError (one line naming the file) when a user template file is bad.
    """
    config = load_config() if config is None else config
    return template_catalog(user_templates_dir(), config.templates, config_source=str(config_path()))


def chosen_template(
    name: str | None, protocol: str | None, context: str | None, language: str | None, config: Config | None = None
) -> Template:
    """The template a command was asked for: by ``name``, or a culture protocol × context × language."""
    catalog = available_templates(config)
    if protocol is None:
        if context is not None or language is not None:
            raise TemplateError(
                "--context and --language choose among the culture protocols; add --protocol mcq or completion"
            )
        return get_template(name or DEFAULT_TEMPLATE, catalog=catalog)
    if name is not None:
        raise TemplateError("give either --template or --protocol, not both")
    return protocol_template(protocol, context or "none", language or DEFAULT_LANGUAGE, catalog=catalog)


def chosen_templates(
    name: str | None,
    protocols: Sequence[str] | None,
    contexts: Sequence[str] | None,
    languages: Sequence[str] | None,
    config: Config | None = None,
) -> list[Template]:
    """The templates a command was asked for: one by ``name``, or every protocol × context × language
    named (the culture benchmark's grid), protocol after protocol."""
    if protocols is None:
        return [
            chosen_template(
                name,
                None,
                None if contexts is None else contexts[0],
                None if languages is None else languages[0],
                config,
            )
        ]
    if name is not None:
        raise TemplateError("give either --template or --protocol, not both")
    catalog = available_templates(config)
    return [
        protocol_template(protocol, context, language, catalog=catalog)
        for protocol in protocols
        for context in (contexts or ("none",))
        for language in (languages or (DEFAULT_LANGUAGE,))
    ]
