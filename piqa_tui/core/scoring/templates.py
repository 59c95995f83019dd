"""Prompt templates, as callers use them: the ``Template`` type and where templates come from.

``Template`` (``prompt_template``) renders an item; the templates themselves
are TOML files (``template_files``): shipped in the package, the user's own
folder, the config file's tables, and the Arab-culture protocols
(``protocol_template``). This module gathers both, so callers import one name.
"""

from __future__ import annotations

from piqa_tui.core.scoring.prompt_template import (
    CONTEXT_FIELDS,
    CONTINUATION_FIELDS,
    DEFAULT_TEMPLATE,
    LETTERS,
    MAX_REQUEST_CHARS,
    MetaRule,
    Template,
)
from piqa_tui.core.scoring.template_files import (
    CONTEXTS,
    DEFAULT_LANGUAGE,
    LANGUAGES,
    PROTOCOLS,
    get_template,
    protocol_template,
    shipped_templates,
    template_catalog,
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
    "get_template",
    "protocol_template",
    "shipped_templates",
    "template_catalog",
]


def __getattr__(name: str) -> object:
    """``BUILTIN_TEMPLATES``: the shipped templates by name, read from their files on first use (not at import)."""
    if name == "BUILTIN_TEMPLATES":
        return shipped_templates()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
