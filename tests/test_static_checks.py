"""The static checks CI runs with the suite: ruff (lint and format), mypy and the import-linter layer contracts.

Each tool runs as a subprocess on this checkout, with the configuration in ``pyproject.toml``, and
a failure shows the tool's own output. mypy must find no error beyond ``tests/mypy-baseline.txt``,
the reviewed list of errors not yet fixed, which may only shrink: an error it does not list fails,
and so does a listed error mypy no longer finds (delete its line).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tests" / "mypy-baseline.txt"
# path:line: error: message  [code]; notes and the summary line are not errors
ERROR = re.compile(r"^(?P<path>[^:\s]+):\d+(?::\d+)?: error: (?P<message>.*?)  \[(?P<code>[a-z-]+)\]$")


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


def mypy_errors(output: str) -> Counter[str]:
    """mypy's errors as baseline lines (``path: [code] message``, no line number, so edits above do not move them)."""
    found: Counter[str] = Counter()
    for line in output.splitlines():
        if match := ERROR.match(line):
            found[f"{match['path']}: [{match['code']}] {match['message']}"] += 1
    return found


def baseline_errors(text: str) -> Counter[str]:
    return Counter(line for line in text.splitlines() if line.strip() and not line.startswith("#"))


def against_baseline(found: Counter[str], baseline: Counter[str]) -> tuple[list[str], list[str]]:
    """(errors the baseline does not list, listed errors no longer found), each line as often as it differs."""
    return sorted((found - baseline).elements()), sorted((baseline - found).elements())


def test_mypy_finds_no_error_beyond_the_baseline() -> None:
    done = run(sys.executable, "-m", "mypy")
    assert "error: " in done.stdout or done.returncode == 0, output_of(done)  # mypy itself ran
    new, fixed = against_baseline(mypy_errors(done.stdout), baseline_errors(BASELINE.read_text(encoding="utf-8")))
    where = [line for line in done.stdout.splitlines() if set(mypy_errors(line)) & set(new)]
    assert new == [], "new type errors (fix them):\n" + "\n".join(where)
    assert fixed == [], f"fixed, so delete these lines from {BASELINE.name}:\n" + "\n".join(fixed)


def test_the_baseline_comparison_sees_new_and_fixed_errors() -> None:
    output = (
        'a.py:3: error: Name "x" is not defined  [name-defined]\n'
        'a.py:9: error: Name "x" is not defined  [name-defined]\n'
        "a.py:9: note: See https://mypy.readthedocs.io\n"
        'b.py:1: error: Unused "type: ignore" comment  [unused-ignore]\n'
        "Found 3 errors in 2 files (checked 2 source files)\n"
    )
    found = mypy_errors(output)
    assert found == Counter(
        {'a.py: [name-defined] Name "x" is not defined': 2, 'b.py: [unused-ignore] Unused "type: ignore" comment': 1}
    )
    baseline = baseline_errors('# reviewed\na.py: [name-defined] Name "x" is not defined\nc.py: [misc] gone\n')
    assert against_baseline(found, baseline) == (
        ['a.py: [name-defined] Name "x" is not defined', 'b.py: [unused-ignore] Unused "type: ignore" comment'],
        ["c.py: [misc] gone"],
    )
