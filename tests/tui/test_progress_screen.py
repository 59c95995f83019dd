"""The progress screen (P) on the Arab-culture round: figures counted by hand, who sees whose line."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from piqa_tui.core.round.recorded import assignment_in_force
from piqa_tui.core.workspace.log import Change
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.screens.progress import ProgressScreen
from tests.test_rounds import ARAB, culture_copy, doc_round, imported

from .conftest import curate, make_app, settled_after, wait_for

TIMES = {"karim": ["09:00:00", "09:01:00", "09:04:00"], "amina": ["10:00:00"]}  # karim: gaps 60 s and 180 s


def culture_round(folder: Path) -> tuple[Path, dict[str, list[str]]]:
    """The Arab-culture round assigned, karim's three items and one of amina's two voted at known times."""
    data = imported(culture_copy(folder), doc_round(ARAB))
    project = Project.open(data, annotator="hala")
    assignment = assignment_in_force(project.workspace)
    mine = {name: assignment.of(name) for name in TIMES}
    assert len(mine["karim"]) == 3 and len(mine["amina"]) == 2  # as docs/rounds.md draws it
    for name, times in TIMES.items():
        for item_id, clock in zip(mine[name], times, strict=False):
            change = Change(item_id, "choice", project.vote_key(item_id, "0"), "0")
            project.workspace.append(name, "vote", [change], time=f"2026-11-20T{clock}.000000Z")
    return data, mine


def body_text(screen: ProgressScreen, width: int = 140) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(screen.query_one("#progress-body", Static).content)
    return console.export_text()


async def open_progress(pilot) -> ProgressScreen:
    await pilot.press("P")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ProgressScreen) and pilot.app.screen.counted)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ProgressScreen)
    return screen


def line_of(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(name + " "))


async def test_a_reviewer_sees_everyone_and_the_groups(tmp_path: Path) -> None:
    data, _ = culture_round(tmp_path)
    async with curate(data, annotator="hala", reviewer=True, size=(150, 50)) as pilot:
        screen = await open_progress(pilot)
        text = body_text(screen)
        # karim: 3 of 3; two gaps (60 s, 180 s): 2 items in 240 s = 30.0 items/h, median 120 s, nothing left.
        assert "30.0" in line_of(text, "karim") and " 120 " in line_of(text, "karim")
        assert line_of(text, "karim").rstrip().endswith("0 s")
        # amina: 1 of 2, one vote: no pace yet, so no time to finish.
        amina = line_of(text, "amina")
        assert "1 / 2" in amina and amina.rstrip().endswith("—")
        assert "omar" in text and "By country" in text
        # Algeria: amina's 2 items and karim's 3, one validation each; 4 done.
        algeria = line_of(text, "Algeria")
        assert "4 / 5" in algeria and "80%" in algeria
        assert "Items by validations still needed — 0: 4, 1: 26" in text
        # one validator per item under the default majority 2 of 3: no item can be agreed, each is the lead's
        assert "30 to adjudicate (under-staffed 30) by the lead: A lists them, with why" in text
        counted = screen.counted
        await pilot.press("r")  # counted again, the same
        await wait_for(pilot, lambda: screen.counted > counted)
        assert body_text(screen) == text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(pilot.app.screen, ProgressScreen))


async def test_an_annotator_sees_their_own_line_alone(tmp_path: Path) -> None:
    data, _ = culture_round(tmp_path)
    async with curate(data, annotator="amina", size=(150, 40)) as pilot:
        text = body_text(await open_progress(pilot))
        assert "1 / 2" in line_of(text, "amina")
        assert "karim" not in text and "Algeria" not in text and "Reviewers (--reviewer) see everyone's" in text


async def test_without_a_round_the_screen_says_how_to_declare_one(tmp_path: Path) -> None:
    async with curate(culture_copy(tmp_path), annotator="hala", reviewer=True) as pilot:
        screen = await open_progress(pilot)
        assert "No round is declared" in str(screen.query_one("#progress-title", Static).render())


def test_progress_screen(snap_compare, tmp_path: Path) -> None:
    data, _ = culture_round(tmp_path)
    app = make_app(data, annotator="hala", reviewer=True)
    assert snap_compare(app, terminal_size=(120, 40), run_before=settled_after(open_progress))


async def test_the_lead_gives_the_current_item_to_a_validator_and_p_shows_the_panels(tmp_path: Path) -> None:
    """V on the lead's current item: the round's validators offered, the one chosen recorded as an ``assign``
    event through the write queue (u undoes it); P names the items whose panel size was set by hand."""
    from piqa_tui.cli.main import main
    from piqa_tui.tui.dialogs.prompts import ChoiceDialog

    from .conftest import current_id

    data, mine = culture_round(tmp_path)
    panel_item = mine["amina"][0]
    assert main(["assign", str(data), "--item", panel_item, "--panel", "2", "--annotator", "hala"]) == 0
    async with curate(data, annotator="hala", reviewer=True, size=(150, 50)) as pilot:
        item_id = current_id(pilot)
        before = assignment_in_force(pilot.app.session.project.workspace).items[item_id]
        await pilot.press("V")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ChoiceDialog))
        dialog = pilot.app.screen
        assert isinstance(dialog, ChoiceDialog)
        offered = {key: why for key, _, why in dialog.choices}
        assert offered[before[0]] == "has it already" and "omar" in offered
        newcomer = next(name for name in offered if name not in before and offered[name] == "")
        for _ in range(list(offered).index(newcomer)):
            await pilot.press("down")
        await pilot.press("enter")
        project = pilot.app.session.project
        await wait_for(pilot, lambda: newcomer in assignment_in_force(project.workspace).items[item_id])
        screen = await open_progress(pilot)
        assert f"panel sizes set by hand (validators per item; the round's 1 elsewhere): {panel_item} 2" in body_text(
            screen
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(pilot.app.screen, ProgressScreen))
        await pilot.press("u")
        await wait_for(pilot, lambda: assignment_in_force(project.workspace).items[item_id] == before)


async def test_giving_an_item_is_the_leads(tmp_path: Path) -> None:
    """Without --reviewer, V says whose key it is and opens nothing."""
    from piqa_tui.tui.dialogs.prompts import ChoiceDialog

    data, _ = culture_round(tmp_path)
    async with curate(data, annotator="amina", size=(150, 50)) as pilot:
        await pilot.press("V")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, ChoiceDialog)
        assert any("the lead's" in str(n.message) for n in pilot.app._notifications)


async def test_a_reviewer_sees_how_often_people_kept_the_models_words(tmp_path: Path) -> None:
    """The suggestions recorded and decided through the real store (``tests/test_kept_rates.record_model_work``):
    a row per job and model, the figures of ``piqa-tui progress``; the Arabic model's name through the bidi
    display path, its override shown, never obeyed. An annotator's screen has no such table."""
    from tests.test_kept_rates import GEMMA, QWEN, record_model_work

    data, _ = culture_round(tmp_path)
    async with curate(data, annotator="hala", reviewer=True, size=(150, 50)) as pilot:
        assert "Model suggestions" not in body_text(await open_progress(pilot))
    record_model_work(data)
    async with curate(data, annotator="hala", reviewer=True, size=(150, 50)) as pilot:
        text = body_text(await open_progress(pilot), width=170)
        assert "Model suggestions" in text and "kept rate: kept as the model wrote it / reviewed" in text
        gemma, arabic = (line.split() for line in text.splitlines() if line.startswith("classify "))
        assert gemma == ["classify", GEMMA, "3", "2", "1", "0", "1", "1", "50%"]
        assert arabic[-7:] == ["1", "1", "1", "0", "0", "0", "100%"] and "u202e" in " ".join(arabic)  # shown escaped
        assert line_of(text, "draft").split() == ["draft", QWEN, "3", "2", "1", "1", "0", "1", "50%"]
        assert line_of(text, "translate").split() == ["translate", QWEN, "1", "0", "0", "0", "0", "1", "—"]
        assert "\u202e" not in text
    async with curate(data, annotator="amina", size=(150, 40)) as pilot:
        assert "Model suggestions" not in body_text(await open_progress(pilot))
