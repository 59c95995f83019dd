"""``piqa-tui templates [NAME --on PATH [--item ID]]``: the prompt templates, and one rendered on an item.

Without NAME: every scoring template (shipped, the user's files in ``templates/``
beside the config file, the config file's tables) with its language, source
and description, then every job template (``draft``, ``translate``, ``correct``,
``distractor``, ``fill``: shipped, and the user's files in ``templates/jobs/``) with
its job, the SHA-256 its runs record, source and description; a job template that
does not load is listed with its one-line error. With NAME and ``--on``: the exact
context and continuations the model would score for one item, with every newline and
edge space shown.
"""

from __future__ import annotations

import argparse

from piqa_tui.cli.commands.dataset_args import print_json, say
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.authoring.job_templates import JOB_FIELDS, ListedJobTemplate, job_template_listing
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.scoring.templates import Template

HASH_SHOWN = 12  # hex digits of a job template's SHA-256 in the text listing (--json has all 64)
NEWLINE_MARK = "⏎"
SPACE_MARK = "␣"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME", help="a template to show rendered (needs --on)")
    parser.add_argument("--on", metavar="PATH", help="dataset file whose item the template is rendered on")
    parser.add_argument("--item", metavar="ID", help="the item's id (default: the first item)")
    parser.add_argument(
        "--map",
        dest="mapping",
        metavar="SPEC",
        help="column mapping for unknown layouts: prompt=COL,solutions=COL|COL,label=COL,id=COL",
    )
    parser.add_argument("--workspace", metavar="FILE", help="workspace database (its edits are applied)")
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    from piqa_tui.settings.template_catalog import available_templates

    catalog = available_templates()
    if args.name is None:
        if args.on or args.item:
            raise PiqaError("--on and --item need a template NAME: piqa-tui templates NAME --on PATH")
        from piqa_tui.settings.locations import user_templates_dir

        _list(catalog, job_template_listing(user_templates_dir() / "jobs"), args.json)
        return OK
    if args.name not in catalog:
        raise PiqaError(f"unknown template {args.name!r}: piqa-tui templates lists them")
    if not args.on:
        raise PiqaError(f"give a dataset to render {args.name!r} on: piqa-tui templates {args.name} --on PATH")
    _show(catalog[args.name], args)
    return OK


def _list(catalog: dict[str, Template], jobs: list[ListedJobTemplate], as_json: bool) -> None:
    rows = [
        {"name": t.name, "language": t.language or None, "source": t.source, "description": t.description}
        for t in catalog.values()
    ]
    job_rows = [_job_row(listed) for listed in jobs]
    if as_json:
        print_json({"templates": rows, "job_templates": job_rows})
        return
    width = max(len(t.name) for t in catalog.values())
    source_width = max(len(t.source) for t in catalog.values())
    say(f"{'name':<{width}}  lang  {'source':<{source_width}}  description")
    for r in rows:
        say(f"{r['name']:<{width}}  {r['language'] or '-':<4}  {r['source']:<{source_width}}  {r['description']}")
    _list_jobs(job_rows)


def _job_row(listed: ListedJobTemplate) -> dict[str, str | None]:
    """A job template's row: its job and SHA-256, or (a file that does not load) its error."""
    template = listed.template
    return {
        "name": listed.name,
        "job": template.job if template else None,
        "sha256": template.digest if template else None,
        "source": listed.source,
        "description": template.description if template else "",
        "error": listed.error or None,
    }


def _list_jobs(rows: list[dict[str, str | None]]) -> None:
    """The job templates grouped by job, in the jobs' order; those that do not load last, each with its error."""
    say("job templates (draft, translate, correct, distractor, fill; yours in templates/jobs/ beside the config):")
    order = {job: n for n, job in enumerate(JOB_FIELDS)}
    rows = sorted(rows, key=lambda r: (order.get(r["job"] or "", len(order)), str(r["name"])))
    table = [("job", "name", "sha256", "source", "description")] + [
        (
            r["job"] or "-",
            str(r["name"]),
            (r["sha256"] or "-")[:HASH_SHOWN],
            str(r["source"]),
            f"error: {r['error']}" if r["error"] else str(r["description"]),
        )
        for r in rows
    ]
    widths = [max(len(cells[i]) for cells in table) for i in range(4)]
    for cells in table:
        say("  ".join([*(cell.ljust(width) for cell, width in zip(cells, widths)), cells[4]]))


def _show(template: Template, args: argparse.Namespace) -> None:
    from piqa_tui.cli.commands.dataset_args import open_project

    project = open_project(
        argparse.Namespace(path=args.on, mapping=args.mapping, workspace=args.workspace, annotator=None)
    )
    items = project.items
    if not items:
        raise PiqaError(f"{args.on}: has no items to render the template on")
    item = next((it for it in items if it.id == args.item), None) if args.item else items[0]
    if item is None:
        raise PiqaError(f"{args.on}: no item with id {args.item!r}; give one of its ids (e.g. {items[0].id})")
    request = template.request(item)
    if args.json:
        print_json(
            {
                "template": template.name,
                "key": template.key,
                "source": template.source,
                "item": item.id,
                "label": item.label,
                "context": request.context,
                "continuations": list(request.continuations),
            }
        )
        return
    say(f"template {template.name} ({template.source}) on item {item.id} of {project.dataset.path}")
    say(
        f"context, {len(request.context)} characters ({NEWLINE_MARK} ends each line, {SPACE_MARK} is a space at an edge):"
    )
    for line in visible_lines(request.context):
        say(f"  │{line}")
    say(f"continuations, each scored right after the context (target delimiter {template.delimiter!r}):")
    for index, continuation in enumerate(request.continuations):
        gold = "   ← gold" if item.label == index else ""
        say(f"  {index}  ⟦{edge_spaces(continuation)}⟧{gold}")


def visible_lines(text: str) -> list[str]:
    """``text`` as lines, each newline shown as a mark at its line's end and edge spaces shown."""
    lines = text.split("\n")
    return [edge_spaces(line) + (NEWLINE_MARK if i < len(lines) - 1 else "") for i, line in enumerate(lines)]


def edge_spaces(text: str) -> str:
    """``text`` with the spaces that open and close it shown as marks (inner spaces stay spaces)."""
    core = text.strip(" ")
    if not core:
        return SPACE_MARK * len(text)
    head = len(text) - len(text.lstrip(" "))
    tail = len(text) - len(text.rstrip(" "))
    return SPACE_MARK * head + core + SPACE_MARK * tail
