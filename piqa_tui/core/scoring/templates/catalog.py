"""Where templates come from: shipped in the package, the user's folder, the config file's tables; the culture protocols.

The shipped files are read with ``importlib.resources`` from the data package
``piqa_tui.prompt_templates``; the user's folder and the config file's tables
are handed in by the caller (core never reads settings).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from piqa_tui.core.errors import TemplateError
from piqa_tui.core.scoring.templates.files import folder_templates, parse_template_text, templates_from_table
from piqa_tui.core.scoring.templates.template import DEFAULT_TEMPLATE, Template

# The culture protocols (lm-evaluation-harness's arab_culture and arab_culture_completion tasks).
PROTOCOLS = ("mcq", "completion")
CONTEXTS = ("none", "region", "region+country")
LANGUAGES = ("ar", "en")
DEFAULT_LANGUAGE = "ar"


@functools.cache
def shipped_templates() -> dict[str, Template]:
    """The templates shipped in the package (``prompt_templates/*.toml``), by name."""
    folder = _shipped_folder()
    found: dict[str, Template] = {}
    for entry in sorted((f for f in folder.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name):
        for template in parse_template_text(
            entry.read_text(encoding="utf-8"), f"(shipped) {entry.name}", entry.name.removesuffix(".toml")
        ):
            found[template.name] = template
    return found


def _shipped_folder() -> Traversable:
    try:
        return resources.files("piqa_tui.prompt_templates")
    except ModuleNotFoundError:
        # An editable install made before prompt_templates/ existed does not map the data package
        # (until `pip install -e .` is run again): read the checkout's folder instead.
        return Path(__file__).resolve().parents[4] / "prompt_templates"


def template_catalog(
    user_folder: Path | None = None,
    config_tables: Mapping[str, Mapping[str, object]] | None = None,
    config_source: str = "config",
) -> dict[str, Template]:
    """Every template by name: shipped, then the user's files, then the config file's tables (later wins)."""
    catalog = dict(shipped_templates())
    if user_folder is not None:
        catalog.update(folder_templates(user_folder))
    for name, table in (config_tables or {}).items():
        for template in templates_from_table(name, table, f"{config_source} [templates.{name}]"):
            catalog[template.name] = template
    return catalog


def get_template(
    name: str,
    user_templates: Mapping[str, Mapping[str, object]] | None = None,
    catalog: Mapping[str, Template] | None = None,
) -> Template:
    """The template called ``name``: from ``user_templates`` (config tables), else ``catalog`` (default: shipped)."""
    if user_templates and name in user_templates:
        for template in templates_from_table(name, user_templates[name], f"config [templates.{name}]"):
            if template.name == name:
                return template
    known = shipped_templates() if catalog is None else catalog
    if name in known:
        return known[name]
    names = ", ".join(sorted({*known, *(user_templates or {})}))
    raise TemplateError(f"unknown template {name!r}: choose one of {names} (piqa-tui templates lists them)")


def protocol_template(
    protocol: str,
    context: str = "none",
    language: str = DEFAULT_LANGUAGE,
    catalog: Mapping[str, Template] | None = None,
) -> Template:
    """The template of one culture protocol: ``mcq`` or ``completion`` × location context × prompt language.

    These equal lm-evaluation-harness's ``arab_culture`` (letters) and
    ``arab_culture_completion`` (option texts) tasks with COUNTRY/REGION/ARABIC
    set as ``context`` and ``language`` say; a user file of the same name wins.
    """
    for value, allowed, what in (
        (protocol, PROTOCOLS, "protocol"),
        (context, CONTEXTS, "context"),
        (language, LANGUAGES, "language"),
    ):
        if value not in allowed:
            raise TemplateError(f"unknown {what} {value!r}: choose one of {', '.join(allowed)}")
    return get_template(protocol_template_name(protocol, context, language), catalog=catalog)


def protocol_template_name(protocol: str, context: str, language: str) -> str:
    return f"arab-culture-{protocol}-{language}-{context}"


def chosen_templates(
    catalog: Mapping[str, Template],
    name: str | None,
    protocols: Sequence[str] | None,
    contexts: Sequence[str] | None,
    languages: Sequence[str] | None,
) -> list[Template]:
    """The templates a command was asked for: one by ``name`` (default: piqa), or every protocol × context ×
    language named (the culture benchmark's grid), protocol after protocol."""
    if protocols is None:
        if contexts is not None or languages is not None:
            raise TemplateError(
                "--context and --language choose among the culture protocols; add --protocol mcq or completion"
            )
        return [get_template(name or DEFAULT_TEMPLATE, catalog=catalog)]
    if name is not None:
        raise TemplateError("give either --template or --protocol, not both")
    return [
        protocol_template(protocol, context, language, catalog=catalog)
        for protocol in protocols
        for context in (contexts or ("none",))
        for language in (languages or (DEFAULT_LANGUAGE,))
    ]
