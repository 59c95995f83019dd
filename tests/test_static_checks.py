"""The static checks CI runs with the suite: ruff (lint and format), mypy and the import-linter layer contracts.

Each tool runs as a subprocess on this checkout, with the configuration in ``pyproject.toml``, and
a failure shows the tool's own output. mypy must find no error at all in ``piqa_tui/``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1200)


def output_of(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


def test_ruff_finds_nothing() -> None:
    done = run(sys.executable, "-m", "ruff", "check", ".")
    assert done.returncode == 0, output_of(done)


def test_ruff_format_would_change_nothing() -> None:
    done = run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert done.returncode == 0, output_of(done)


def test_the_layer_contracts_hold() -> None:
    done = run(sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()")
    assert done.returncode == 0, output_of(done)
    assert "0 broken" in done.stdout, output_of(done)


def test_mypy_finds_no_error() -> None:
    done = run(sys.executable, "-m", "mypy")
    assert done.returncode == 0 and "Success: no issues found" in done.stdout, output_of(done)
