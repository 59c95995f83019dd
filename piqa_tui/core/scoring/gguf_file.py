"""A GGUF model file before llama.cpp sees it: is it one, does it fit in memory, and which model is it.

llama.cpp aborts or fills the memory on a file that is not a GGUF model or
is too large, so the file is checked here first and every refusal is one line
saying what to do; the identity names a model in the score cache without
hashing gigabytes.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.machine import available_memory_bytes

GGUF_MAGIC = b"GGUF"
# Room for the context, KV cache and compute buffers beside the weights.
_RUNTIME_HEADROOM = 512 * 1024 * 1024
_IDENTITY_SPAN = 1024 * 1024


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def check_model_file(path: str | os.PathLike[str], *, on_cpu: bool = True) -> Path:
    """The model path, if it names a readable GGUF file that fits in memory; else ModelError."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ModelError(f"model file not found: {path}; pass the path of a .gguf file with --model")
    if not path.is_file():
        raise ModelError(f"model path is not a file: {path}; pass the path of a .gguf file")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ModelError(f"cannot read model file {path}: {exc.strerror}; check its permissions") from None
    if magic != GGUF_MAGIC:
        raise ModelError(
            f"{path} is not a GGUF model (it does not start with b'GGUF'); "
            "convert it with llama.cpp's convert_hf_to_gguf.py or download a .gguf file"
        )
    size = path.stat().st_size
    available = available_memory_bytes() if on_cpu else None
    if available is not None and size + _RUNTIME_HEADROOM > available:
        raise ModelError(
            f"model {path.name} needs about {_gib(size + _RUNTIME_HEADROOM)} but only "
            f"{_gib(available)} of memory is available; use a smaller quantisation "
            "or offload layers to a GPU with --n-gpu-layers"
        )
    return path


def model_identity(path: Path) -> str:
    """Name, size and a hash of the file's first and last MiB: stable across copies and touches.

    The head holds the GGUF metadata and tensor layout, the tail the last
    tensors' weights, so two different models (even fine-tunes of one base)
    do not collide, without hashing gigabytes.
    """
    size = path.stat().st_size
    digest = hashlib.sha256()
    with path.open("rb") as f:
        digest.update(f.read(_IDENTITY_SPAN))
        if size > 2 * _IDENTITY_SPAN:
            f.seek(size - _IDENTITY_SPAN)
            digest.update(f.read(_IDENTITY_SPAN))
    return f"{path.name}:{size}:{digest.hexdigest()[:16]}"
