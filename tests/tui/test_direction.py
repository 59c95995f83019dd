"""Paragraph direction an Arabic reader can trust: detected per paragraph, set per column with d, kept in the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.cli import open_tui as launch_module
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.direction import Direction, Directions
from piqa_tui.core.workspace.log import Workspace, default_location
from piqa_tui.tui.widgets.item.field_block import FieldText
from tests.conftest import copy_sample, launch_args

from .conftest import curate, current_id, main_screen, make_app, type_text
from .test_snapshots import opened

DZ_017_START = "l'ampoule"


async def go_to(pilot, item_id: str) -> None:
    await pilot.press("colon")
    await type_text(pilot, item_id)
    await pilot.press("enter")
    assert current_id(pilot) == item_id


def prompt_lines(pilot) -> list[str]:
    body = main_screen(pilot).item_view.block("prompt").query_one(FieldText)
    return [body.render_line(y).text for y in range(body.size.height)]


def list_row(pilot) -> str:
    item_list = main_screen(pilot).item_list
    return item_list.render_line(item_list.cursor - item_list.scroll_offset.y).text


async def test_a_darija_line_opening_in_french_reads_right_to_left(darija: Path) -> None:
    async with curate(darija) as pilot:
        await go_to(pilot, "dz-017")
        lines = prompt_lines(pilot)
        # right-aligned, and the first word in reading order is at the right end
        assert lines[0].rstrip().endswith(DZ_017_START) and lines[0].startswith(" ")
        row = list_row(pilot).rstrip()
        assert row.endswith(DZ_017_START) or row.endswith(DZ_017_START[:-2])
        assert "…" in row and row.index("…") < row.index("l'amp")  # cut where reading ends: on the left


async def test_d_sets_the_column_direction_and_the_workspace_keeps_it(darija: Path) -> None:
    async with curate(darija) as pilot:
        await go_to(pilot, "dz-017")
        await pilot.press("d")  # auto -> rtl
        assert main_screen(pilot).session.directions.of("prompt") is Direction.RTL
        await pilot.press("d")  # rtl -> ltr
        lines = prompt_lines(pilot)
        assert lines[0].startswith(DZ_017_START)  # left to right: the French word leads on the left
        row = list_row(pilot).rstrip()
        assert row.index(DZ_017_START) < row.index("ﻉﺎﺗ") and row.endswith("…")  # ellipsis on the right now
        await pilot.press("tab", "d")  # solution 1: its own column, rtl
        assert main_screen(pilot).session.directions.of("solution1") is Direction.RTL
    ws = Workspace(default_location(darija))
    assert ws.get_meta("direction:prompt") == "ltr" and ws.get_meta("direction:solutions") == "rtl"
    ws.close()
    async with curate(darija) as pilot:  # a restart: the same directions
        screen = main_screen(pilot)
        assert screen.session.directions.of("prompt") is Direction.LTR
        await go_to(pilot, "dz-017")
        assert prompt_lines(pilot)[0].startswith(DZ_017_START)


async def test_the_dataset_direction_is_set_from_the_palette_action(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = main_screen(pilot)
        await go_to(pilot, "dz-017")
        screen.action_cycle_dataset_direction()  # auto -> rtl
        screen.action_cycle_dataset_direction()  # rtl -> ltr
        await pilot.pause()
        assert screen.session.directions.dataset is Direction.LTR
        assert prompt_lines(pilot)[0].startswith(DZ_017_START)


def test_the_config_sets_directions_per_dataset_and_column(
    tmp_path: Path, darija: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    config.write_text(
        'direction = "ltr"\n[directions]\n"darija-algerian.tsv" = "rtl"\n'
        '"*:msa_translation" = "ltr"\n"darija-algerian.tsv:msa_translation" = "rtl"\n"*:note" = "ltr"\n'
        '"other.tsv:prompt" = "ltr"\n'
    )
    request = launch_module.settings_from(launch_args(path=str(darija))).request
    assert request is not None
    assert request.directions == Directions(
        Direction.RTL, (("msa_translation", Direction.RTL), ("note", Direction.LTR))
    )
    config.write_text('[directions]\n"darija-algerian.tsv:prompt" = "sideways"\n')
    with pytest.raises(
        PiqaError,
        match='directions."darija-algerian.tsv:prompt" = .sideways. is not valid; it should be one of "auto", "rtl", "ltr"',
    ):
        launch_module.settings_from(launch_args(path=str(darija)))


async def test_what_the_tui_sets_wins_over_the_config(darija: Path) -> None:
    ws = Workspace(default_location(darija))
    ws.set_meta({"direction:prompt": "ltr"})
    ws.close()
    configured = Directions(Direction.RTL, (("prompt", Direction.RTL),))
    async with curate(darija, directions=configured) as pilot:
        directions = main_screen(pilot).session.directions
        assert directions.of("prompt") is Direction.LTR and directions.of("solution0") is Direction.RTL


MIXED = "حط joint هنا"


def one_item(tmp_path: Path, solution: str) -> Path:
    path = tmp_path / "mixed.tsv"
    path.write_text(f"id\tprompt\tsolution0\tsolution1\tlabel\nm-1\tكيفاش؟\t{solution}\tx y\t0\n", encoding="utf-8")
    return path


def screen_column(editor, cursor: int) -> int:
    """Where on screen the cluster the cursor stands before is drawn (its index in visual order)."""
    (line,) = editor.lines(max(2, editor.content_size.width))
    starts = [unit.start for unit in line.units]
    return starts.index(cursor) if cursor in starts else (-1 if line.rtl else len(starts))


async def test_arrows_move_on_screen_through_a_latin_word_in_an_arabic_line(tmp_path: Path) -> None:
    from piqa_tui.tui.widgets.item.field_editor import FieldEditor

    async with curate(one_item(tmp_path, MIXED)) as pilot:
        await pilot.press("tab", "e", "home")
        editor = pilot.app.focused
        assert isinstance(editor, FieldEditor)
        columns, visited = [screen_column(editor, 0)], []
        for _ in range(len(MIXED)):
            await pilot.press("left")
            columns.append(screen_column(editor, editor.cursor))
            visited.append(editor.cursor)
        assert columns == sorted(columns, reverse=True)  # every ← went left on screen, or stayed at the edge
        assert columns[-1] == -1  # the caret after the last cluster, at the left end of an RTL line
        joint = [MIXED[i] for i in visited if i < len(MIXED) and MIXED[i].isascii() and MIXED[i] != " "]
        assert "".join(joint) == "tnioj"  # leftward on screen through "joint" is backward in reading order
        for _ in range(len(MIXED)):
            await pilot.press("right")
        assert editor.cursor == 0  # back at the right end: the first cluster in reading order
        assert "reading order" not in footer_text(pilot)


def footer_text(pilot) -> str:
    from textual.widgets import Footer

    footer = pilot.app.screen.query_one(Footer)
    return " ".join(str(key.render()) for key in footer.query("FooterKey"))


async def test_outside_app_mode_arrows_follow_reading_order_and_the_footer_says_so(tmp_path: Path) -> None:
    from piqa_tui.core.text.bidi import BidiMode

    async with curate(one_item(tmp_path, MIXED), bidi_mode=BidiMode.TERMINAL) as pilot:
        await pilot.press("tab", "e", "home")
        editor = pilot.app.focused
        steps = []
        for _ in range(4):
            await pilot.press("left")  # mirrored in an RTL paragraph: on in reading order
            steps.append(editor.cursor)
        assert steps == [1, 2, 3, 4]
        await pilot.pause()
        assert "reading order" in footer_text(pilot)


def test_snapshot_mixed_line_detected_right_to_left(snap_compare, tmp_path: Path) -> None:
    """dz-017 ("l'ampoule تاع الصالة…") right-aligned, French word at the right end, ellipsis on the left."""
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(100, 30), run_before=opened("colon", text="dz-017", then=["enter"]))


def test_snapshot_mixed_line_set_left_to_right(snap_compare, tmp_path: Path) -> None:
    """The same item after d, d: the prompt column is left-to-right; the solutions stay detected."""
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    assert snap_compare(
        app, terminal_size=(100, 30), run_before=opened("colon", text="dz-017", then=["enter", "d", "d"])
    )
