"""The served backend: an OpenAI-compatible server that returns prompt log-probabilities (``scoring.served``).

Configured by the config file's ``[server]`` table (``url``, ``model``, ``concurrency``), checked here when the
file is read; on the command line ``--server URL`` (repeatable), ``--server-model`` and ``--concurrency``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from piqa_tui.core.errors import InputError, ModelError
from piqa_tui.core.scoring.backend import SERVED, ModelBackend, ModelChoice, ServerChoice
from piqa_tui.core.scoring.backends.kind import BackendOption, repeated
from piqa_tui.core.setting_values import invalid_setting, setting_text, setting_whole

_HOST_PORT = re.compile(r"([^@/\[\]]*@)?(\[[0-9A-Fa-f:.]+\]|[^\[\]@/:]+)(:[0-9]{1,5})?")  # a server URL's host[:port]
TABLE_KEYS = ("url", "model", "concurrency")


class ServedModel:
    """The served model's backend kind (see the module docstring)."""

    name = SERVED
    table = "server"
    options = (
        BackendOption(
            "--server",
            "score through an OpenAI-compatible server that returns prompt log-probabilities "
            "(vLLM, SGLang, python -m llama_cpp.server); repeatable, and scored after any --model",
            metavar="URL",
            repeat=True,
        ),
        BackendOption(
            "--server-model",
            "the served model's name, one per --server in order (default: the first listed)",
            metavar="NAME",
            repeat=True,
        ),
        BackendOption(
            "--concurrency",
            "requests in flight to the server at once (default 4)",
            metavar="N",
            number=True,
            at_least=1,
            default=4,
        ),
    )

    def check_table(self, value: object) -> ServerChoice:
        if not isinstance(value, dict):
            raise invalid_setting("server", value, 'a [server] table with url = "http://host:port"')
        extra = sorted(set(value) - set(TABLE_KEYS))
        if extra:
            raise invalid_setting(
                f"[server] {extra[0]}", value[extra[0]], "left out: [server] has url, model and concurrency"
            )
        url = setting_text("[server] url", value.get("url"))
        try:  # "http://[::1" would fail only when the first request is built
            parts = urlsplit(url)
            parts.port  # noqa: B018 -- reading it checks the port
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not _HOST_PORT.fullmatch(parts.netloc):
            raise invalid_setting("[server] url", url, 'a URL such as "http://127.0.0.1:8000"')
        model = setting_text("[server] model", value["model"]) if "model" in value else None
        if "concurrency" not in value:
            return ServerChoice(url, model)
        return ServerChoice(url, model, setting_whole("[server] concurrency", value["concurrency"], 1))

    def configured(self, settings: object, origin: str) -> ModelChoice:
        server = settings if isinstance(settings, ServerChoice) else None
        problem = "" if server else 'backend = "server" needs a [server] table with url = "http://host:port"'
        return ModelChoice(None, SERVED, server=server, origin=origin, problem=problem, backend=SERVED)

    def choices(self, values: Mapping[str, object], configured: Mapping[str, object]) -> list[ModelChoice]:
        servers, names = repeated(values, "server"), repeated(values, "server_model")
        if names and len(names) != len(servers):
            raise InputError(
                f"--server-model is given {len(names)} time(s) for {len(servers)} --server; "
                "give one --server-model per --server, in the same order, or none"
            )
        concurrency = values.get("concurrency")
        at_once = concurrency if isinstance(concurrency, int) else 4
        return [
            ModelChoice(None, "--server", server=ServerChoice(str(url), str(names[i]) if names else None, at_once))
            for i, url in enumerate(servers)
        ]

    def with_options(
        self, choice: ModelChoice, values: Mapping[str, object], configured: Mapping[str, object]
    ) -> ModelChoice:
        return choice

    def usable(self, choice: ModelChoice) -> None:
        if choice.server is None:
            raise ModelError(choice.problem or "no [server] table names the server to score through")

    def open(self, choice: ModelChoice, **options: Any) -> ModelBackend:
        from piqa_tui.core.scoring.served import ServedBackend

        self.usable(choice)
        assert choice.server is not None  # usable() said so
        server = choice.server
        return ServedBackend(server.url, server.model, concurrency=server.concurrency)

    def describe(self, choice: ModelChoice, info: Mapping[str, object]) -> str:
        return f"{info.get('model')} · served by {choice.server.url if choice.server else '?'}"
