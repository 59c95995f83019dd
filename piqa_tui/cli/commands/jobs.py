"""What ``draft``, ``translate`` and ``correct`` share: the model options, the near-copy check (``near_copies``;
not for ``correct``, which adds no item), the run's
provenance, the run in a worker with a progress line, an ETA and Ctrl-C, and the summary.

The job runs in a worker thread; the main thread draws the progress and, on Ctrl-C, sets the run's cancel: the
batch in flight stops (its finished answers are recorded) and the command names the run to resume.
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piqa_tui.cli.commands.dataset_args import open_project, print_json, say
from piqa_tui.cli.commands.near_copies import NearCopies, add_repetition_arguments, near_copies, semantic_rule_line
from piqa_tui.cli.exit_codes import OK
from piqa_tui.cli.progress import ProgressLine, progress_line
from piqa_tui.core.authoring.batch import DEFAULT_BATCH, JobContext, JobProgress, run_job
from piqa_tui.core.authoring.correcting import CORRECT_JOB, RUN_PARAM
from piqa_tui.core.authoring.job_templates import JobTemplate, find_job_template, job_catalog
from piqa_tui.core.authoring.repetition import RepetitionGate
from piqa_tui.core.authoring.runs import JobRun, Slot, new_run_id, start_run, stored_run
from piqa_tui.core.generation.backends.kind import generation_options, open_generation_backend
from piqa_tui.core.generation.protocol import GenerationBackend, Provenance
from piqa_tui.core.workspace.project import Project


def add_job_arguments(parser: argparse.ArgumentParser, job: str, template: str = "") -> None:
    """The options every batch job takes: template, language, sampling, the batch, resume, the model (and the
    near-copy check for the jobs that add items)."""
    template = template or job
    parser.add_argument(
        "--template", default=template, help=f"the job template's name or a .toml path (default {template})"
    )
    parser.add_argument("--language", help="the language to write in, as the prompt names it (e.g. 'Tamil')")
    parser.add_argument("--temperature", type=float, help="sampling temperature (default: the template's)")
    parser.add_argument("--max-tokens", type=int, help="longest answer in tokens (default: the template's)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed of the first request (default 0)")
    parser.add_argument(
        "--batch",
        type=int,
        default=DEFAULT_BATCH,
        help=f"requests handed to the model together, their items recorded together (default {DEFAULT_BATCH})",
    )
    parser.add_argument("--resume", metavar="RUN", help="go on with an interrupted run, skipping its finished items")
    for option in generation_options():
        how: dict[str, Any] = {"metavar": option.metavar, "help": option.help, "default": option.default}
        how |= {"action": "append"} if option.repeat else {}
        how |= {"type": int} if option.number else {}
        how |= {"choices": list(option.choices)} if option.choices else {}
        parser.add_argument(option.flag, **how)
    if job != CORRECT_JOB:
        add_repetition_arguments(parser)


@dataclass
class Prepared:
    """A run ready to go: the project, its plan, the template, the backend (not loaded yet) and the near-copy
    check (its embedding model found, not loaded; None for a correction, which adds no item)."""

    project: Project
    run: JobRun
    template: JobTemplate
    backend: GenerationBackend
    near: NearCopies | None


def prepare(args: argparse.Namespace, job: str, plan: Any) -> Prepared:
    """Open the project, find the template and check it against the dataset, plan the run (or find the one to
    resume), open the backend: every refusal is one line before the model loads."""
    from piqa_tui.settings.locations import user_templates_dir

    project = open_project(args, create=True)
    catalog = job_catalog(user_templates_dir() / "jobs")
    if args.resume:
        run = stored_run(project, args.resume, job)
        template = find_job_template(run.template, job, catalog)
        if template.digest != run.template_sha256:
            say(f"note: template {run.template!r} changed since run {run.run_id} started; its new text is used")
    else:
        template = find_job_template(args.template, job, catalog)
        template.check_columns(project.dataset.meta_columns, project.dataset.path.name)
        slots: list[Slot] = plan(project, template)
        run = JobRun(
            new_run_id(job),
            job,
            args.template,
            template.digest,
            args.language or "the dataset's language",
            tuple(slots),
            template.temperature if args.temperature is None else args.temperature,
            template.max_tokens if args.max_tokens is None else args.max_tokens,
            args.seed,
            project.annotator,
        )
    values = {option.dest: getattr(args, option.dest, None) for option in generation_options()}
    backend = open_generation_backend(values)
    near = None if job == CORRECT_JOB else near_copies(args, project)
    return Prepared(project, run, template, backend, near)


def run_batch(args: argparse.Namespace, prepared: Prepared, what: str) -> int:
    """Load the model, run the job with a progress line and Ctrl-C, and say what it did."""
    project = prepared.project
    try:
        with progress_line(args) as line:
            gate = prepared.near.gate(project, line.show) if prepared.near is not None else None
            run = prepared.run if args.resume else start_run(project, prepared.run)
            progress = _with_backend(args, prepared, run, gate, line, what)
    finally:
        if prepared.near is not None:
            prepared.near.close()  # the embedding cache's connection: the drafts' vectors were cached through it
    if prepared.near is None:
        return correction_summary(args, run, progress)
    return _summary(args, run, progress, prepared.near)


def _with_backend(
    args: argparse.Namespace,
    prepared: Prepared,
    run: JobRun,
    gate: RepetitionGate | None,
    line: ProgressLine,
    what: str,
) -> JobProgress:
    """Load the writing model, run the job in a worker, close the model."""
    project, template, backend = prepared.project, prepared.template, prepared.backend
    line.show(f"loading the model for run {run.run_id}")
    backend.load()
    try:
        params: dict[str, object] = {"temperature": run.temperature, "max_tokens": run.max_tokens, "batch": args.batch}
        params |= {RUN_PARAM: run.run_id} if run.job == CORRECT_JOB else {}  # its suggestions name their run
        provenance = Provenance.now(
            backend.source(),
            project.annotator,
            run.job,
            template=template.name,
            template_sha256=template.digest,
            params=params,
            seed=run.seed,
        )
        context = JobContext(template, backend, provenance, max(1, args.batch), gate)
        return _in_worker(project, run, context, line, what)
    finally:
        backend.close()


def _in_worker(project: Project, run: JobRun, context: JobContext, line: ProgressLine, what: str) -> JobProgress:
    """Run the job in a thread; Ctrl-C sets its cancel and waits for the batch in flight to be recorded."""
    cancel, finished = threading.Event(), threading.Event()
    done: list[JobProgress] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            text = correction_progress if run.job == CORRECT_JOB else progress_text
            done.append(run_job(project, run, context, cancel, lambda p: line.show(text(p, what))))
        except BaseException as exc:  # handed to the main thread, which reports it as every error is
            failed.append(exc)
        finally:
            finished.set()

    threading.Thread(target=work, name=f"{run.job}-run", daemon=True).start()
    while not finished.is_set():
        try:
            finished.wait(0.2)  # not Thread.join: a Ctrl-C inside join can leave the thread looking finished
        except KeyboardInterrupt:
            cancel.set()
            line.show(f"cancelling run {run.run_id}: keeping what is already finished")
    if failed:
        raise failed[0]
    return done[0]


def progress_text(progress: JobProgress, what: str) -> str:
    """``drafting 12/40 (30%) · 10 added · 2 near copies (1 lexical, 1 in meaning) · 0 failed · ETA 1m20s``."""
    return (
        f"{_done(progress, what)} · {progress.recorded} added · "
        f"{progress.rejected} near copies ({_ways(progress)}) · {len(progress.failed)} failed{_left(progress)}"
    )


def correction_progress(progress: JobProgress, what: str) -> str:
    """``correcting 12/40 (30%) · 9 suggestions on 7 items · 4 unchanged · 1 failed · ETA 1m20s``."""
    return (
        f"{_done(progress, what)} · {progress.suggestions} suggestions on {progress.recorded} items · "
        f"{progress.unchanged} unchanged · {len(progress.failed)} failed{_left(progress)}"
    )


def _done(progress: JobProgress, what: str) -> str:
    """``drafting 12/40 (30%)``."""
    share = 100 * progress.done // progress.total if progress.total else 100
    return f"{what} {progress.done}/{progress.total} ({share}%)"


def _left(progress: JobProgress) -> str:
    """`` · ETA 1m20s`` (nothing before the first batch)."""
    eta = progress.eta()
    return f" · ETA {_duration(eta)}" if eta is not None else ""


def _ways(progress: JobProgress) -> str:
    return f"{progress.rejected_lexical} lexical, {progress.rejected_semantic} in meaning"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _summary(args: argparse.Namespace, run: JobRun, progress: JobProgress, near: NearCopies) -> int:
    if args.json:
        print_json(
            {
                "run": run.run_id,
                "recorded": progress.recorded,
                "rejected_near_copies": progress.rejected,
                "rejected_lexical": progress.rejected_lexical,
                "rejected_semantic": progress.rejected_semantic,
                "lexical_threshold": near.threshold,
                "semantic_model": near.model or None,
                "failed": progress.failed,
                "skipped_done": progress.skipped,
                "cancelled": progress.cancelled,
            }
        )
        return OK
    for line in progress.failed[:20]:
        say(f"  no item for {line}")
    skipped = f", {progress.skipped} already done before" if progress.skipped else ""
    say(
        f"run {run.run_id}: {progress.recorded} items added at stage draft, {progress.rejected} near copies "
        f"rejected ({_ways(progress)}), {len(progress.failed)} answers that did not fit{skipped}"
    )
    say(f"  near copies: {semantic_rule_line(near)}")
    if progress.cancelled or progress.failed or progress.rejected:
        say(f"piqa-tui {run.job} {Path(args.path)} --resume {run.run_id} asks again for the items still missing")
    return OK


def correction_summary(args: argparse.Namespace, run: JobRun, progress: JobProgress) -> int:
    """What a correct run did: suggestions recorded for review, items unchanged, answers that did not fit."""
    if args.json:
        print_json(
            {
                "run": run.run_id,
                "suggestions": progress.suggestions,
                "items_with_suggestions": progress.recorded,
                "unchanged": progress.unchanged,
                "failed": progress.failed,
                "skipped_done": progress.skipped,
                "cancelled": progress.cancelled,
            }
        )
        return OK
    for line in progress.failed[:20]:
        say(f"  no suggestion for {line}")
    skipped = f", {progress.skipped} already done before" if progress.skipped else ""
    say(
        f"run {run.run_id}: {progress.suggestions} suggestions on {progress.recorded} items recorded for review "
        f"(the items are unchanged), {progress.unchanged} items the model left as they were, "
        f"{len(progress.failed)} answers that did not fit{skipped}"
    )
    if progress.cancelled or progress.failed:
        say(f"piqa-tui {run.job} {Path(args.path)} --resume {run.run_id} asks again for the items still missing")
    return OK
