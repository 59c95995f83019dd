"""``piqa-tui score PATH [--model A.gguf --model B.gguf --server URL ...]``: how hard the set is for models.

The model options are the registered scoring backends' own (``core/scoring/backends/``), added and read
backend by backend, so a new backend brings its options without a change here.

Without ``--model`` the model is the one the TUI would use: the config's
``model``, else $PIQA_TUI_MODEL, else the packaged Gemma 3 270M. A run is one
model with one template (``ScoreRun``); the runs are scored one after
another, each local model in its own child process, freed before the next
loads, and compared in one table (``core.report.comparison``).

Scores are cached in the workspace (keyed by model, template and item
content), so a second run, or one after a few edits, computes only what
changed, and an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
    say,
)
from piqa_tui.cli.exit_codes import OK
from piqa_tui.cli.progress import ProgressLine, wanted
from piqa_tui.core import strict_json
from piqa_tui.core.dataset.atomic import atomic_write
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.report.comparison import Comparison, RunScores, check_flags, compare
from piqa_tui.core.report.stats import categorical_columns
from piqa_tui.core.scoring.backend import ModelBackend, ModelChoice
from piqa_tui.core.scoring.backends.kind import SCORING_BACKENDS, scoring_backend
from piqa_tui.core.scoring.results import ItemScore
from piqa_tui.core.scoring.templates import (
    CONTEXTS,
    DEFAULT_LANGUAGE,
    DEFAULT_TEMPLATE,
    LANGUAGES,
    PROTOCOLS,
    Template,
    chosen_templates,
)
from piqa_tui.render.comparison import comparison_tables

if TYPE_CHECKING:
    from piqa_tui.settings.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    add_backend_arguments(parser)
    parser.add_argument(
        "--template",
        metavar="NAME",
        help=f"prompt template: piqa, bare, mcq, a culture protocol's, or your own "
        f"(piqa-tui templates lists them; default {DEFAULT_TEMPLATE})",
    )
    add_protocol_arguments(parser)
    parser.add_argument(
        "--solution-only", action="store_true", help="score the solutions without the prompt (a shortcut baseline)"
    )
    parser.add_argument("--limit", type=int, metavar="N", help="score only the first N items")
    parser.add_argument("--threads", type=int, metavar="N", help="CPU threads (default: all cores)")
    parser.add_argument(
        "--n-ctx",
        type=int,
        default=4096,
        metavar="N",
        help="context size: the most tokens one item may take, all solutions together (default 4096)",
    )
    parser.add_argument(
        "--n-batch",
        type=int,
        default=256,
        metavar="N",
        help="tokens per llama.cpp decode, several items each (default 256: on a CPU bigger "
        "batches are slower, attention runs over the whole batch)",
    )
    parser.add_argument(
        "--by",
        action="append",
        metavar="COLUMN",
        help="accuracy per value of COLUMN (repeatable; default: every categorical column)",
    )
    parser.add_argument("--output", metavar="results.jsonl", help="write one JSON line of scores per item")
    parser.add_argument("--force", action="store_true", help="replace the --output file if it exists")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write cached scores")


@dataclass(frozen=True)
class ScoreRun:
    """One model with one template: a column of the comparison (more runs: more templates, protocols)."""

    choice: ModelChoice
    template: Template
    solution_only: bool = False

    @property
    def template_name(self) -> str:
        return self.template.name + ("+solution-only" if self.solution_only else "")

    def label(self, model_name: str) -> str:
        """``model · template``, as the table, the JSON and the per-item file name the run."""
        return f"{model_name} · {self.template_name}"


@dataclass
class RunOutcome:
    """What one run gave: its scores (item order) and how long the model took."""

    run: ScoreRun
    label: str
    model: str  # the cache's model key
    model_name: str
    scores: list[ItemScore] = field(default_factory=list)
    computed: int = 0
    seconds: float = 0.0


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """Each registered scoring backend's own options (``core/scoring/backends/``: --model, --server, ...)."""
    for kind in SCORING_BACKENDS:
        for option in kind.options:
            how: dict[str, Any] = {"metavar": option.metavar, "help": option.help, "default": option.default}
            how |= {"action": "append"} if option.repeat else {}
            how |= {"type": int} if option.number else {}
            how |= {"choices": list(option.choices)} if option.choices else {}
            parser.add_argument(option.flag, **how)


def run(args: argparse.Namespace) -> int:
    from piqa_tui.settings.config import load_config

    config = load_config()
    _check_numbers(args)
    runs = plan_runs(args, config)
    project = open_project(args, create=not args.no_cache)
    if args.output:  # refused before the model runs, not after
        project.check_outputs([Path(args.output)], replace=args.force)
    items = project.items[: args.limit] if args.limit else project.items
    check_flags(items)  # an unreadable relevance flag is refused before the models run, not after
    cache = None if args.no_cache or project.workspace is None else project.workspace.conn
    outcomes = score_runs(runs, items, cache, args)
    columns = args.by or categorical_columns(items, project.dataset.meta_columns)
    comparison = compare([RunScores(o.label, o.scores) for o in outcomes], items, columns)
    if args.output:
        write_per_item(Path(args.output), outcomes, items)
    result = result_json(str(project.dataset.path), outcomes, comparison)
    if args.json:
        print_json(result)
    else:
        _print_summary(result, comparison)
    return OK


def add_protocol_arguments(parser: argparse.ArgumentParser) -> None:
    """--protocol, --context and --language: the culture benchmark's templates (lm-eval's arab_culture tasks).

    Each takes one value, several separated by commas, or ``all``: the runs are every protocol ×
    context × language named, for every model, which is the culture benchmark's whole grid in one command.
    """
    parser.add_argument(
        "--protocol",
        type=_values_of(PROTOCOLS),
        metavar="|".join(PROTOCOLS) + "[,…]|all",
        help="the Arab-culture protocols of lm-evaluation-harness: mcq scores the answer letters, "
        "completion the option texts (instead of --template)",
    )
    parser.add_argument(
        "--context",
        type=_values_of(CONTEXTS),
        metavar="|".join(CONTEXTS) + "[,…]|all",
        help="location context in the protocol's prompt (default none)",
    )
    parser.add_argument(
        "--language",
        type=_values_of(LANGUAGES),
        metavar="|".join(LANGUAGES) + "[,…]|all",
        help=f"the protocol's prompt language (default {DEFAULT_LANGUAGE}; ar names countries and regions in Arabic)",
    )


def _values_of(allowed: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    """An argparse type: one allowed value, several joined by commas (in the order given), or ``all``."""

    def parse(text: str) -> tuple[str, ...]:
        values = tuple(allowed) if text.strip() == "all" else tuple(v.strip() for v in text.split(",") if v.strip())
        unknown = [v for v in values if v not in allowed]
        if unknown or not values:
            raise argparse.ArgumentTypeError(
                f"{', '.join(map(repr, unknown)) or 'nothing'} is not one of {', '.join(allowed)} "
                "(give one, several separated by commas, or all)"
            )
        return tuple(dict.fromkeys(values))

    return parse


def scored_text(template: Template, item: Item) -> dict[str, object]:
    """The exact context and continuations scored for ``item``: what lm-eval's requests hold, to check against."""
    request = template.request(item)
    return {"context": request.context, "continuations": list(request.continuations)}


def _check_numbers(args: argparse.Namespace) -> None:
    own = [o for kind in SCORING_BACKENDS for o in kind.options if o.at_least is not None]
    for option in ("limit", "n_ctx", "n_batch", "threads", *(o.dest for o in own)):
        value = getattr(args, option)
        if value is not None and value < 1:
            flag = "--" + option.replace("_", "-")
            raise PiqaError(f"{flag} must be at least 1, not {value}; give a positive number")


def plan_runs(args: argparse.Namespace, config: Config) -> list[ScoreRun]:
    """Every model the command line names (or the configured one), each with every chosen template
    (model after model, so a model is loaded once for all its templates)."""
    from piqa_tui.settings.template_catalog import available_templates

    templates = chosen_templates(available_templates(config), args.template, args.protocol, args.context, args.language)
    return [
        ScoreRun(choice, template, args.solution_only)
        for choice in model_choices(args, config)
        for template in templates
    ]


def model_choices(args: argparse.Namespace, config: Config) -> list[ModelChoice]:
    """The runs each registered backend's options name, backend after backend (--model files, then --server
    URLs, ...); none: the configured model (or server), with those options applied."""
    from dataclasses import asdict

    from piqa_tui.settings.model_choice import choose_model

    values = vars(args)
    configured = {**asdict(config), **config.backends}
    choices = [choice for kind in SCORING_BACKENDS for choice in kind.choices(values, configured)]
    if choices:
        return choices
    choice = choose_model(config)
    if choice.problem:
        raise PiqaError(f"{choice.problem}; or pass --model FILE.gguf")
    return [scoring_backend(choice.kind).with_options(choice, values, configured)]


def score_runs(
    runs: Sequence[ScoreRun], items: list[Item], cache: sqlite3.Connection | None, args: argparse.Namespace
) -> list[RunOutcome]:
    """Score ``items`` with each run in turn; a model is loaded once for its runs in a row, and freed
    before the next model loads."""
    from piqa_tui.core.scoring.factory import backend_for

    outcomes: list[RunOutcome] = []
    backend: ModelBackend | None = None
    loaded: ModelChoice | None = None
    try:
        for number, one in enumerate(runs, 1):
            if backend is None or one.choice != loaded:
                if backend is not None:
                    backend.close()
                # In a child process: a crash inside llama.cpp becomes one line and exit 2, not a core dump.
                backend, loaded = (
                    backend_for(one.choice, n_threads=args.threads, n_ctx=args.n_ctx, n_batch=args.n_batch),
                    one.choice,
                )
            prefix = f"[{number}/{len(runs)}] " if len(runs) > 1 else ""
            outcomes.append(score_one_run(one, backend, items, cache, args, prefix))
    finally:
        if backend is not None:
            backend.close()
    seen: dict[str, int] = {}
    for outcome in outcomes:  # the same model twice still makes two columns
        seen[outcome.label] = seen.get(outcome.label, 0) + 1
        if seen[outcome.label] > 1:
            outcome.label = f"{outcome.label} #{seen[outcome.label]}"
    return outcomes


def score_one_run(
    one: ScoreRun,
    backend: ModelBackend,
    items: list[Item],
    cache: sqlite3.Connection | None,
    args: argparse.Namespace,
    prefix: str = "",
) -> RunOutcome:
    """One run, on its model's backend (in the model's own process: a crash there is one line, and the
    scores so far are kept)."""
    from piqa_tui.core.scoring.cache import display_name, score_items
    from piqa_tui.core.scoring.process import ModelCrashed

    progress = _Progress(prefix + one.choice.name, enabled=wanted(args))
    started = time.perf_counter()
    try:
        info = backend.describe()
        scores = score_items(
            backend,
            items,
            one.template,
            cache=cache,
            progress=progress,
            cancel=threading.Event(),
            solution_only=one.solution_only,
        )
    except ModelCrashed as exc:
        kept = "; the items scored before it are kept in the workspace: run again to resume" if cache else ""
        raise ModelCrashed(f"{prefix}{exc}{kept}") from None
    finally:
        progress.end()
    name = display_name(info)
    return RunOutcome(
        one,
        one.label(name),
        str(info["identity"]),
        name,
        scores,
        sum(not s.cached for s in scores),
        time.perf_counter() - started,
    )


class _Progress:
    """``scoring NAME 12/30 (3.1 items/s, ETA 6 s)`` on the progress line; its last text stays when scoring ends."""

    def __init__(self, name: str, enabled: bool) -> None:
        self.name, self.line = name, ProgressLine(enabled)
        self.started = time.perf_counter()
        self.first: int | None = None  # what the cache already had

    def __call__(self, done: int, total: int) -> None:
        if self.first is None:
            self.first = done
        if self.line.enabled:
            elapsed = time.perf_counter() - self.started
            rate = (done - self.first) / elapsed if elapsed > 0 else 0.0
            eta = f", ETA {(total - done) / rate:.0f} s" if rate > 0 and done < total else ""
            self.line.show(f"scoring {self.name} {done}/{total} ({rate:.1f} items/s{eta})")

    def end(self) -> None:
        self.line.end(keep=True)


def run_json(outcome: RunOutcome, comparison: Comparison) -> dict[str, object]:
    """One run's object in ``"models"``: who, with what, its figures overall and per group, and its speed."""
    label, seconds, n = outcome.label, outcome.seconds, len(outcome.scores)
    return {
        "label": label,
        "model": outcome.model,
        "model_name": outcome.model_name,
        "template": outcome.run.template_name,
        **comparison.overall[label],
        "n_items": n,
        "n_computed": outcome.computed,
        "seconds": seconds,
        "items_per_second": n / seconds if seconds > 0 else None,
        # Throughput of the model alone (cached items excluded); null when nothing was computed.
        "model_items_per_second": outcome.computed / seconds if outcome.computed and seconds > 0 else None,
        "groups": {
            column: {value: by_run[label] for value, by_run in groups.items() if label in by_run}
            for column, groups in comparison.groups.items()
        },
    }


def result_json(path: str, outcomes: Sequence[RunOutcome], comparison: Comparison) -> dict[str, object]:
    """``--json``: one object per run in ``"models"``; with one run its keys are also at the top, as before."""
    models = [run_json(o, comparison) for o in outcomes]
    shared = {"models": models, "n_discarded": len(comparison.discarded), "discarded": list(comparison.discarded)}
    if len(models) == 1:
        single = {k: v for k, v in models[0].items() if k not in ("label", "model_name")}
        return {"path": path, **single, **shared}
    return {"path": path, "seconds": sum(o.seconds for o in outcomes), **shared}


def write_per_item(path: Path, outcomes: Sequence[RunOutcome], items: Sequence[Item]) -> None:
    """One JSON line per item per run, naming the run (``run``), its model key and the model's name, with
    the exact context and continuations scored (``scored_text``)."""
    by_id = {item.id: item for item in items}
    lines: list[str] = []
    for o in outcomes:
        scored = o.run.template.solution_only() if o.run.solution_only else o.run.template
        lines.extend(
            strict_json.dumps(
                {
                    **s.to_dict(),
                    "row": by_id[s.item_id].row,
                    **scored_text(scored, by_id[s.item_id]),
                    "run": o.label,
                    "model": o.model,
                    "model_name": o.model_name,
                },
                ensure_ascii=False,
            )[0]  # a log-likelihood of -inf is written null, as JSON has no such number
            for s in o.scores
        )
    atomic_write(path, "\n".join(lines) + "\n")


def _print_summary(result: dict, comparison: Comparison) -> None:
    from rich.console import Console

    say(f"{result['path']}: {len(result['models'])} run(s)")
    for model in result["models"]:
        rate = model["model_items_per_second"]
        speed = f"{rate:.2f} items/s" if rate else "all from the cache"
        say(
            f"  {model['label']}: {model['model']} ({model['n_items']} scored, {model['n_computed']} computed, {speed})"
        )
    console = Console()
    for part in comparison_tables(comparison):
        console.print()
        console.print(part)
