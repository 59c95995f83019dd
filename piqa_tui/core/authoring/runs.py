"""A batch job's run: what it asks for (its slots), how it was asked, and which slots are done.

A run is planned whole before the first request: a draft run's slots are the metadata combinations asked for,
each as many times as asked; a translate run's slots are the source file's items. The plan and the run's
provenance are kept in the workspace (meta ``job-run:ID``) when it starts. A slot is done when an item its run
made is in the log: each recorded draft carries its run id and slot key in its origin
(``core.round.origin``), so ``piqa-tui draft --resume ID`` asks only for the slots without one — an interrupted
run (Ctrl-C, a crash, a closed laptop) never redoes a finished item. A slot whose answer did not fit, or was
rejected as a near copy, has no item and is asked again on resume.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.origin import project_origins
from piqa_tui.core.workspace.project import Project

RUN_META = "job-run:"


class RunError(PiqaError):
    """A run that cannot be started or resumed: one line saying what to do."""


@dataclass(frozen=True)
class Slot:
    """One thing a run asks for: a draft for these metadata values, the translation of one source item, or the
    correction of one item of the dataset (``source`` holds its id as ``item``)."""

    key: str
    meta: dict[str, str] = field(default_factory=dict)
    source: dict[str, object] = field(default_factory=dict)  # id, prompt, solutions, label (translate)

    def name(self) -> str:
        """The slot as a person reads it in a run's report: ``source item en-12`` or ``draft 5 (category:
        cooking)``."""
        if "item" in self.source:  # a correction: the item itself
            return f"item {self.source['item']}"
        if self.source:
            return f"source item {self.source.get('id', self.key)}"
        shown = "; ".join(f"{column}: {value}" for column, value in self.meta.items())
        number = int(self.key) + 1 if self.key.isdigit() else self.key
        return f"draft {number}" + (f" ({shown})" if shown else "")


@dataclass(frozen=True)
class JobRun:
    """A run's plan and how it is asked: the job, template, language, sampling and the provenance recorded."""

    run_id: str
    job: str
    template: str  # the template's name, or the path of the team's file
    template_sha256: str
    language: str
    slots: tuple[Slot, ...]
    temperature: float
    max_tokens: int
    seed: int
    by: str
    time: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> JobRun:
        data = json.loads(text)
        data["slots"] = tuple(Slot(**slot) for slot in data["slots"])
        return cls(**data)


def new_run_id(job: str) -> str:
    """``draft-`` or ``translate-`` and 8 random hex digits."""
    return f"{job}-{secrets.token_hex(4)}"


def start_run(project: Project, run: JobRun) -> JobRun:
    """Keep the run's plan in the workspace, stamped with this instant; the run to use."""
    if project.workspace is None:
        raise RunError("a run needs the dataset's workspace; open the dataset with piqa-tui once, or give --annotator")
    stamped = JobRun(**{**asdict(run), "slots": run.slots, "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})
    project.workspace.set_meta({RUN_META + run.run_id: stamped.to_json()})
    return stamped


def stored_run(project: Project, run_id: str, job: str) -> JobRun:
    """The run ``run_id`` as it was started; RunError naming the runs there are when there is none."""
    text = project.workspace.get_meta(RUN_META + run_id) if project.workspace is not None else None
    if text is None:
        known = ", ".join(r.run_id for r in stored_runs(project) if r.job == job) or "none"
        raise RunError(f"no {job} run {run_id!r} in this workspace (its {job} runs: {known})")
    run = JobRun.from_json(text)
    if run.job != job:
        raise RunError(f"run {run_id!r} is a {run.job} run; resume it with piqa-tui {run.job}")
    return run


def stored_runs(project: Project) -> list[JobRun]:
    """Every run started in this workspace, oldest first."""
    if project.workspace is None:
        return []
    rows = project.workspace.conn.execute("SELECT value FROM meta WHERE key LIKE ?", (RUN_META + "%",))
    return sorted((JobRun.from_json(value) for (value,) in rows), key=lambda run: run.time)


def done_keys(project: Project, run_id: str) -> set[str]:
    """The slots of run ``run_id`` that have an item in the log."""
    return {origin.key for origin in project_origins(project).values() if origin.run == run_id}
