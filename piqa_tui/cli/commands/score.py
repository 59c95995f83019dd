"""``piqa-tui score PATH [--model FILE.gguf]``: how hard the set is for a model, item by item.

Without ``--model`` the model is the one the TUI would use: the config's
``model``, else $PIQA_TUI_MODEL, else the packaged Gemma 3 270M.

Scores are cached in the workspace (keyed by model, template and item
content), so a second run, or one after a few edits, computes only what
changed, and an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
    say,
)
from piqa_tui.cli.exit_codes import OK
from piqa_tui.core.dataset.files import atomic_write
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.report.stats import categorical_columns
from piqa_tui.core.scoring.results import groups_by_column, summarise
from piqa_tui.core.scoring.templates import (
    CONTEXTS,
    DEFAULT_LANGUAGE,
    DEFAULT_TEMPLATE,
    LANGUAGES,
    PROTOCOLS,
    Template,
)
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.render.values import format_value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument("--model", metavar="FILE.gguf",
                        help="a GGUF model file (default: the config's model, else $PIQA_TUI_MODEL, "
                             "else the packaged Gemma 3 270M)")
    parser.add_argument("--n-gpu-layers", type=int, metavar="N",
                        help="layers offloaded to the GPU: 0 = CPU only, -1 = all (default: the config's "
                             "n_gpu_layers, else 0)")
    parser.add_argument("--server", metavar="URL",
                        help="score through an OpenAI-compatible server that returns prompt log-probabilities "
                             "(vLLM, SGLang, python -m llama_cpp.server) instead of a local model")
    parser.add_argument("--server-model", metavar="NAME", help="the served model's name (default: the first listed)")
    parser.add_argument("--concurrency", type=int, default=4, metavar="N",
                        help="requests in flight to the server at once (default 4)")
    parser.add_argument("--repack", choices=("auto", "on", "off"),
                        help="let llama.cpp repack the weights for this CPU's fastest kernels: auto = on, "
                             "except on CPUs with AMX, where they crash (default: the config's repack, else auto)")
    parser.add_argument("--template", metavar="NAME",
                        help=f"prompt template: piqa, bare, mcq, a culture protocol's, or your own "
                             f"(piqa-tui templates lists them; default {DEFAULT_TEMPLATE})")
    add_protocol_arguments(parser)
    parser.add_argument("--solution-only", action="store_true",
                        help="score the solutions without the prompt (a shortcut baseline)")
    parser.add_argument("--limit", type=int, metavar="N", help="score only the first N items")
    parser.add_argument("--threads", type=int, metavar="N", help="CPU threads (default: all cores)")
    parser.add_argument("--n-ctx", type=int, default=4096, metavar="N",
                        help="context size: the most tokens one item may take, all solutions together (default 4096)")
    parser.add_argument("--n-batch", type=int, default=256, metavar="N",
                        help="tokens per llama.cpp decode, several items each (default 256: on a CPU bigger "
                             "batches are slower, attention runs over the whole batch)")
    parser.add_argument("--by", action="append", metavar="COLUMN",
                        help="accuracy per value of COLUMN (repeatable; default: every categorical column)")
    parser.add_argument("--output", metavar="results.jsonl", help="write one JSON line of scores per item")
    parser.add_argument("--force", action="store_true", help="replace the --output file if it exists")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write cached scores")


def run(args: argparse.Namespace) -> int:
    from piqa_tui.core.scoring.cache import score_items
    from piqa_tui.core.scoring.process import ModelCrashed
    from piqa_tui.settings.config import load_config
    from piqa_tui.settings.template_catalog import chosen_template

    config = load_config()
    template = chosen_template(args.template, args.protocol, args.context, args.language, config)
    for option in ("limit", "n_ctx", "n_batch", "threads", "concurrency"):
        value = getattr(args, option)
        if value is not None and value < 1:
            flag = "--" + option.replace("_", "-")
            raise PiqaError(f"{flag} must be at least 1, not {value}; give a positive number")
    backend = _backend(args, config)
    project = open_project(args, create=not args.no_cache)
    if args.output:  # refused before the model runs, not after
        project.check_outputs([Path(args.output)], replace=args.force)
    items = project.items[: args.limit] if args.limit else project.items
    cache = None if args.no_cache or project.workspace is None else project.workspace.conn

    show_progress = not args.json and sys.stderr.isatty()
    started = time.perf_counter()
    first_done: list[int] = []

    def progress(done: int, total: int) -> None:
        if not first_done:
            first_done.append(done)  # what the cache already had
        if show_progress:
            elapsed = time.perf_counter() - started
            rate = (done - first_done[0]) / elapsed if elapsed > 0 else 0.0
            eta = f", ETA {(total - done) / rate:.0f} s" if rate > 0 and done < total else ""
            print(f"\rscoring {done}/{total} ({rate:.1f} items/s{eta})", end="", file=sys.stderr, flush=True)

    try:
        scores = score_items(backend, items, template, cache=cache, progress=progress,
                             cancel=threading.Event(), solution_only=args.solution_only)
    except ModelCrashed as exc:
        kept = "; the items scored before it are kept in the workspace: run again to resume" if cache else ""
        raise ModelCrashed(f"{exc}{kept}") from None
    finally:
        backend.close()
        if show_progress:
            print(file=sys.stderr)
    elapsed = time.perf_counter() - started
    computed = sum(not s.cached for s in scores)

    columns = args.by or categorical_columns(items, project.dataset.meta_columns)
    summary = summarise(scores)
    breakdown = {c: summarise(scores, groups_by_column(items, c))["groups"] for c in columns}
    result = {
        "path": str(project.dataset.path),
        "model": backend.describe()["identity"],
        "template": template.name + ("+solution-only" if args.solution_only else ""),
        **summary,
        "n_items": len(scores),
        "n_computed": computed,
        "seconds": elapsed,
        "items_per_second": len(scores) / elapsed if elapsed > 0 else None,
        # Throughput of the model alone (cached items excluded); null when nothing was computed.
        "model_items_per_second": computed / elapsed if computed and elapsed > 0 else None,
        "groups": breakdown,
    }
    if args.output:
        scored = template.solution_only() if args.solution_only else template
        rows = [json.dumps({**s.to_dict(), "row": it.row, **scored_text(scored, it)}, ensure_ascii=False)
                for s, it in zip(scores, items)]
        atomic_write(Path(args.output), "\n".join(rows) + "\n")

    if args.json:
        print_json(result)
    else:
        _print_summary(result)
    return OK


def add_protocol_arguments(parser: argparse.ArgumentParser) -> None:
    """--protocol, --context and --language: the culture benchmark's templates (lm-eval's arab_culture tasks)."""
    parser.add_argument("--protocol", choices=PROTOCOLS,
                        help="the Arab-culture protocols of lm-evaluation-harness: mcq scores the answer letters, "
                             "completion the option texts (instead of --template)")
    parser.add_argument("--context", choices=CONTEXTS,
                        help="location context in the protocol's prompt (default none)")
    parser.add_argument("--language", choices=LANGUAGES,
                        help=f"the protocol's prompt language (default {DEFAULT_LANGUAGE}; ar names countries and regions in Arabic)")


def scored_text(template: Template, item: Item) -> dict[str, object]:
    """The exact context and continuations scored for ``item``: what lm-eval's requests hold, to check against."""
    request = template.request(item)
    return {"context": request.context, "continuations": list(request.continuations)}


def _backend(args: argparse.Namespace, config) -> object:
    """The server given by --server (or the config's [server]), else the local model in a child process."""
    from piqa_tui.core.scoring.backend import ModelChoice, ServerChoice
    from piqa_tui.core.scoring.factory import backend_for
    from piqa_tui.settings.model_choice import choose_model

    if args.server:
        return backend_for(ModelChoice(None, "--server", server=ServerChoice(args.server, args.server_model,
                                                                             args.concurrency)))
    if args.model is not None:
        choice = ModelChoice(Path(args.model), "--model")
    else:
        choice = choose_model(config)
        if choice.path is None and choice.server is None:
            raise PiqaError(f"{choice.problem}; or pass --model FILE.gguf")
    n_gpu_layers = config.n_gpu_layers if args.n_gpu_layers is None else args.n_gpu_layers
    repack = args.repack or str(config.repack)
    # In a child process: a crash inside llama.cpp becomes one line and exit 2, not a core dump.
    return backend_for(ModelChoice(choice.path, choice.source, n_gpu_layers, repack=repack, server=choice.server),
                       n_threads=args.threads, n_ctx=args.n_ctx, n_batch=args.n_batch)


def _print_summary(result: dict) -> None:
    rate = result["model_items_per_second"]
    speed = f"{rate:.2f} items/s" if rate else "all from the cache"
    say(f"{result['path']}: {result['model']}, template {result['template']}")
    say(f"acc {format_value(result['acc'])}  acc_norm {format_value(result['acc_norm'])}  "
        f"acc_bytes {format_value(result['acc_bytes'])}  n {result['n']}"
          f"  ({result['n_items']} scored, {result['n_computed']} computed, {speed})")
    for column, groups in result["groups"].items():
        say(f"\nby {terminal_safe(column, one_line=True)}:")
        width = max(len(g) for g in groups) if groups else 0
        for name, s in groups.items():
            say(f"  {terminal_safe(name, one_line=True):<{width}}  acc {format_value(s['acc'])}  acc_norm {format_value(s['acc_norm'])}  "
                f"acc_bytes {format_value(s['acc_bytes'])}  n {s['n']}")
