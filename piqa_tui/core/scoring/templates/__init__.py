"""Prompt templates: how an item becomes the texts a model scores, and where the templates come from.

``template`` holds the ``Template`` class (checked when made, rendered per
item); ``files`` reads template TOML files and folders; ``catalog`` gathers the
shipped templates, the user's files and config tables, and the culture
protocols. Callers import the names below from this package.
"""

from __future__ import annotations

from piqa_tui.core.scoring.templates.catalog import (
    CONTEXTS,
    DEFAULT_LANGUAGE,
    LANGUAGES,
    PROTOCOLS,
    chosen_templates,
    get_template,
    protocol_template,
    shipped_templates,
    template_catalog,
)
from piqa_tui.core.scoring.templates.files import folder_templates, parse_template_text, templates_from_table
from piqa_tui.core.scoring.templates.template import (
    CONTEXT_FIELDS,
    CONTINUATION_FIELDS,
    DEFAULT_TEMPLATE,
    LETTERS,
    MAX_REQUEST_CHARS,
    MetaRule,
    Template,
)

__all__ = [
    "CONTEXTS",
    "CONTEXT_FIELDS",
    "CONTINUATION_FIELDS",
    "DEFAULT_LANGUAGE",
    "DEFAULT_TEMPLATE",
    "LANGUAGES",
    "LETTERS",
    "MAX_REQUEST_CHARS",
    "PROTOCOLS",
    "MetaRule",
    "Template",
    "chosen_templates",
    "folder_templates",
    "get_template",
    "parse_template_text",
    "protocol_template",
    "shipped_templates",
    "template_catalog",
    "templates_from_table",
]
