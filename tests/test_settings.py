"""The config file is read into one typed Config and checked once: every bad value is one line naming the key.

The matrix runs each bad config through a batch command (``stats``) and the
TUI's launcher; a config that is a FIFO, a device or a folder is run in a
child process with a time limit, since a regression there would hang. The
template attack strings are refused at load with the template's name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.cli import open_tui
from piqa_tui.cli.main import main
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.scoring.backend import Repack, ServerChoice
from piqa_tui.core.scoring.templates import Template, get_template
from piqa_tui.core.text.bidi_mode import BidiMode
from piqa_tui.core.text.direction import Direction, Directions
from piqa_tui.core.text.graphemes import WidthPolicy
from piqa_tui.settings.config import Config, configured_directions, load_config
from tests.conftest import SAMPLES, launch_args

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = SAMPLES / "tamil.tsv"

BAD_CONFIGS = [
    ("annotator = 5\n", "annotator = 5 is not valid; it should be a non-empty quoted string"),
    ("[annotator]\nname = 'x'\n", "annotator = a table is not valid"),
    ('annotator = "amina\\u001b]0;pwned\\u0007"\n', "it should be text without control characters"),
    ('max_differences = "x"\n', "max_differences = 'x' is not valid; it should be a whole number of at least 0"),
    ("max_differences = -5\n", "max_differences = -5 is not valid; it should be a whole number of at least 0"),
    ("max_differences = true\n", "max_differences = True is not valid"),
    ('keys = "str"\n', "keys = 'str' is not valid; it should be a [keys] table"),
    ("[keys]\nundo = 5\n", "[keys] undo = 5 is not valid"),
    ("templates = 5\n", "templates = 5 is not valid"),
    ("[templates.t]\ncontext = 5\n", "template 't': its context must be text"),
    (
        '[templates.t]\ncontext = "{goal:>99999999}"\n',
        "template 't': placeholder {goal} in its context has a format spec",
    ),
    ("low_margin = -1.0\n", "low_margin = -1.0 is not valid; it should be a positive number"),
    ("sync_every_minutes = -1\n", "sync_every_minutes = -1 is not valid; it should be a whole number of at least 0"),
    ("n_gpu_layers = -2\n", "n_gpu_layers = -2 is not valid; it should be a whole number of at least -1"),
    ('n_gpu_layers = "all"\n', "n_gpu_layers = 'all' is not valid"),
    ('bidi = "sideways"\n', 'bidi = \'sideways\' is not valid; it should be one of "auto", "app", "terminal", "off"'),
    ("width_policy = 3\n", "width_policy = 3 is not valid"),
    ("model = 5\n", "model = 5 is not valid"),
    (
        "repetition_threshold = 1.5\n",
        "repetition_threshold = 1.5 is not valid; it should be a number above 0 and at most 1",
    ),
    ('repetition_semantic = "no"\n', "repetition_semantic = 'no' is not valid; it should be true or false"),
    ("repetition_semantic_threshold = 0\n", "repetition_semantic_threshold = 0 is not valid"),
    ('anotator = "amina"\n', "unknown setting 'anotator'; the settings are: annotator"),
    ("annotator = \n", "not a valid TOML config file"),
]


@pytest.mark.parametrize(("text", "message"), BAD_CONFIGS)
def test_each_bad_value_is_one_line_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    assert main(["stats", str(SAMPLE)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(config) in err, err
    assert "\x1b" not in err
    with pytest.raises(PiqaError, match=None) as raised:  # the TUI never starts half-configured
        open_tui.settings_from(launch_args(path=str(SAMPLE)))
    assert message in str(raised.value)


def test_tui_only_checks_keys_and_theme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    config.write_text('[keys]\nnope = "x"\n')
    with pytest.raises(PiqaError, match=r"\[keys\] nope is not an action"):
        open_tui.settings_from(launch_args(path=str(SAMPLE)))
    config.write_text('theme = "solarised-pink"\n')
    with pytest.raises(PiqaError, match="theme = 'solarised-pink' is not valid; it should be one of piqa-dark"):
        open_tui.settings_from(launch_args(path=str(SAMPLE)))


def test_a_good_config_is_typed(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'annotator = "amina"\nmax_differences = 3\nlow_margin = 2\nn_gpu_layers = -1\nsync_every_minutes = 5\n'
        'repetition_threshold = 0.75\nrepetition_semantic = false\nrepetition_model = "e5"\n'
        '[keys]\nundo = "u"\n[templates.plain]\ncontext = "{goal}"\n'
    )
    loaded = load_config(config)
    assert loaded == Config(
        annotator="amina",
        max_differences=3,
        low_margin=2.0,
        n_gpu_layers=-1,
        sync_every_minutes=5,
        repetition_threshold=0.75,
        repetition_semantic=False,
        repetition_model="e5",
        keys={"undo": "u"},
        templates={"plain": {"context": "{goal}"}},
    )
    assert isinstance(loaded.low_margin, float)
    assert load_config(tmp_path / "missing.toml") == Config()


def test_every_choice_comes_out_as_the_type_its_consumers_use(tmp_path: Path) -> None:
    """Enums and small frozen dataclasses, checked once: no consumer parses a setting again."""
    config = tmp_path / "config.toml"
    config.write_text(
        'bidi = "terminal"\nwidth_policy = "cluster2"\ndirection = "rtl"\nrepack = "off"\nmodel = "~/m.gguf"\n'
        '[directions]\n"*:english" = "ltr"\n[server]\nurl = "http://127.0.0.1:8000"\nconcurrency = 2\n'
    )
    loaded = load_config(config)
    assert loaded.bidi is BidiMode.TERMINAL and loaded.direction is Direction.RTL and loaded.repack is Repack.OFF
    assert loaded.width_policy == WidthPolicy("cluster2") and loaded.directions == {"*:english": Direction.LTR}
    assert loaded.server == ServerChoice("http://127.0.0.1:8000", None, 2)
    assert loaded.model == Path.home() / "m.gguf"
    assert configured_directions(loaded, "tamil.tsv") == Directions(Direction.RTL, (("english", Direction.LTR),))
    defaults = Config()
    assert defaults.bidi is BidiMode.AUTO and defaults.width_policy is None and defaults.server is None
    config.write_text('width_policy = "auto"\n')
    assert load_config(config).width_policy is None  # auto: the terminal is asked when the TUI starts


@pytest.mark.parametrize("kind", ["fifo", "folder", "devzero"])
def test_a_config_that_is_no_regular_file_is_one_line(tmp_path: Path, kind: str) -> None:
    config = tmp_path / "config.toml"
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "folder":
        config.mkdir()
    else:
        config.symlink_to("/dev/zero")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PIQA_TUI_CONFIG": str(config)}
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "stats", str(SAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and str(config) in done.stderr, done.stderr
    assert "not a regular file" in done.stderr or "is a folder" in done.stderr


ATTACKS = [
    "{goal:{goal.__class__}}",
    "{goal:>99999999}",
    "{goal.__class__.__mro__}",
    "{goal[0]}",
    "{goal!r}",
    "{goal!s:^50}",
    "{}",
    "{0}",
    "{__import__}",
    "{goal",
]


@pytest.mark.parametrize("context", ATTACKS)
def test_template_attack_strings_are_refused_with_the_templates_name(context: str) -> None:
    with pytest.raises(PiqaError, match="template 'evil'"):
        get_template("evil", {"evil": {"context": context}})
    with pytest.raises(PiqaError, match="template 'evil'"):
        Template("evil", "{goal}", " " + context.replace("goal", "solution"))


def test_plain_templates_still_render() -> None:
    from piqa_tui.core.dataset.item import Item

    template = get_template("t", {"t": {"context": "Q: {goal} {{literal}}", "continuation": " {letter}. {solution}"}})
    item = Item("a", "open a jar", ("twist", "hit"), 0, 0)
    assert template.render_context(item) == "Q: open a jar {literal}"
    assert template.render_continuations(item) == (" A. twist", " B. hit")
