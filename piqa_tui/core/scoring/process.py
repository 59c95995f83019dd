"""The model in a child process: a native crash in llama.cpp costs a score, never the session.

``ProcessBackend`` speaks the backend protocol to its callers and runs any
backend (the local llama.cpp one) in a child: a fresh interpreter started with
``subprocess`` (forking a process that runs the TUI's threads is unsafe, and
``multiprocessing``'s spawn wants a real ``sys.stderr``, which Textual
replaces). Calls and answers are pickled over two pipes of the child's own,
framed by ``multiprocessing.connection.Connection``. If the child dies (a
segmentation fault, an abort, the out-of-memory killer), the caller gets a
``ModelCrashed`` naming the signal and the last words llama.cpp wrote, and the
next ``load`` (or ``score``) starts a fresh child: restarting the model is
pressing ``m`` again.

The child's standard output and error go to a file, not the terminal: native
code writes there (ggml's assertions, abort messages), and in the TUI those
bytes would land in the middle of the screen; the file's last line is quoted
when the child dies.

A backend may name methods in ``streams`` (text generation): those run with a ``ChildChannel`` that sends the
parent progress while they work (each token as it comes) and sees the parent's cancel (``ProcessBackend.stream``).
"""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.backend import ContinuationScore, ScoreRequest

_CLOSE_WAIT = 5.0  # seconds a child may take to free its model before it is killed
_STDERR_TAIL = 4096  # bytes of the child's stderr read back for the message
_CANCEL_POLL = 0.05  # seconds between looks at the caller's cancel while a streaming call runs


class ModelCrashed(ModelError):
    """The model's process died (signal, abort, out of memory); the next use starts a new one."""


# --------------------------------------------------------------------------- the child


def _child_main(conn: _Duplex) -> None:
    """The child's loop: build the backend from the first message, then answer (method, args) calls."""
    try:
        factory, kwargs = conn.recv()
        module_name, _, class_name = factory.rpartition(".")
        module = importlib.import_module(module_name)
        backend = getattr(module, class_name)(**kwargs)
    except Exception as exc:  # reported to the parent, which raises it as a ModelError
        conn.send(("error", _describe_exception(exc)))
        return
    conn.send(("ok", None))
    streams = getattr(backend, "streams", ())
    while True:
        try:
            method, args = conn.recv()
        except EOFError:  # the parent is gone
            break
        if method == CANCEL:  # a cancel that came after the call it meant had finished: nothing to answer
            continue
        try:
            extra = (ChildChannel(conn),) if method in streams else ()
            answer = getattr(backend, method)(*args, *extra)
        except Exception as exc:
            conn.send(("error", _describe_exception(exc)))
            continue
        conn.send(("ok", answer))
        if method == "close":
            break


def _describe_exception(exc: Exception) -> str:
    return str(exc) if isinstance(exc, ModelError) else f"the model failed: {type(exc).__name__}: {exc}"


class _Duplex:
    """Two one-way pipe connections used as one: ``recv`` from the parent, ``send`` to it."""

    def __init__(self, incoming: Connection, outgoing: Connection) -> None:
        self.recv, self.send, self.poll = incoming.recv, outgoing.send, incoming.poll


CANCEL = "cancel"  # the parent's word, sent while a streaming call runs, that it should stop


class ChildChannel:
    """What a streaming method (one its backend names in ``streams``) gets as its last argument in the child:
    ``emit`` sends the parent a piece of progress (a token, a finished item) while the call runs, ``cancelled``
    says whether the parent asked it to stop (it checks the pipe without waiting)."""

    def __init__(self, conn: _Duplex) -> None:
        self.conn = conn
        self.stop = False

    def emit(self, payload: object) -> None:
        self.conn.send(("progress", payload))

    def cancelled(self) -> bool:
        while not self.stop and self.conn.poll():
            method, _args = self.conn.recv()
            self.stop = method == CANCEL
        return self.stop


# --------------------------------------------------------------------------- the parent


# Signals that end a child, with the likely cause in words.
_SIGNAL_CAUSES: dict[int, str] = {
    signal.SIGSEGV: "a crash in native code",
    signal.SIGBUS: "a crash in native code",
    signal.SIGABRT: "llama.cpp aborted",
    signal.SIGILL: "an instruction this CPU lacks",
    signal.SIGKILL: "perhaps out of memory",
    signal.SIGTERM: "terminated",
}


def _signal_text(exitcode: int | None) -> str:
    """How the child ended, in words: 'was killed by SIGSEGV (a crash in native code)'."""
    if exitcode is None:
        return "stopped answering"
    if exitcode >= 0:
        return f"exited with status {exitcode}"
    number = -exitcode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    why = _SIGNAL_CAUSES.get(number)
    return f"was killed by {name}" + (f" ({why})" if why else "")


class ProcessBackend:
    """A backend (``factory``, a dotted class name, built with ``kwargs``) run in a child process.

    ``describe`` answers from ``local``, an unloaded instance in this process
    (so the cache key needs no child), merged with the child's answer once it
    is loaded. Calls are serialised by a lock: the pipe carries one at a time.
    """

    def __init__(self, factory: str, kwargs: dict[str, Any], local: Any = None) -> None:
        self.factory = factory
        self.kwargs = kwargs
        self.local = local
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None  # answers from the child
        self._send: Connection | None = None  # calls to the child
        self._stderr_path = ""
        self._loaded_info: dict[str, object] = {}
        self._lock = threading.Lock()
        self.doing = ""  # what the child was asked last, for the crash message

    # -- protocol -----------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return bool(self._loaded_info) and self._alive()

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._process.pid if self._alive() else None  # type: ignore[union-attr]

    def _alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def describe(self) -> dict[str, object]:
        info: dict[str, object] = dict(self.local.describe()) if self.local is not None else {}
        if not info and self._process is None:
            self.load()
        info.update(self._loaded_info)
        return info

    def load(self) -> None:
        with self._lock:
            if self._loaded_info:
                if self._alive():
                    return
                # It died between calls: say so once (this also forgets it), start afresh on the next call.
                raise self._crashed("waiting for work")
            self._start()
            self._call("load", (), "loading the model")
            self._loaded_info = dict(self._call("describe", (), "describing the model"))

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[ContinuationScore, ...]]:
        self.load()
        with self._lock:
            return self._call("score", (list(requests),), "scoring")

    def stream(
        self, method: str, args: tuple, on_progress: Callable[[Any], None], cancel: threading.Event | None
    ) -> Any:
        """Call a streaming ``method`` of the backend (see ``ChildChannel``): each piece of progress it emits is
        handed to ``on_progress`` as it comes, and setting ``cancel`` asks it to stop; returns its answer."""
        self.load()
        with self._lock:
            assert self._conn is not None and self._send is not None
            self.doing = "generating"
            try:
                self._send.send((method, args))
                asked = False
                while True:
                    if cancel is not None and cancel.is_set() and not asked:  # seen between tokens, however fast
                        self._send.send((CANCEL, ()))
                        asked = True
                    if not self._conn.poll(_CANCEL_POLL):
                        continue
                    status, answer = self._conn.recv()
                    if status != "progress":
                        break
                    on_progress(answer)
            except (EOFError, OSError):
                raise self._crashed(self.doing) from None
            if status == "error":
                raise ModelError(answer)
            return answer

    def close(self) -> None:
        with self._lock:
            if self._process is None:
                return
            try:
                self._send.send(("close", ()))  # type: ignore[union-attr]
                if self._conn.poll(_CLOSE_WAIT):  # type: ignore[union-attr]
                    self._conn.recv()  # type: ignore[union-attr]
                self._process.wait(_CLOSE_WAIT)
            except (OSError, EOFError, subprocess.TimeoutExpired):
                pass  # _reap kills what did not stop
            self._reap()

    def __enter__(self) -> ProcessBackend:
        self.load()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- the pipe -------------------------------------------------------------------

    def _start(self) -> None:
        """Start a fresh child (after a crash, the dead one is cleaned up first)."""
        self._reap()
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        fd, self._stderr_path = tempfile.mkstemp(prefix="piqa-tui-model-", suffix=".log")
        package_root = str(Path(__file__).resolve().parents[3])  # this very piqa_tui, not another install
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(to_child_r), str(from_child_w)],
                stdin=subprocess.DEVNULL,
                stdout=fd,
                stderr=fd,
                pass_fds=(to_child_r, from_child_w),
                env=env,
                start_new_session=True,  # ctrl-c in the terminal is the parent's to handle
            )
        finally:
            for end in (to_child_r, from_child_w, fd):
                os.close(end)
        self._process = process
        self._send = Connection(to_child_w, readable=False)
        self._conn = Connection(from_child_r, writable=False)
        self._call(None, ((self.factory, self.kwargs),), "starting the model process")

    def _call(self, method: str | None, args: tuple, doing: str) -> Any:
        """Send one call (None: the backend to build, ``args[0]``) and return its answer."""
        assert self._conn is not None and self._send is not None
        self.doing = doing
        try:
            self._send.send((method, args) if method is not None else args[0])
            status, answer = self._conn.recv()
        except (EOFError, OSError):  # a broken pipe is an OSError too
            raise self._crashed(doing) from None
        if status == "error":
            if method is None:  # the backend could not even be built: no child worth keeping
                self._reap()
            raise ModelError(answer)
        return answer

    def _crashed(self, doing: str) -> ModelCrashed:
        process = self._process
        exitcode = None
        if process is not None:
            try:
                exitcode = process.wait(_CLOSE_WAIT)
            except subprocess.TimeoutExpired:
                pass
        how = _signal_text(exitcode)
        last = self._stderr_tail()
        self._reap()
        detail = f"; its last words: {last}" if last else ""
        return ModelCrashed(f"the model process {how} while {doing}{detail}")

    def _stderr_tail(self) -> str:
        """The last non-empty line the child wrote on stderr (ggml's assertion, an abort message)."""
        try:
            with open(self._stderr_path, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - _STDERR_TAIL))
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        lines = [line.strip() for line in lines if line.strip()]
        return lines[-1][:200] if lines else ""

    def _reap(self) -> None:
        """Forget a dead (or failed) child: close the pipes, collect the process, remove its log."""
        for conn in (self._conn, self._send):
            if conn is not None:
                conn.close()
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait()
        self._process = self._conn = self._send = None
        self._loaded_info = {}
        self._remove_stderr()

    def _remove_stderr(self) -> None:
        if self._stderr_path:
            try:
                os.unlink(self._stderr_path)
            except OSError:
                pass
            self._stderr_path = ""


if __name__ == "__main__":  # the child: python -m piqa_tui.core.scoring.process READ_FD WRITE_FD
    _child_main(_Duplex(Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False)))
