"""Prompt templates as data: the TOML text of one template file, and a folder of such files.

A template file holds one template, named after the file (``mcq.toml`` is
``mcq``); a file whose ``context`` is a table of named variants holds one
template per variant, named ``FILE-VARIANT``. The keys (docs/scoring.md):

    description = "one line"          language = "ar"
    context = "..."  or  [context] VARIANT = "..."
    continuation = " {solution}"      letters = ["أ", "ب", "ج", "د"]
    option_line = "{letter}. {solution}"    option_separator = "\\n"    strip = false
    [meta.COLUMN]  values = {...}  default = "..."  keep_unknown = false

A user's file is read through the guarded reader (``core.dataset.input_file``),
so a FIFO or a link to ``/dev/zero`` among them is one line, never a hang or a
full memory.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

from piqa_tui.core.dataset.input_file import read_input
from piqa_tui.core.errors import InputError, TemplateError
from piqa_tui.core.scoring.templates.template import MetaRule, Template

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


def folder_templates(folder: Path) -> dict[str, Template]:
    """The templates in a folder's ``*.toml`` files (none when it does not exist), by name."""
    found: dict[str, Template] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.toml")):
        for template in parse_template_text(read_template_file(path), str(path), path.stem):
            found[template.name] = template
    return found


def read_template_file(path: Path) -> str:
    """The text of a template file; TemplateError (one line naming it) when it is no regular UTF-8 file."""
    try:
        data = read_input(path, "template file")
    except InputError as exc:
        raise TemplateError(f"{exc}, or remove it") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TemplateError(f"{path}: cannot read the template file ({exc}); fix or remove it") from None
