"""A release's lm-evaluation-harness tasks: one YAML per scoring template, rendering what piqa-tui scores.

Each template becomes ``tasks/NAME.yaml`` (a ``multiple_choice`` task, zero-shot): ``doc_to_text`` is the
template's context, ``target_delimiter`` the whitespace that opens its continuation, ``doc_to_choice`` the rest
of the continuation per solution and ``doc_to_target`` the decided label, all as Jinja over the documents that
``tasks/release_docs.py`` (``core.release.harness_docs``, copied verbatim) reads from the release's Parquet
files. So the harness's context is piqa-tui's context and its ``target_delimiter + choice`` piqa-tui's
continuation, character for character; ``acc``, ``acc_norm`` (characters of the choice) and ``acc_bytes``
are the card's figures. Every task also carries the tag the release's name gives (``--tasks TAG`` runs all).

A template is written only when it renders every labelled item (its metadata columns are in the release and
its value tables translate them, it has letters enough): a task that fails halfway is worse than none.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from pathlib import Path

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import TemplateError
from piqa_tui.core.release.folder import TASKS
from piqa_tui.core.scoring.templates import Template

DOCS_MODULE = "release_docs.py"
UNDEFINED = "no_value_for_this_item"  # an undefined Jinja name: rendering it fails (StrictUndefined)


def task_name(release: str, template: str) -> str:
    """``RELEASE_TEMPLATE`` in letters, digits and ``_`` (the harness's own task names stay free)."""
    return re.sub(r"\W+", "_", f"{release}_{template}", flags=re.ASCII).strip("_").lower()


def tag_name(release: str) -> str:
    return task_name(release, "all")


def applicable(template: Template, items: Sequence[Item], columns: Sequence[str]) -> bool:
    """Whether ``template`` renders every labelled item with the release's columns."""
    if any(column not in columns for column in template.meta_columns()):
        return False
    try:
        contexts = [template.request(item).context for item in items if item.label is not None]
    except TemplateError:
        return False
    return not any(context.isdigit() for context in contexts)  # the harness reads a context of digits as a number


def jinja_literal(text: str) -> str:
    """A Jinja string literal holding ``text`` exactly (Jinja reads Python's escapes)."""
    return json.dumps(text, ensure_ascii=False)


def raw_text(text: str) -> str:
    """Literal template text, kept literal in Jinja (braces and ``%``/``#`` marks included)."""
    return f"{{% raw %}}{text}{{% endraw %}}" if any(mark in text for mark in "{}%#") else text


def meta_expression(template: Template, column: str) -> str:
    """The Jinja expression of ``{meta:COLUMN}``: the item's value, translated as the template's rule says."""
    value = f"meta[{jinja_literal(column)}]"
    rule = next((r for r in template.meta if r.column == column), None)
    if rule is None:
        return f"({value} if {value}.strip() else {UNDEFINED})"
    if rule.values:
        table = "{" + ", ".join(f"{jinja_literal(k)}: {jinja_literal(v)}" for k, v in rule.values) + "}"
        unknown = value if rule.keep_unknown else UNDEFINED
        found = f"({table}[{value}] if {value} in {table} else ({table}[{value}.strip()] if {value}.strip() in {table} else {unknown}))"
    else:
        found = value
    missing = jinja_literal(rule.default) if rule.default is not None else UNDEFINED
    return f"({found} if {value}.strip() else {missing})"


def context_jinja(template: Template) -> str:
    """``doc_to_text``: the template's context as Jinja."""
    prompt = "prompt.strip()" if template.strip else "prompt"
    fields = {"goal": prompt, "prompt": prompt, "question": "question"}
    parts: list[str] = []
    for literal, name, spec, _ in string.Formatter().parse(template.context):
        parts.append(raw_text(literal))
        if name == "options":
            parts.append(options_jinja(template))
        elif name == "meta":
            parts.append(f"{{{{ {meta_expression(template, spec or '')} }}}}")
        elif name is not None:
            parts.append(f"{{{{ {fields[name]} }}}}")
    return "".join(parts)


def options_jinja(template: Template) -> str:
    """``{options}``: a loop writing one option line per solution, joined by the option separator."""
    solution = "s.strip()" if template.strip else "s"
    fields = {"solution": solution, "letter": f"{list(template.letters)!r}[loop.index0]", "index": "loop.index0"}
    line = "".join(
        raw_text(literal) + (f"{{{{ {fields[name]} }}}}" if name is not None else "")
        for literal, name, _, _ in string.Formatter().parse(template.option_line)
    )
    separator = raw_text(template.option_separator)
    return f"{{% for s in solutions %}}{{% if not loop.first %}}{separator}{{% endif %}}{line}{{% endfor %}}"


def choices_jinja(template: Template) -> str:
    """``doc_to_choice``: the continuation after its delimiter, per solution, as a Python list literal."""
    rest = template.continuation[len(template.delimiter) :]
    fields = {"solution": "s", "letter": f"{list(template.letters)!r}[loop.index0]", "index": "(loop.index0|string)"}
    pieces = []
    for literal, name, spec, _ in string.Formatter().parse(rest):
        if literal:
            pieces.append(jinja_literal(literal))
        if name == "meta":
            pieces.append(meta_expression(template, spec or ""))
        elif name is not None:
            pieces.append(fields[name])
    choice = " ~ ".join(pieces) or '""'
    return (
        f"{{% set out = [] %}}{{% for s in solutions %}}{{{{ out.append({choice}) or '' }}}}{{% endfor %}}{{{{ out }}}}"
    )


def task_yaml(release: str, template: Template, files: Sequence[str], columns: dict[str, object]) -> str:
    """The task's YAML text (JSON is YAML: every value is written as JSON, exactly; the one tag is
    ``!function``)."""
    kwargs = {"files": list(files), "columns": columns, "split": "test"}
    lines = [
        f"# piqa-tui template {json.dumps(template.name, ensure_ascii=False)}",
        f"task: {json.dumps(task_name(release, template.name))}",
        f"tag: [{json.dumps(tag_name(release))}]",
        f"custom_dataset: !function {DOCS_MODULE.removesuffix('.py')}.load",
        f"dataset_kwargs: {json.dumps(kwargs, ensure_ascii=False)}",
        "test_split: test",
        "output_type: multiple_choice",
        "num_fewshot: 0",
        f"doc_to_text: {jinja_literal(context_jinja(template))}",
        f"target_delimiter: {jinja_literal(template.delimiter)}",
        f"doc_to_choice: {jinja_literal(choices_jinja(template))}",
        'doc_to_target: "{{ label }}"',
        "metric_list:",
        *(
            f"  - metric: {m}\n    aggregation: mean\n    higher_is_better: true"
            for m in ("acc", "acc_norm", "acc_bytes")
        ),
        "metadata:",
        "  version: 1.0",
        f"  piqa_tui_template: {json.dumps(template.key, ensure_ascii=False)}",
        f"  description: {json.dumps(template.description, ensure_ascii=False)}",
    ]
    return "\n".join(lines) + "\n"


def write_tasks(
    folder: Path, release: str, templates: Sequence[Template], files: Sequence[str], columns: dict[str, object]
) -> list[dict[str, str]]:
    """Write ``tasks/`` (one YAML per template and the documents module) into the release ``folder``;
    returns the manifest's ``tasks`` entries (task name, template, file)."""
    if not templates:
        return []
    tasks = folder / TASKS
    tasks.mkdir()
    source = Path(__file__).with_name("harness_docs.py").read_text(encoding="utf-8")
    (tasks / DOCS_MODULE).write_text(source, encoding="utf-8")
    entries = []
    for template in templates:
        path = f"{TASKS}/{task_name(release, template.name)}.yaml"
        (folder / path).write_text(task_yaml(release, template, files, columns), encoding="utf-8")
        entries.append({"task": task_name(release, template.name), "template": template.name, "file": path})
    return entries
