"""Time the TUI's ``m`` key: from the key to the current item's model scores on screen.

Run: ``python benchmarks/bench_score_key.py [--items N] [--presses M]``.

Opens the first N PIQA validation items in the real app (Pilot, headless, in
process) with the packaged Gemma 3 270M, then presses ``m`` on M items in a
row (``j`` between them). Each figure runs from just before the key is sent to
the moment the score is in the session's model results, which the item view
draws on its next frame (Textual refreshes at 60 fps, so add up to ~17 ms).
The first press also starts the model's child process (which imports
llama.cpp and loads the model); it is reported apart (target: under
2 s). Items are not in the workspace's cache (a fresh copy of the data is
used), so every press runs the model. Target: within a second.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

PIQA = ROOT / "tests" / "data" / "piqa-en"


def piqa_slice(folder: Path, n: int) -> Path:
    lines = (PIQA / "valid.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:n]
    (folder / "valid.jsonl").write_text("".join(lines), encoding="utf-8")
    labels = (PIQA / "valid-labels.lst").read_text().splitlines(keepends=True)[:n]
    (folder / "valid-labels.lst").write_text("".join(labels))
    return folder / "valid.jsonl"


async def measure(path: Path, presses: int) -> tuple[float, list[float]]:
    from piqa_tui.tui.app import AppSettings, PiqaApp
    from piqa_tui.tui.screens.main import MainScreen
    from piqa_tui.tui.state.session import OpenRequest

    app = PiqaApp(AppSettings(OpenRequest(path, annotator="bench")))
    times: list[float] = []
    async with app.run_test(size=(100, 30)) as pilot:
        while not (isinstance(app.screen, MainScreen) and app.screen.current is not None):
            await pilot.pause(0.02)
        main = app.screen
        model = main.session.scores
        for k in range(presses + 1):
            if k:
                await pilot.press("j")
            item = main.current
            start = time.perf_counter()
            await pilot.press("m")
            while model.get(item) is None:
                if time.perf_counter() - start > 300:
                    raise SystemExit(f"no score for {item.id} after 300 s")
                await asyncio.sleep(0.005)
            times.append(time.perf_counter() - start)
    return times[0], times[1:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--presses", type=int, default=20)
    args = parser.parse_args()
    os.environ.pop("PIQA_TUI_MODEL", None)  # the packaged model
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PIQA_TUI_CONFIG"] = str(Path(tmp) / "config.toml")  # no developer config
        path = piqa_slice(Path(tmp), args.items)
        first, rest = asyncio.run(measure(path, args.presses))
    rest.sort()
    p95 = rest[max(0, round(0.95 * len(rest)) - 1)]
    print(f"## `m` (score the current item), {os.cpu_count()} CPUs, packaged Gemma 3 270M\n")
    print(
        f"first press (starts the model process, which imports llama.cpp and loads the model; scores): "
        f"{first:.2f} s; load average (1 min) {os.getloadavg()[0]:.2f}"
    )
    print(
        f"next {len(rest)} presses: median {statistics.median(rest) * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms, max {rest[-1] * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
