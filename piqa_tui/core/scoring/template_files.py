"""Prompt templates as data: TOML files (shipped in the package, or the user's), and the culture protocols.

A template file holds one template, named after the file (``mcq.toml`` is
``mcq``); a file whose ``context`` is a table of named variants holds one
template per variant, named ``FILE-VARIANT``. The keys (docs/scoring.md):

    description = "one line"          language = "ar"
    context = "..."  or  [context] VARIANT = "..."
    continuation = " {solution}"      letters = ["أ", "ب", "ج", "د"]
    option_line = "{letter}. {solution}"    option_separator = "\\n"    strip = false
    [meta.COLUMN]  values = {...}  default = "..."  keep_unknown = false

The shipped files are read with ``importlib.resources`` from the data package
``piqa_tui.prompt_templates``; the user's folder and the config file's tables
are handed in by the caller (core never reads settings).
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from piqa_tui.core.errors import TemplateError
from piqa_tui.core.scoring.prompt_template import MetaRule, Template

TEMPLATE_KEYS = frozenset(
    {
        "description",
        "language",
        "context",
        "continuation",
        "letters",
        "option_line",
        "option_separator",
        "strip",
        "meta",
    }
)
META_KEYS = frozenset({"values", "default", "keep_unknown"})
_BAD_NAME = re.compile(r"[\s\x00-\x1f\x7f]")

# The culture protocols (lm-evaluation-harness's arab_culture and arab_culture_completion tasks).
PROTOCOLS = ("mcq", "completion")
CONTEXTS = ("none", "region", "region+country")
LANGUAGES = ("ar", "en")
DEFAULT_LANGUAGE = "ar"


# --------------------------------------------------------------------------- parsing


def parse_template_text(text: str, source: str, name: str) -> list[Template]:
    """The templates in one TOML file's ``text``; TemplateError naming ``source`` when it is not one."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TemplateError(f"{source}: not valid TOML ({exc}); fix the file") from None
    return templates_from_table(name, table, source)


def templates_from_table(name: str, table: Mapping[str, object], source: str) -> list[Template]:
    """The template(s) one table describes (a file, or a config file's ``[templates.NAME]``)."""
    if not isinstance(table, Mapping):
        raise TemplateError(f'{source}: template {name!r} is not a table; write context = "..." in it')
    if not name or _BAD_NAME.search(name):
        raise TemplateError(
            f"{source}: {name!r} is not a usable template name (no spaces or control characters); rename it"
        )
    unknown = sorted(set(table) - TEMPLATE_KEYS)
    if unknown:
        raise TemplateError(
            f"{source}: unknown key {unknown[0]!r} in template {name!r}; "
            f"a template has {', '.join(sorted(TEMPLATE_KEYS))}"
        )
    if "context" not in table:
        raise TemplateError(
            f"{source}: template {name!r} has no 'context'; add one, e.g. context = \"Question: {{goal}}\\nAnswer:\""
        )
    common = _common_parts(name, table, source)
    context = table["context"]
    variants = context.items() if isinstance(context, Mapping) else [(None, context)]
    templates = []
    for variant, text in variants:
        full = name if variant is None else f"{name}-{variant}"
        if _BAD_NAME.search(full):
            raise TemplateError(
                f"{source}: {full!r} is not a usable template name (no spaces or control characters); "
                "rename the variant"
            )
        try:
            templates.append(Template(full, text, **common))  # type: ignore[arg-type]
        except TemplateError as exc:
            raise TemplateError(f"{source}: {exc}") from None
    return templates


def _common_parts(name: str, table: Mapping[str, object], source: str) -> dict[str, object]:
    """The keyword arguments of ``Template`` that every variant of a file shares, checked."""
    parts: dict[str, object] = {"source": source}
    for key, default in (
        ("continuation", " {solution}"),
        ("option_line", None),
        ("option_separator", None),
        ("description", ""),
        ("language", ""),
    ):
        value = table.get(key, default)
        if value is None:
            continue
        if not isinstance(value, str):
            raise TemplateError(f"{source}: {key} of template {name!r} must be text, not {type(value).__name__}")
        parts[key] = value
    if "strip" in table:
        if not isinstance(table["strip"], bool):
            raise TemplateError(f"{source}: strip of template {name!r} must be true or false")
        parts["strip"] = table["strip"]
    if "letters" in table:
        letters = table["letters"]
        if not isinstance(letters, list) or not letters or not all(isinstance(x, str) and x for x in letters):
            raise TemplateError(
                f'{source}: letters of template {name!r} must be a list of texts, e.g. letters = ["أ", "ب", "ج"]'
            )
        parts["letters"] = tuple(letters)
    meta = table.get("meta", {})
    if not isinstance(meta, Mapping):
        raise TemplateError(f"{source}: meta of template {name!r} must be tables [meta.COLUMN]")
    parts["meta"] = tuple(_meta_rule(name, column, rule, source) for column, rule in meta.items())
    return parts


def _meta_rule(name: str, column: str, rule: object, source: str) -> MetaRule:
    where = f"{source}: [meta.{column}] of template {name!r}"
    if not isinstance(rule, Mapping):
        raise TemplateError(f"{where} must be a table with values, default or keep_unknown")
    unknown = sorted(set(rule) - META_KEYS)
    if unknown:
        raise TemplateError(f"{where}: unknown key {unknown[0]!r}; use {', '.join(sorted(META_KEYS))}")
    values = rule.get("values", {})
    if not isinstance(values, Mapping) or not all(isinstance(v, str) for v in values.values()):
        raise TemplateError(f'{where}: values must be a table of text, e.g. values = {{ Egypt = "مصر" }}')
    default = rule.get("default")
    if default is not None and not isinstance(default, str):
        raise TemplateError(f"{where}: default must be text")
    keep = rule.get("keep_unknown", False)
    if not isinstance(keep, bool):
        raise TemplateError(f"{where}: keep_unknown must be true or false")
    return MetaRule(column, tuple(values.items()), default, keep)


# --------------------------------------------------------------------------- where templates come from


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
        return Path(__file__).resolve().parents[3] / "prompt_templates"


def folder_templates(folder: Path) -> dict[str, Template]:
    """The templates in a folder's ``*.toml`` files (none when it does not exist), by name."""
    found: dict[str, Template] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.toml")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TemplateError(f"{path}: cannot read the template file ({exc}); fix or remove it") from None
        for template in parse_template_text(text, str(path), path.stem):
            found[template.name] = template
    return found


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
