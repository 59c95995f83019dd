"""Three laptops of one team doing random work — votes in a shuffled round, answers to its questions, edits,
swaps, new items, stage moves, adjudications, undo and redo, flags, notes, conflict resolutions — and exchanging it in a
random order by ``workspace merge`` and by votes and answers files (whole or current only). Once every machine
has merged every other, each must give byte for byte the same ``agree --json``, releases (``--decided`` and
``--decided --only-decided``), conflicts, progress and stages.

Each seed draws the same work and the same exchanges every run. Before the rules "in force by time" for answers,
position preference and adjudication conflicts (the log's order differs between machines that got events from
files), machines disagreed on 8 of these 20 seeds (20 of the first 60); 200 seeds pass now.

A second test keeps two projects open (two TUIs) on one workspace while work, merges and files arrive, and demands
after every step that each, refreshed, equals a project opened afresh.
"""

from __future__ import annotations

import contextlib
import io
import random
import shutil
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.round.order import orders_in_force
from piqa_tui.core.round.questions import record_answer
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.round.stages import add_items, draft, set_stage
from piqa_tui.core.workspace.project import Project
from tests.conftest import cast_in_order
from tests.test_rounds import ARAB, culture_copy, doc_round, imported

TEAM = {"a": "amina", "b": "karim", "c": "mona"}
LEAD = "hala"


def run(*args: object, codes: tuple[int, ...] = (0, 1)) -> str:
    """``piqa-tui ARGS`` in this process: its exit code and output (one outside ``codes`` fails the test)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    assert code in codes, f"{args}: {err.getvalue()}"
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue()
    return f"exit {code}\n{out.getvalue()}{err.getvalue()}".replace(str(Path(str(args[1])).parent), "MACHINE")


def work(project: Project, rng: random.Random, steps: int) -> None:
    """``steps`` random actions of the project's annotator on the first twenty items (refusals are part of it)."""
    ids = [item.id for item in project.items[:20]] + [item.id for item in project.items if item.id.startswith("new-")]
    declared = round_in_force(project.workspace)
    for _ in range(steps):
        item = rng.choice(ids)
        action = rng.choice(
            ["vote", "vote", "vote", "withdraw", "answer", "answer", "edit", "swap", "stage", "adjudicate"]
            + ["undo", "redo", "resolve", "flag", "note", "write"]
        )
        with contextlib.suppress(PiqaError):
            act(project, rng, action, item, declared)


def act(project: Project, rng: random.Random, action: str, item_id: str, declared) -> None:  # noqa: ANN001
    if action in ("vote", "withdraw"):
        count = len(project.item(item_id).solutions)
        order = orders_in_force(project).of(project.annotator, item_id, count)
        choice = "" if action == "withdraw" else rng.choice([*map(str, range(count)), "skip"])
        cast_in_order(project, item_id, choice, order)
    elif action == "answer" and declared is not None:
        question = rng.choice(declared.questions)
        raw = rng.choice(["y", "n", ""] if question.kind == "yes/no" else ["1", "3", "5", "x y", ""])
        record_answer(project, item_id, question, raw)
    elif action == "edit":
        field = rng.choice(["prompt", "solution0", "solution1"])
        item = project.item(item_id)
        now = item.prompt if field == "prompt" else item.solutions[int(field[-1])]
        project.edit(item_id, {field: f"{now} {project.annotator[0]}{rng.randint(0, 9)}"})
    elif action == "swap":
        project.swap_solutions(item_id, 0, 1)
    elif action == "stage":
        set_stage(project, [item_id], rng.choice(["review", "validation", "done"]))
    elif action == "adjudicate":
        project.adjudicate(item_id, rng.choice([0, 1]), f"{project.annotator} {rng.randint(0, 9)}")
    elif action in ("undo", "redo"):
        project.undo() if action == "undo" else project.redo()
    elif action == "resolve" and (found := project.conflicts()):
        project.resolve_conflict(found[0].item_id, found[0].field, rng.choice([found[0].current, found[0].other]))
    elif action == "write":  # a new item, at stage draft
        made = draft(f"{project.annotator} {rng.randint(0, 99)}", ["لا", "نعم"], rng.choice([0, 1, None]))
        add_items(project, [made])
    elif action == "flag":
        project.set_flag(item_id, "typo", on=rng.random() < 0.7)
    elif action == "note":
        project.set_note(item_id, f"{project.annotator}: {rng.randint(0, 99)}")


def exchange(machines: dict[str, Path], data: str, rng: random.Random, folder: Path, n: int) -> None:
    """One random hand-over: a merge, or the votes and answers files of one machine imported on another."""
    source, target = rng.sample(sorted(machines), 2)
    if rng.random() < 0.5:
        run("workspace", "merge", machines[target] / data, machines[source] / f"{data}.piqa.sqlite")
        return
    votes, answers = folder / f"votes-{n}.tsv", folder / f"answers-{n}.tsv"
    current = ["--current"] if rng.random() < 0.4 else []
    run("votes", "export", machines[source] / data, votes, "--answers", answers, "--force", *current)
    run("votes", "import", machines[target] / data, votes, "--answers", answers)


def outputs(dataset: Path, folder: Path) -> dict[str, str]:
    found = {}
    for name, extra in (("release", []), ("only_decided", ["--only-decided"])):
        out = folder / f"{dataset.parent.name}-{name}.tsv"
        run("export", dataset, "--to", out, "--decided", "--force", *extra)
        found[name] = out.read_text(encoding="utf-8")
    for name, command in (("agree", ["agree"]), ("conflicts", ["workspace", "conflicts"])):
        found[name] = run(*command, dataset, "--json")
    found["progress"] = run("progress", dataset, "--json", codes=(0, 2))  # 2: the lead undid the round's import
    found["stages"] = run("stage", dataset, "--json")
    return found


@pytest.mark.parametrize("seed", range(20))
def test_three_laptops_in_a_round_end_with_one_state_whatever_the_exchanges(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    dataset = imported(culture_copy(_folder(tmp_path / "origin")), doc_round(ARAB, whole=True))
    machines = {}
    for name in TEAM:
        shutil.copytree(dataset.parent, tmp_path / name)
        machines[name] = tmp_path / name
    for n in range(5):
        for name, who in TEAM.items():
            project = Project.open(machines[name] / dataset.name, annotator=rng.choice([who, who, LEAD]))
            work(project, rng, rng.randint(3, 10))
            project.workspace.close()  # type: ignore[union-attr]
        for k in range(rng.randint(1, 3)):
            exchange(machines, dataset.name, rng, tmp_path, 10 * n + k)
    for source, target in (("b", "a"), ("c", "a"), ("a", "b"), ("a", "c")):  # every event everywhere
        run("workspace", "merge", machines[target] / dataset.name, machines[source] / f"{dataset.name}.piqa.sqlite")
    found = {name: outputs(machines[name] / dataset.name, tmp_path) for name in TEAM}
    for what in found["a"]:
        assert found["a"][what] == found["b"][what] == found["c"][what], f"{what} differs between machines"


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


def snapshot(project: Project) -> dict[str, object]:
    """Everything a screen shows of the log's state, for comparing a long-open project with a freshly opened one."""
    from piqa_tui.core.round.questions import project_answers
    from piqa_tui.core.round.stages import recorded_stages
    from piqa_tui.core.votes.decisions import decisions

    return {
        "items": [(item.id, item.prompt, item.solutions, item.label) for item in project.items],
        "votes": {
            i: {a: (v.choice, v.time, v.cast) for a, v in by.items()} for i, by in project.state.votes.items() if by
        },
        "adjudications": dict(project.state.adjudications),
        "conflicts": sorted(map(repr, project.conflicts())),
        "notes": {k: v for k, v in project.state.notes.items() if v},
        "flags": {k: dict(v) for k, v in project.state.flags.items() if v},
        "decisions": {k: (d.status, d.label) for k, d in decisions(project).items()},
        "stages": dict(recorded_stages(project)),
        "answers": project_answers(project).by_question,
    }


@pytest.mark.parametrize("seed", range(8))
def test_two_open_screens_follow_the_log_as_a_fresh_open_reads_it(tmp_path: Path, seed: int) -> None:
    """Two long-open projects (two TUIs) on the server's workspace, a laptop copy merged in and its votes and
    answers files imported now and then, random work on all three: after every step each open project, refreshed,
    holds what a project opened afresh reads (the incremental replay and the first read agree)."""
    rng = random.Random(seed)
    dataset = imported(culture_copy(_folder(tmp_path / "server")), doc_round(ARAB, whole=True))
    shutil.copytree(dataset.parent, tmp_path / "laptop")
    laptop = tmp_path / "laptop" / dataset.name
    screens = [Project.open(dataset, annotator="amina"), Project.open(dataset, annotator="karim")]
    away = Project.open(laptop, annotator="mona")
    for step in range(40):
        n = rng.random()
        if n < 0.1:
            run("workspace", "merge", dataset, f"{laptop}.piqa.sqlite")
        elif n < 0.2:
            exchange({"l": laptop.parent, "s": dataset.parent}, dataset.name, random.Random(step), tmp_path, step)
        else:
            work(rng.choice([*screens, away]), rng, 1)
        fresh = snapshot(Project.open(dataset, annotator="lead", create=False))
        for screen in screens:
            screen.refresh()
            assert snapshot(screen) == fresh, f"step {step}: {screen.annotator}'s open project differs"
