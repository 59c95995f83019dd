"""Shuffled validation in the TUI: two validators of the Arab-culture round, each pressing 1 on one item,
see its solutions in orders of their own and vote for the text they each saw; nothing on screen, in the
clipboard or in search says where a text stands in the file; with the round's shuffle off all is as before.
"""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from piqa_tui.core.round.order import ORDER_KIND, orders_in_force
from piqa_tui.core.scoring.results import ItemScore
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.screens.adjudication import AdjudicationScreen
from piqa_tui.tui.widgets.item.label_line import LabelLine
from piqa_tui.tui.widgets.item.score_panel import ScorePanel, ScoreView
from piqa_tui.tui.widgets.item.vote_panel import VotePanel
from piqa_tui.tui.widgets.list.item_list import ItemList
from tests.test_rounds import ARAB, culture_copy, doc_round, imported
from tests.test_shuffle import SHUFFLED

from .conftest import curate, current_id, main_screen, type_text, wait_for

COLUMNS = ("option_a", "option_b", "option_c")


def differing_item(dataset: Path) -> tuple[str, dict[str, tuple[int, ...]]]:
    """An item amina and karim see in orders that differ in the first place, and both orders."""
    project = Project.open(dataset, create=False)
    orders = orders_in_force(project)
    for item in project.items:
        found = {name: orders.of(name, item.id, 3) or () for name in ("amina", "karim")}
        if found["amina"][0] != found["karim"][0]:
            return item.id, found
    raise AssertionError("no item with different first places")


async def open_item(pilot: Pilot, item_id: str) -> None:
    screen = main_screen(pilot)
    await pilot.press("escape")  # off the assigned queue: every item
    await wait_for(pilot, lambda: len(screen.host.rows) == len(screen.project.items))
    screen.view.go_to_row(screen.project.index[item_id])
    await pilot.pause()
    assert current_id(pilot) == item_id


def shown_texts(pilot: Pilot) -> list[str]:
    return [block.text for block in main_screen(pilot).item_view.solution_blocks if block.display]


def item_view_words(pilot: Pilot) -> str:
    """Every title, caption and line of the item view that could name a position in the file."""
    view = main_screen(pilot).item_view
    parts = [str(view.title_line.content), str(view.query_one(LabelLine).content)]
    parts += [f"{b.border_title} {b.border_subtitle} {b.translation_columns}" for b in view.solution_blocks]
    return " ".join(parts + [str(view.query_one(VotePanel).content)])


def list_lines(pilot: Pilot) -> list[str]:
    item_list = main_screen(pilot).query_one(ItemList)
    return [item_list.render_line(y).text for y in range(item_list.size.height)]


async def test_two_validators_press_1_and_each_votes_for_the_text_they_saw(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), SHUFFLED)
    item_id, orders = differing_item(dataset)
    item = Project.open(dataset, create=False).item(item_id)
    seen = {name: await validate(dataset, name, item_id, orders[name]) for name in ("amina", "karim")}
    project = Project.open(dataset, create=False)
    votes = project.state.votes[item_id]
    for name in ("amina", "karim"):
        assert item.solutions[int(votes[name].choice)] == item.solutions[orders[name][0]]
    recorded = {e.annotator: e.new for e in project.workspace.events(kinds=[ORDER_KIND]) if e.item_id == item_id}
    assert recorded == {name: ",".join(map(str, order)) for name, order in orders.items()}
    assert seen["amina"] == seen["karim"]  # the list and search look the same whatever one's order


async def validate(dataset: Path, name: str, item_id: str, order: tuple[int, ...]) -> dict[str, list[str]]:
    """One validator's run on the item: what they see, copy and may not swap, then the key 1; returns what the
    list and a search showed them."""
    item = Project.open(dataset, create=False).item(item_id)
    async with curate(dataset, annotator=name) as pilot:
        screen = main_screen(pilot)
        await open_item(pilot, item_id)
        assert shown_texts(pilot) == [item.solutions[i] for i in order]
        words = item_view_words(pilot)
        assert "your own order" in words and not any(column in words for column in COLUMNS)
        await pilot.press("tab")  # down the screen: the first solution shown, whichever it is in the file
        assert screen.item_view.selected == f"solution{order[0]}"
        await pilot.press("y")
        assert pilot.app.clipboard == item.solutions[order[0]]
        said = pilot.app._notifications
        assert any("solution shown as 1" in n.message for n in said)
        assert not any(f"solution{i}" in n.message for n in said for i in range(3))
        await pilot.press("tab")  # the second place; on the next item the selection keeps its place, not its text
        following = screen.project.items[(screen.project.index[item_id] + 1) % len(screen.project.items)]
        screen.view.go_to_row(screen.project.index[following.id])
        await pilot.pause()
        assert screen.item_view.selected == f"solution{screen.session.ballots.order(following)[1]}"
        assert [b.has_class("-selected") for b in screen.item_view.solution_blocks] == [False, True, False]
        screen.view.go_to_row(screen.project.index[item_id])
        await pilot.pause()
        await pilot.press("x")  # a swap would show the file's order: refused
        await wait_for(pilot, lambda: any("shuffled validation" in n.message for n in pilot.app._notifications))
        assert screen.project.item(item_id).solutions == item.solutions
        seen = {"list": list_lines(pilot), "search": await search_rows(pilot, item.solutions[2][:12])}
        screen.view.go_to_row(screen.project.index[item_id])
        await pilot.pause()
        await pilot.press("1")
        await wait_for(pilot, lambda: name in screen.project.state.votes.get(item_id, {}))
        screen.view.go_to_row(screen.project.index[item_id])
        await pilot.pause()
        gold_place = order.index(item.label) + 1
        assert str(screen.item_view.query_one(LabelLine).content) == f"gold  {gold_place}"
        gold_marks = [bool(b.border_subtitle) for b in screen.item_view.solution_blocks if b.display]
        assert gold_marks.index(True) == gold_place - 1
        assert "✓ you voted 1" in str(screen.item_view.title_line.content)
        assert "you 1" in str(screen.item_view.query_one(VotePanel).content)
    return seen


async def search_rows(pilot: Pilot, words: str) -> list[str]:
    """The ids search lists for ``words``, then the search cleared."""
    screen = main_screen(pilot)
    await pilot.press("slash")
    await type_text(pilot, words)
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.filtering.searched(words) and screen.filtering.filters.search == words)
    await pilot.pause()
    found = [screen.project.items[pos].id for pos in screen.host.rows]
    await pilot.press("escape")
    await wait_for(pilot, lambda: len(screen.host.rows) == len(screen.project.items))
    return found


async def test_with_the_rounds_shuffle_off_everything_is_in_file_order(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    item_id = Project.open(dataset, create=False).items[3].id
    async with curate(dataset, annotator="amina") as pilot:
        screen = main_screen(pilot)
        await open_item(pilot, item_id)
        item = screen.project.item(item_id)
        assert shown_texts(pilot) == list(item.solutions)
        titles = [b.border_title for b in screen.item_view.solution_blocks]
        assert titles == [f"{n + 1} · {column}" for n, column in enumerate(COLUMNS)]
        await pilot.press("1")
        await wait_for(pilot, lambda: "amina" in screen.project.state.votes.get(item_id, {}))
        assert screen.project.state.votes[item_id]["amina"].choice == "0"
        assert screen.project.workspace.events(kinds=[ORDER_KIND]) == []


async def test_a_reviewer_sees_file_order_and_adjudication_says_so(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), SHUFFLED)
    async with curate(dataset, annotator="hala", reviewer=True) as pilot:
        screen = main_screen(pilot)
        assert shown_texts(pilot) == list(screen.current.solutions)
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AdjudicationScreen))
        title = pilot.app.screen.query_one("#adjudication-title").content
        assert "solutions shown in file order" in str(title)


def test_the_score_panel_lists_and_numbers_solutions_as_shown() -> None:
    score = ItemScore("msa-001", logliks=(-30.0, -10.0, -20.0), n_tokens=(5, 6, 7), norm_lengths=(10, 10, 10), label=1)
    order = (1, 2, 0)  # the file's second solution shown first
    lines = ScorePanel()._render_view(ScoreView(rows=3, score=score, order=order, votes=(1,), decided=1)).plain
    rows = lines.splitlines()
    assert rows[0].startswith("model   prefers 1")  # the file's solution 2, shown first
    assert [row.split()[1] for row in rows[1:4]] == ["-10.00", "-20.00", "-30.00"]
    assert "◀ acc" in rows[1] and "agrees with gold (1)" in rows[4] and "(decided 1)" in rows[4]
    plain = ScorePanel()._render_view(ScoreView(rows=3, score=score)).plain.splitlines()
    assert plain[0].startswith("model   prefers 2") and "◀ acc" in plain[2]
