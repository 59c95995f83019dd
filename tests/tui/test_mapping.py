"""Columns and labels fixed inside the TUI: the mapping dialog previews the first items and the workspace keeps the mapping."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Select, SelectionList, Static

from piqa_tui.core.workspace.log import Workspace, default_location
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.mapping import MappingDialog
from piqa_tui.tui.screens.main import MainScreen

from .conftest import make_app, wait_for

ONE_BASED = (
    "id\tprompt\tsolution0\tsolution1\tlabel\n"
    "a\tTo dry wet shoes\tstuff them with newspaper\tstuff them with ice\t1\n"
    "b\tTo cool soup fast\tstir it over ice water\tstir it over a flame\t1\n"
    "c\tTo keep bread soft\tstore it in a closed bag\tstore it in the sun\t1\n"
    "d\tTo open a tight jar\trun the lid under hot water\trun the lid under glue\t1\n"
    "e\tTo wake up early\tgo to bed early\tgo to bed very late\t2\n"
    "f\tTo find lost keys\tretrace your steps\tbuy a new house\t2\n"
)
UNKNOWN = "uid\tquestion_text\tfirst\tsecond\tright\nq1\tHow to boil an egg?\tin water\tin sand\tfirst\nq2\tHow to dry a towel?\tin the sun\tin a fridge\tfirst\n"


def preview(app) -> str:
    found = app.screen.query("#preview")
    return str(found.first(Static).render()) if found else ""


def written(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


async def dialog_shown(pilot) -> None:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, MappingDialog) and preview(pilot.app) != "")


async def test_one_based_labels_open_the_dialog_and_the_mapping_is_kept(tmp_path: Path) -> None:
    path = written(tmp_path, "one-based.tsv", ONE_BASED)
    app = make_app(path)
    async with app.run_test(size=(100, 40)) as pilot:
        await dialog_shown(pilot)
        assert "look 1-based" in str(app.screen.query_one(".dialog-help", Static).render())
        shown = preview(app)
        assert "gold: solution 1" in shown and "✗" not in shown  # label 1 read 1-based is the first solution
        app.screen.query_one("#base", Select).value = "0"  # what the file would mean 0-based
        await pilot.pause()
        assert "gold: solution 2" in preview(app)
        app.screen.query_one("#base", Select).value = "1"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: isinstance(app.screen, MainScreen) and app.session.project.dataset.layout.label_base == 1
        )
        items = app.session.project.items
        assert [i.label for i in items] == [0, 0, 0, 0, 1, 1]
        await wait_for(pilot, lambda: app.session.validation.complete)
        rules = {p.rule for pos, item in enumerate(items) for p in app.session.validation.problems(pos, item)}
        assert "label-out-of-range" not in rules
    ws = Workspace(default_location(path))
    assert ws.get_meta("mapping") == "prompt=prompt,solutions=solution0|solution1,label=label,label_base=1,id=id"
    ws.close()
    assert [i.label for i in Project.open(path).items] == [0, 0, 0, 0, 1, 1]  # the CLI reads it too
    app = make_app(path)
    async with app.run_test(size=(100, 40)) as pilot:  # the next open needs no --map and asks nothing
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.pause(0.2)
        assert isinstance(app.screen, MainScreen) and app.session.project.items[4].label == 1
    assert path.read_text(encoding="utf-8") == ONE_BASED  # the file itself is untouched


async def test_an_unknown_layout_is_mapped_in_the_dialog(tmp_path: Path) -> None:
    path = written(tmp_path, "unknown.tsv", UNKNOWN)
    app = make_app(path)
    async with app.run_test(size=(100, 40)) as pilot:
        await dialog_shown(pilot)
        assert "unknown layout" in str(app.screen.query_one(".dialog-help", Static).render())
        await pilot.press("ctrl+s")  # nothing chosen yet: the dialog stays
        assert isinstance(app.screen, MappingDialog) and "✗" in preview(app)
        app.screen.query_one("#prompt", Select).value = "question_text"
        solutions = app.screen.query_one("#solutions", SelectionList)
        solutions.select("first")
        solutions.select("second")
        app.screen.query_one("#label", Select).value = "right"
        await pilot.pause()
        assert "✗" in preview(app)  # "first" is no number: the 1-based reading cannot read it
        await wait_for(pilot, lambda: "✗" in preview(app))
        app.screen.query_one("#label", Select).value = ""
        await pilot.pause()
        assert "q1: How to boil an egg?" in preview(app) and "2. in sand" in preview(app)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.session.project.items[0].solutions == ("in water", "in sand")
    assert Project.open(path).items[1].prompt == "How to dry a towel?"


async def test_cancelling_the_dialog_on_an_unknown_layout_exits_with_one_line(tmp_path: Path) -> None:
    app = make_app(written(tmp_path, "unknown.tsv", UNKNOWN))
    async with app.run_test(size=(100, 40)) as pilot:
        await dialog_shown(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.error_message is not None)
    assert app.return_code == 2 and "--map prompt=COL" in app.error_message and "\n" not in app.error_message


async def test_a_kept_mapping_naming_a_column_the_file_lost_asks_again_in_the_dialog(tmp_path: Path) -> None:
    """The mapping the dialog kept names a column renamed since: the TUI opens the dialog saying so in one line
    (never a traceback), and the columns chosen there replace the kept mapping for the CLI too."""
    from tests.test_bad_input import kept_mapping_of_a_renamed_column

    path = kept_mapping_of_a_renamed_column(tmp_path)
    app = make_app(path)
    async with app.run_test(size=(100, 40)) as pilot:
        await dialog_shown(pilot)
        said = str(app.screen.query_one(".dialog-help", Static).render())
        assert "column mapping kept in its workspace" in said and "'question_text'" in said
        app.screen.query_one("#prompt", Select).value = "query"
        solutions = app.screen.query_one("#solutions", SelectionList)
        solutions.select("first")
        solutions.select("second")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        assert app.session.project.items[0].prompt == "How to boil an egg?"
    ws = Workspace(default_location(path))
    assert "prompt=query" in (ws.get_meta("mapping") or "")
    ws.close()
    assert Project.open(path).items[0].solutions == ("in water", "in sand")


async def test_cancelling_the_dialog_on_a_stale_kept_mapping_exits_with_one_line(tmp_path: Path) -> None:
    from tests.test_bad_input import kept_mapping_of_a_renamed_column

    app = make_app(kept_mapping_of_a_renamed_column(tmp_path))
    async with app.run_test(size=(100, 40)) as pilot:
        await dialog_shown(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.error_message is not None)
    assert app.return_code == 2 and "\n" not in app.error_message
    assert "'question_text'" in app.error_message and "No mapping was chosen" in app.error_message
