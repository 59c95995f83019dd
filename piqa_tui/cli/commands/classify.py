"""``piqa-tui classify PATH --column COLUMN --values a,b,c [--values-from FILE] [model options as score]``: the
model chooses each item's value of a metadata column from a closed set, by log-likelihood
(``core/generation/classify.py``), and its choices are recorded as suggestions a person accepts or rejects.

Without ``--all`` only the items whose column is empty (or holds none of the values) are classified; a run
interrupted (ctrl-c, a crash) keeps the chunks it finished, and running it again resumes. ``--report`` records
nothing: it says how often people kept the model's value, per model, for the column (or every column).
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import add_dataset_arguments, open_project, print_json, say
from piqa_tui.cli.commands.score import add_backend_arguments, model_choices
from piqa_tui.cli.exit_codes import OK
from piqa_tui.cli.progress import ProgressLine, wanted
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.generation.classify import ClassifyError, ClassifyJob, classify
from piqa_tui.core.workspace.suggestions import KeptRate, kept_rates, suggestions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("--column", metavar="COLUMN", help="the metadata column whose value the model chooses")
    parser.add_argument("--values", metavar="A,B,C", help="the values to choose from, separated by commas")
    parser.add_argument("--values-from", metavar="FILE", help="the values to choose from, one a line (UTF-8)")
    parser.add_argument("--all", action="store_true", help="classify every item, not only those whose column is empty")
    parser.add_argument("--limit", type=int, metavar="N", help="classify only the first N items still to do")
    parser.add_argument("--report", action="store_true", help="how often people kept the model's value; no model runs")
    add_backend_arguments(parser)
    parser.add_argument("--threads", type=int, metavar="N", help="CPU threads (default: all cores)")
    parser.add_argument("--n-ctx", type=int, default=4096, metavar="N", help="context size (default 4096)")
    parser.add_argument("--n-batch", type=int, default=256, metavar="N", help="tokens per decode (default 256)")


def run(args: argparse.Namespace) -> int:
    if args.report:
        return _report(args)
    job = ClassifyJob(args.column or "", _values(args), every_item=args.all)
    if not args.column:
        raise ClassifyError("name the column to classify with --column COLUMN")
    project = open_project(args)
    job.check(project)  # refused before a model loads or a workspace is made
    if project.workspace is not None:
        project.workspace.close()
    project = open_project(args, create=True)
    from piqa_tui.settings.config import load_config

    choice = model_choices(args, load_config())[0]
    from piqa_tui.core.scoring.factory import backend_for

    backend = backend_for(choice, n_threads=args.threads, n_ctx=args.n_ctx, n_batch=args.n_batch)
    progress = ProgressLine(enabled=wanted(args))
    cancel = threading.Event()
    try:
        outcome = classify(
            project, backend, job, progress=progress.counter("classifying"), cancel=cancel, limit=args.limit
        )
    except KeyboardInterrupt:
        raise PiqaError("classify interrupted; the chunks finished are recorded: run it again to resume") from None
    finally:
        progress.end()
        backend.close()
    if args.json:
        print_json(vars(outcome) | {"column": job.column, "values": list(job.values)})
    else:
        say(
            f"classified {outcome.classified} items by {job.column}: {outcome.suggested} suggestions to review "
            f"(piqa-tui opens them on each item), {outcome.agreed} where the model agreed with the column"
            + (f"; {outcome.skipped} suggested by an earlier run, skipped" if outcome.skipped else "")
        )
    return OK


def _values(args: argparse.Namespace) -> tuple[str, ...]:
    listed = [v.strip() for v in (args.values or "").split(",") if v.strip()]
    if args.values_from:
        try:
            text = Path(args.values_from).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ClassifyError(f"cannot read the values from {args.values_from}: {exc}") from None
        listed += [line.strip() for line in text.splitlines() if line.strip()]
    if not listed:
        raise ClassifyError("give the values to choose from with --values A,B,C or --values-from FILE")
    return tuple(dict.fromkeys(listed))


def _report(args: argparse.Namespace) -> int:
    project = open_project(args)
    found = [s for s in suggestions(project) if not args.column or s.field == f"meta:{args.column}"]
    rates = kept_rates(found)
    if args.json:
        print_json([vars_of(rate) for rate in rates])
        return OK
    if not rates:
        say("no suggestions recorded" + (f" for {args.column}" if args.column else ""))
    for rate in rates:
        say(_rate_line(rate))
    return OK


def vars_of(rate: KeptRate) -> dict[str, object]:
    return {
        "model": rate.model,
        "field": rate.field,
        "accepted": rate.accepted,
        "amended": rate.amended,
        "rejected": rate.rejected,
        "pending": rate.pending,
        "kept_share": rate.kept_share,
    }


def _rate_line(rate: KeptRate) -> str:
    share = f"{100 * rate.kept_share:.0f}%" if rate.kept_share is not None else "no decision yet"
    return (
        f"{rate.model} on {rate.field.removeprefix('meta:')}: kept {share} "
        f"({rate.accepted} accepted, {rate.amended} changed, {rate.rejected} rejected, {rate.pending} pending)"
    )
