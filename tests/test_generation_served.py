"""Writing through a served model: a real ``llama_cpp.server`` on 127.0.0.1 serving SmolLM2-135M-Instruct (its chat
template from the GGUF), streamed and constrained to a JSON schema; and a hostile peer — a tiny real HTTP server
in this test that answers broken streams — whose malformed events, cut streams and unfitting JSON are one line on
the result each, which records nothing."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from piqa_tui.core.errors import ModelError
from piqa_tui.core.generation.backends.kind import open_generation_backend
from piqa_tui.core.generation.protocol import STOP_CANCELLED, STOP_ERROR, ChatTurn, GenerationRequest
from piqa_tui.core.generation.served_writer import ServedWriter
from tests.test_generation_local import FRUIT, SMOLLM
from tests.test_served import running_server


def ask(text: str, **rest: object) -> GenerationRequest:
    return GenerationRequest((ChatTurn("user", text),), **rest)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def smollm_server() -> Iterator[str]:
    # llama-cpp-python's server interrupts a running stream when the next request comes (the writer then sees a
    # stream ended before its finish_reason): with concurrent requests it must be told not to.
    yield from running_server(str(SMOLLM), "--interrupt_requests", "false")


def test_a_served_model_streams_and_fits_the_schema(smollm_server: str) -> None:
    writer = open_generation_backend({"server": smollm_server, "concurrency": 2})
    assert isinstance(writer, ServedWriter)
    pieces: list[str] = []
    plain = writer.generate(ask("Name three fruits.", max_tokens=24), on_token=pieces.append)
    assert plain.ok and pieces and "".join(pieces) == plain.text
    assert writer.source().server == smollm_server and writer.source().model

    shaped = writer.generate(ask("Give a fruit and its colour as JSON.", schema=FRUIT, max_tokens=60))
    assert shaped.ok, shaped.error
    assert isinstance(shaped.data, dict) and shaped.data["colour"] in ("red", "yellow", "green")

    many = writer.generate_many([ask(f"Say {w}.", max_tokens=8, key=w) for w in ("hi", "bye", "yes")])
    assert [r.key for r in many] == ["hi", "bye", "yes"]
    assert all(r.ok for r in many), [(r.stop, r.error, r.text) for r in many]

    cancel = threading.Event()
    stopped = writer.generate(ask("Tell a long story.", max_tokens=64), lambda _piece: cancel.set(), cancel)
    assert stopped.stop == STOP_CANCELLED and stopped.tokens == 1  # the connection closed after the first piece


class Hostile(BaseHTTPRequestHandler):
    """Answers each chat completion as its model's name says: a broken event, a cut stream, JSON that does not fit
    the schema (after refusing OpenAI's ``response_format`` form, as some servers do)."""

    def log_message(self, *_args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        mode = body["model"]
        if mode == "unfitting" and body.get("response_format", {}).get("type") == "json_schema":
            self.send_response(400)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        chunk = {"choices": [{"delta": {"content": '{"fruit": '}, "finish_reason": None}]}
        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        if mode == "malformed":
            self.wfile.write(b'data: {"choices": [{"delta": {"content": "x"\n\n')
        elif mode == "unfitting":
            rest = {"choices": [{"delta": {"content": '"kiwi", "colour": "blue"}'}, "finish_reason": "stop"}]}
            self.wfile.write(f"data: {json.dumps(rest)}\n\ndata: [DONE]\n\n".encode())
        # "cut": the connection closes here, mid-answer
        self.wfile.flush()


@pytest.fixture
def hostile() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("malformed", "not JSON"),
        ("cut", "stopped mid-stream"),
        ("unfitting", "does not fit the schema at colour"),
    ],
)
def test_a_broken_answer_is_one_line_and_no_data(hostile: str, mode: str, said: str) -> None:
    writer = ServedWriter(hostile, mode)
    result = writer.generate(ask("Give a fruit.", schema=FRUIT, key="dz-7"))
    assert result.stop == STOP_ERROR and not result.ok and result.data is None and result.key == "dz-7"
    assert result.error is not None and said in result.error and "\n" not in result.error
    [again] = writer.generate_many([ask("Give a fruit.", schema=FRUIT)])
    assert again.error is not None and said in again.error


def test_a_server_that_is_not_there_is_one_line() -> None:
    writer = ServedWriter("http://127.0.0.1:9", "m")
    with pytest.raises(ModelError, match="cannot reach the model server") as caught:
        writer.generate(ask("Hello."))
    assert "\n" not in str(caught.value)
    with pytest.raises(ModelError, match="must start with http"):
        ServedWriter("127.0.0.1:9")
