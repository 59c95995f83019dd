"""Starting the TUI: options and config resolve as documented; bad ones fail in one line, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.cli import open_tui as launch_module
from piqa_tui.cli.main import main
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.bidi import BidiMode
from piqa_tui.settings.config import load_config
from piqa_tui.tui.keymap import ALL_ACTIONS
from piqa_tui.tui.screens.check_terminal import write_width_policy
from piqa_tui.tui.themes import theme_name
from tests.conftest import launch_args

from .conftest import make_app


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(path))
    return path


def test_command_line_wins_over_config(config: Path, darija: Path) -> None:
    config.write_text(
        'annotator = "amina"\nbidi = "off"\ntheme = "light"\nwidth_policy = "codepoint"\n[keys]\nundo = "ctrl+z"\n'
    )
    settings = launch_module.settings_from(launch_args(path=str(darija), bidi="app", theme="high-contrast"))
    assert settings.request is not None and settings.request.annotator == "amina"
    assert settings.bidi_mode == BidiMode.APP
    assert settings.theme == "piqa-high-contrast"
    assert settings.keys == {"undo": "ctrl+z"}


def test_an_unknown_action_in_keys_stops_the_launch(config: Path, darija: Path) -> None:
    config.write_text('width_policy = "codepoint"\n[keys]\nundo = "ctrl+z"\nnope = "x"\n')
    with pytest.raises(PiqaError, match=r"\[keys\] nope is not an action"):
        launch_module.settings_from(launch_args(path=str(darija)))


def test_low_margin_threshold_comes_from_the_config(config: Path, darija: Path) -> None:
    """The low-margin queue's threshold: the config's low_margin; one that is not a positive number stops the launch."""
    from piqa_tui.core.dataset.item import Item
    from piqa_tui.core.scoring.results import ItemScore
    from piqa_tui.core.scoring.templates import get_template
    from piqa_tui.tui.state.model_scores import LOW_MARGIN
    from piqa_tui.tui.state.session import OpenRequest, Session

    item = Item("a", "p", ("x", "y"), 0, 0)
    score = ItemScore("a", (-3.0, -5.5), (1, 1), (1, 1), 0, get_template("piqa").name)  # margin 2.5 nats
    config.write_text('width_policy = "codepoint"\nlow_margin = 3.0\n')
    settings = launch_module.settings_from(launch_args(path=str(darija)))
    assert settings.low_margin == 3.0
    session = Session.open(OpenRequest(darija), low_margin=settings.low_margin)  # as the app opens it
    session.scores.put([item], [score])
    assert session.scores.low_margin_threshold == 3.0 and session.scores.low_margin(item)
    config.write_text('width_policy = "codepoint"\nlow_margin = "high"\n')
    with pytest.raises(PiqaError, match="low_margin = 'high' is not valid; it should be a positive number"):
        launch_module.settings_from(launch_args(path=str(darija)))
    default = Session.open(OpenRequest(darija), low_margin=LOW_MARGIN)
    default.scores.put([item], [score])
    assert not default.scores.low_margin(item)


def test_the_bundled_sample_opens_without_a_path(config: Path) -> None:
    config.write_text('width_policy = "codepoint"\n')
    settings = launch_module.settings_from(launch_args())
    assert settings.request is not None and settings.request.path.name == "darija-algerian.tsv"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["/no/such/file.tsv"], "no such file"),
        (["--theme", "solarised-pink"], "unknown theme"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(config: Path, capsys, argv: list[str], message: str) -> None:
    config.write_text('width_policy = "codepoint"\n')
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.usefixtures("headless")
def test_unreadable_dataset_exits_2_after_the_app_closes(config: Path, tmp_path: Path, capsys) -> None:
    config.write_text('width_policy = "codepoint"\n')
    bad = tmp_path / "ragged.tsv"
    bad.write_text("id\tprompt\tsolution0\tsolution1\tlabel\nx\tp\ta\n", encoding="utf-8")
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "ragged rows" in err and err.count("\n") == 1


def test_width_policy_is_written_into_the_config(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('annotator = "sara"\n\n[keys]\nundo = "u"\n')
    write_width_policy("cluster2", path)
    text = path.read_text()
    assert 'width_policy = "cluster2"' in text and text.index("width_policy") < text.index("[keys]")
    write_width_policy("codepoint", path)
    assert text.count("width_policy") == 1 and 'width_policy = "codepoint"' in path.read_text()
    assert 'annotator = "sara"' in path.read_text() and 'undo = "u"' in path.read_text()


def test_keymap_ids_are_unique_and_validated(tmp_path: Path) -> None:
    ids = [a.id for a in ALL_ACTIONS]
    assert len(ids) == len(set(ids))
    path = tmp_path / "config.toml"
    path.write_text('[keys]\nnext_item = "j"\n')
    assert load_config(path, action_ids=ids).keys == {"next_item": "j"}
    path.write_text('[keys]\nnext_itme = "j"\n')
    with pytest.raises(PiqaError, match=r"\[keys\] next_itme is not an action"):
        load_config(path, action_ids=ids)


def test_theme_names() -> None:
    assert theme_name(None) == "piqa-dark"
    assert theme_name("light") == "piqa-light"
    assert theme_name("textual-dark") == "textual-dark"
    with pytest.raises(PiqaError):
        theme_name("nope")


async def test_check_terminal_screen_applies_a_mode() -> None:
    from piqa_tui.core.text.graphemes import get_width_policy

    app = make_app(None, check_terminal=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("4", "enter")
        assert get_width_policy().mode == "cluster2"
        await pilot.press("2", "enter")
        assert get_width_policy().mode == "codepoint"
        await pilot.press("q")
    assert app.return_code == 0


def test_without_a_terminal_the_tui_says_so_and_exits(config: Path, darija: Path) -> None:
    """``piqa-tui FILE < /dev/null > file`` (a script, a cron job): one line and exit 2, never a full screen
    drawn into a file that spins, waiting for keys that never come (seen: 9 minutes at 70% of a core)."""
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", str(darija)],
        stdin=subprocess.DEVNULL,  # and stdout a pipe: neither end is a terminal
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""  # no escape codes drawn into the output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "needs a terminal (stdin and stdout are not terminals)" in lines[0]
