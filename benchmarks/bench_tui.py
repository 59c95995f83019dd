"""Time the TUI on a 100,000-item file: launch to first full screen, cursor moves, page moves.

Run: ``python benchmarks/bench_tui.py [--items N] [--moves M] [--keep FILE]``.

The file mixes Arabic-script (Darija) and Tamil items, two solutions that
differ by one word, and two categorical columns. Measured with Pilot
(headless, in process):

* first full screen: from ``App.run_test`` starting to the first frame drawn
  with the item list and the first item (the dataset is read and the
  workspace replayed in a worker thread meanwhile; a large file's first rows
  are shown first, and the moves below are timed once every item is read);
  once with no workspace (first open) and once with the workspace the first
  run left;
* per cursor move (j) and per page move (pagedown): from the key event
  entering the app to the frame that shows the new current item with nothing
  left to redraw (``App._display``), M of each, medians and p95. Frames come
  on Textual's 60 fps update timer, so up to ~17 ms of each figure is the
  wait for the next frame. (Pilot's ``press`` is not timed: it sleeps until
  the process looks idle, which says nothing about what the user sees.)

With tmux installed it first times the real ``piqa-tui`` process (the console
script beside this interpreter) from spawn to the first screen whose header and
first row are visible (capture-pane polled every 20 ms), which adds interpreter
start-up and imports: median of ``--runs`` fresh processes, without a workspace
and with the one the first left, wall and the process's CPU seconds by then, and
when every item was read (a large file's first rows are shown while the rest is
read: the header says ``1/…`` until then).
``--only-first-screen`` stops there. Targets: real first screen < 1 s, moves < 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from fresh_process import byte_compile, machine_line  # noqa: E402

AR_WORDS = (
    "كيفاش باش تحط شوية الما البارد السخون الملح السكر الزيت الكسكسي الطاجين الخبز الحليب "
    "فالكسكاس فالفرن قبل ما بعد تغسل تنحي الماعون البراد النعناع الشَّاي ملاعق 2 3 la machine"
).split()
TA_WORDS = (
    "இட்லி மாவு நன்றாகப் புளிக்க என்ன செய்ய வேண்டும் தண்ணீர் உப்பு சர்க்கரை காபி அரிசி சாதம் "
    "பால் எண்ணெய் சமையல் அடுப்பு குளிர் சூடான பாத்திரம் கொதிக்க வைக்கவும் மூடி இரவு"
).split()
CATEGORIES = ("cooking", "cleaning", "repairs", "clothing", "transport", "health")


def make_dataset(path: Path, n_items: int, seed: int = 0) -> Path:
    """A Global-PIQA-layout TSV of ``n_items`` minimal pairs, alternating Darija and Tamil."""
    rng = random.Random(seed)
    lines = ["id\tprompt\tsolution0\tsolution1\tlabel\tlanguage\tcategory\tenglish_translation"]
    for i in range(n_items):
        words = AR_WORDS if i % 2 == 0 else TA_WORDS
        prompt = " ".join(rng.choice(words) for _ in range(rng.randint(6, 14))) + "؟" * (i % 2 == 0)
        solution = [rng.choice(words) for _ in range(rng.randint(5, 12))]
        other = list(solution)
        other[rng.randrange(len(other))] = rng.choice(words)
        lines.append(
            "\t".join(
                (
                    f"item-{i:06d}",
                    prompt,
                    " ".join(solution) + ".",
                    " ".join(other) + ".",
                    str(rng.randint(0, 1)),
                    "ary" if i % 2 == 0 else "ta",
                    rng.choice(CATEGORIES),
                    f"How to do thing number {i}?",
                )
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _quantiles(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(len(values) * 0.95))]
    return f"median {statistics.median(values) * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms   max {values[-1] * 1000:7.1f} ms"


async def _pilot_run(path: Path, moves: int, size: tuple[int, int], think: float = 0.0) -> dict[str, object]:
    from textual import events

    from piqa_tui.core.text.bidi import BidiMode
    from piqa_tui.core.text.graphemes import WidthPolicy
    from piqa_tui.tui.app import AppSettings, PiqaApp
    from piqa_tui.tui.screens.main import MainScreen
    from piqa_tui.tui.state.session import OpenRequest
    from piqa_tui.tui.terminal import cell_widths
    from piqa_tui.tui.widgets.item.item_view import ItemView

    cell_widths.install(WidthPolicy("codepoint"))
    frames: list[float] = []
    app = PiqaApp(AppSettings(OpenRequest(path, annotator="bench"), bidi_mode=BidiMode.APP))
    original_display = app._display

    def display(screen, renderable) -> None:  # noqa: ANN001 - Textual internals
        original_display(screen, renderable)
        frames.append(time.perf_counter())

    app._display = display  # type: ignore[method-assign]
    start = time.perf_counter()
    result: dict[str, object] = {}
    async with app.run_test(size=size) as pilot:
        while not (
            isinstance(app.screen, MainScreen) and app.screen.query(ItemView) and app.screen.item_view.item is not None
        ):
            await asyncio.sleep(0.001)
        main = app.screen
        while not frames or frames[-1] < start or main._dirty_widgets or main._layout_required:
            await asyncio.sleep(0.001)
        shown_at = time.perf_counter()
        while frames[-1] > shown_at - 0.0001 and time.perf_counter() - shown_at < 0.05:
            await asyncio.sleep(0.002)  # the first frame may come in two parts: take the last
        result["first_screen"] = frames[-1] - start
        while not (
            app.session is not None and isinstance(app.screen, MainScreen) and app.screen.session is app.session
        ):
            await asyncio.sleep(0.001)  # a large file's first rows came first: the moves are timed on the whole file
        main = app.screen
        while main.item_view.item is None or main._dirty_widgets or main._layout_required:
            await asyncio.sleep(0.001)
        result["loaded"] = time.perf_counter() - start

        driver = app._driver
        assert driver is not None

        async def timed(key: str, steps: int) -> float:
            """Key sent -> the frame that shows the new current item (nothing left to draw)."""
            if think:
                await asyncio.sleep(think)  # the annotator reads; the list draws the next page meanwhile
            target_index = max(0, min(main.item_list.cursor + steps, len(main.item_list.rows) - 1))
            target = app.session.project.items[main.item_list.rows[target_index]]
            sent = time.perf_counter()
            event = events.Key(key, None)
            event.set_sender(app)
            driver.send_message(event)
            shown_at = None
            while True:
                await asyncio.sleep(0)
                if shown_at is None and main.item_view.item is target:
                    shown_at = time.perf_counter()
                dirty = main._dirty_widgets or main._layout_required or main._repaint_required or main._scroll_required
                if shown_at is not None and frames and frames[-1] >= shown_at and not dirty:
                    return frames[-1] - sent

        page = main.item_list.scrollable_content_region.height - 1
        result["move"] = [await timed("j", 1) for _ in range(moves)]
        result["page"] = [await timed("pagedown", page) for _ in range(moves)]
        result["page_up"] = [await timed("pageup", -page) for _ in range(moves // 2)]
        total = len(main.item_list.rows)
        result["last"] = [await timed("G", total), await timed("g", -total)]
        await pilot.press("q")
    return result


def tmux_first_screen(path: Path, size: tuple[int, int], total: int) -> tuple[float, float, float] | None:
    """Seconds from spawning ``piqa-tui`` in tmux to its first full screen, the CPU seconds its process had
    used by then (user + system, all threads), and the seconds until every item was read (the header's
    ``1/TOTAL``); None without tmux or when no full screen came in 30 s.

    A full screen is the header with the position (``1/TOTAL``, or ``1/…`` while a large file's first rows
    are shown and the rest is read), the list with its first row, the item view on it and the footer."""
    tmux = shutil.which("tmux")
    script = Path(sys.executable).with_name("piqa-tui")  # the console script itself, not a version manager's shim
    exe = str(script) if script.exists() else shutil.which("piqa-tui")
    if not tmux or not exe:
        return None
    socket = f"piqa-bench-{os.getpid()}-{time.monotonic_ns()}"  # a server of its own per run
    width, height = size
    start = time.perf_counter()
    command = f"exec {exe} {path} --annotator bench"
    subprocess.run(
        [tmux, "-L", socket, "new-session", "-d", "-s", "b", "-x", str(width), "-y", str(height), command],
        check=True,
    )
    try:
        pid = int(
            subprocess.run(
                [tmux, "-L", socket, "display", "-p", "-t", "b", "#{pane_pid}"], capture_output=True, text=True
            ).stdout
        )
        first: tuple[float, float] | None = None
        while time.perf_counter() - start < 30:
            screen = subprocess.run(
                [tmux, "-L", socket, "capture-pane", "-p", "-t", "b"], capture_output=True, text=True
            ).stdout
            loaded = f"1/{total}" in screen
            if (
                first is None
                and (loaded or " 1/… " in screen)
                and "item-000000   row 1" in screen
                and "q quit" in screen
            ):
                first = time.perf_counter() - start, _cpu_seconds(pid)
            if first is not None and loaded:
                return first[0], first[1], time.perf_counter() - start
            time.sleep(0.02)
        return None
    finally:
        subprocess.run([tmux, "-L", socket, "kill-server"], capture_output=True)


def _cpu_seconds(pid: int) -> float:
    """User + system seconds a process has used so far (all its threads), from /proc (nan elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tmux_series(path: Path, size: tuple[int, int], total: int, runs: int) -> None:
    """Print the median of ``runs`` real first screens, opening the file fresh (no workspace) and again."""
    for title, fresh in (("no workspace (first open)", True), ("workspace exists", False)):
        found = []
        for _ in range(runs):
            if fresh:
                for stale in path.parent.glob(path.name + ".piqa.sqlite*"):
                    stale.unlink()
            one = tmux_first_screen(path, size, total)
            if one is None:
                print("no tmux (or no full screen within 30 s): the real-process figure is left out")
                return
            found.append(one)
        walls, cpus, loaded = [w for w, _, _ in found], [c for _, c, _ in found], [t for _, _, t in found]
        each = ", ".join(f"{w:.2f}/{c:.2f}" for w, c, _ in found)
        print(
            f"first full screen, real piqa-tui in tmux, {title}: median {statistics.median(walls):.2f} s wall, "
            f"{statistics.median(cpus):.2f} s CPU (wall/CPU per run: {each}); every item read: median "
            f"{statistics.median(loaded):.2f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--width", type=int, default=120)
    parser.add_argument("--height", type=int, default=40)
    parser.add_argument("--keep", type=Path, help="write the generated file here (and reuse it if present)")
    parser.add_argument(
        "--think", type=float, default=0.3, help="seconds between keys in the second series (reading time)"
    )
    parser.add_argument("--runs", type=int, default=5, help="real first screens in tmux per series (0: none)")
    parser.add_argument(
        "--only-first-screen", action="store_true", help="only the real first screens in tmux, not the Pilot figures"
    )
    args = parser.parse_args()
    size = (args.width, args.height)

    folder = Path(tempfile.mkdtemp(prefix="piqa-bench-"))
    path = args.keep or folder / "bench-100k.tsv"
    if not path.exists():
        made = time.perf_counter()
        make_dataset(path, args.items)
        print(
            f"generated {args.items:,} items in {time.perf_counter() - made:.1f} s: {path} ({path.stat().st_size / 1e6:.1f} MB)"
        )
    for stale in path.parent.glob(path.name + ".piqa.sqlite*"):
        stale.unlink()

    print(machine_line())
    print(byte_compile())
    if args.runs:
        tmux_series(path, size, args.items, args.runs)
    if args.only_first_screen:
        shutil.rmtree(folder, ignore_errors=True)
        return
    for stale in path.parent.glob(path.name + ".piqa.sqlite*"):
        stale.unlink()

    from piqa_tui.core.workspace.project import Project

    opened = time.perf_counter()
    Project.open(path, annotator="bench", create=False)
    print(f"core Project.open alone (no workspace):     {time.perf_counter() - opened:6.2f} s")

    cold = asyncio.run(_pilot_run(path, args.moves, size))
    warm = asyncio.run(_pilot_run(path, args.moves, size))
    reading = asyncio.run(_pilot_run(path, max(20, args.moves // 4), size, think=args.think))
    print(
        f"first full screen, Pilot, first open:       {cold['first_screen']:6.2f} s (every item read: {cold['loaded']:.2f} s)"
    )
    print(
        f"first full screen, Pilot, workspace exists: {warm['first_screen']:6.2f} s (every item read: {warm['loaded']:.2f} s)"
    )
    for title, run in (("keys back to back", warm), (f"{args.think * 1000:.0f} ms between keys", reading)):
        print(f"-- {title}")
        for name, label in (("move", "cursor move (j)"), ("page", "page move (pgdn)"), ("page_up", "page move (pgup)")):
            print(f"{label:<18} n={len(run[name]):<4} {_quantiles(run[name])}")  # type: ignore[arg-type]
        print(f"G then g (jump to last / first): {', '.join(f'{t * 1000:.1f} ms' for t in run['last'])}")  # type: ignore[union-attr]
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
