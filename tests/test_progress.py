"""Long commands say what they are doing on a terminal, and nothing anywhere else.

The commands run in this process with stderr on a real pseudo-terminal (what
the user's terminal is) or on a pipe (a script, a log): the progress line is
drawn, rewritten and cleared on the first, and never reaches the second, nor
``--json`` output, nor stdout.
"""

from __future__ import annotations

import contextlib
import io
import os
import pty
from collections.abc import Iterator
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.cli.progress import CLEAR_LINE, ProgressLine
from tests.conftest import copy_sample


@contextlib.contextmanager
def stderr_on_a_terminal() -> Iterator[list[str]]:
    """sys.stderr on a pseudo-terminal for the block; what reached the terminal is in the list afterwards."""
    master, slave = pty.openpty()
    terminal = open(slave, "w", encoding="utf-8", closefd=True)  # noqa: SIM115 (closed below)
    seen: list[str] = []
    try:
        with contextlib.redirect_stderr(terminal):
            yield seen
        terminal.flush()
    finally:
        terminal.close()
    seen.append(_drain(master))


def _drain(master: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's other end is closed: all has been read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def _on_terminal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with stderr_on_a_terminal() as seen:
        code = main(argv)
    return code, capsys.readouterr().out, seen[0]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return copy_sample("darija-algerian.tsv", tmp_path)


@pytest.mark.parametrize(
    ("command", "steps"),
    [
        (["stats"], ["reading darija-algerian.tsv", "counting"]),
        (["validate"], ["reading darija-algerian.tsv", "checking"]),
        (["agree"], ["reading darija-algerian.tsv", "counting the votes"]),
        (["card"], ["reading darija-algerian.tsv", "describing"]),
        (["dedup"], ["reading darija-algerian.tsv", "finding duplicates"]),
    ],
)
def test_a_terminal_sees_each_step_then_a_cleared_line(
    data: Path, capsys: pytest.CaptureFixture[str], command: list[str], steps: list[str]
) -> None:
    code, out, terminal = _on_terminal([*command, str(data)], capsys)
    assert code in (0, 1)
    positions = [terminal.find(step) for step in steps]
    assert -1 not in positions and positions == sorted(positions), terminal
    after = terminal[terminal.rindex(steps[-1]) :]
    assert CLEAR_LINE in after  # the line is erased once the work is done
    assert "\r" not in out and "\x1b" not in out  # stdout, the result, never carries the line


def test_card_to_a_file_says_it_is_writing(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, terminal = _on_terminal(["card", str(data), "--to", str(tmp_path / "README.md")], capsys)
    assert code == 0 and "writing README.md" in terminal and "wrote" in out


@pytest.mark.parametrize("command", ["stats", "validate", "agree", "dedup"])
def test_json_gets_no_progress_even_on_a_terminal(data: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    code, out, terminal = _on_terminal([command, str(data), "--json"], capsys)
    assert code in (0, 1) and "reading" not in terminal and CLEAR_LINE not in terminal
    assert out.lstrip().startswith("{")


@pytest.mark.parametrize("command", ["stats", "validate", "agree", "card", "dedup"])
def test_a_pipe_gets_no_progress(data: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    code = main([command, str(data)])
    captured = capsys.readouterr()
    assert code in (0, 1)
    assert "reading" not in captured.err and "\r" not in captured.err + captured.out
    assert "\x1b" not in captured.err + captured.out


def test_an_error_after_progress_is_one_clean_line(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, terminal = _on_terminal(["stats", str(data), "--by", "no-such-column"], capsys)
    assert code != 0 and "reading" in terminal
    last = terminal[terminal.rindex(CLEAR_LINE) + len(CLEAR_LINE) :]
    assert last.count("\n") == 1 and "no-such-column" in last, terminal


def test_counts_are_drawn_at_most_ten_times_a_second_and_always_at_the_end() -> None:
    stream = io.StringIO()
    line = ProgressLine(True, stream)
    for done in range(1, 100_001):
        line.count("checking", done, 100_000)
    drawn = stream.getvalue().count(CLEAR_LINE)
    assert 1 <= drawn < 100_000 and stream.getvalue().endswith("checking 100,000/100,000 (100%)")
    line.end()
    assert stream.getvalue().endswith(CLEAR_LINE)


def test_data_in_the_line_is_made_safe_and_kept_to_one_line() -> None:
    stream = io.StringIO()
    ProgressLine(True, stream).show("reading a\x1b]0;pwned\x07b\nc.tsv")
    shown = stream.getvalue().removeprefix(CLEAR_LINE)
    assert "\x1b" not in shown and "\n" not in shown and "\\x1b" in shown


def test_disabled_writes_nothing() -> None:
    stream = io.StringIO()
    line = ProgressLine(False, stream)
    line.show("reading")
    line.count("checking", 1, 2)
    line.end()
    assert stream.getvalue() == ""
