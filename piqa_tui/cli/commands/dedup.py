"""``piqa-tui dedup PATH [--against OTHER]``: duplicate clusters, exit 1 when there are any."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from piqa_tui.cli.commands.dataset_args import (
    add_dataset_arguments,
    open_project,
    print_json,
    say,
    warn,
)
from piqa_tui.cli.exit_codes import DATA_PROBLEMS, OK
from piqa_tui.cli.progress import ProgressLine, progress_line, reading
from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dedup.clusters import (
    DEFAULT_SEMANTIC_THRESHOLD,
    DEFAULT_THRESHOLD,
    DEFAULT_TRANSLATION_THRESHOLD,
    SIGNALS,
)
from piqa_tui.core.dedup.e5_embeddings import SEMANTIC_THRESHOLD as E5_THRESHOLD
from piqa_tui.core.dedup.scan import DuplicateScan, ScanRequest, scan
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.terminal_safe import terminal_safe
from piqa_tui.render.progress import embedding_text

if TYPE_CHECKING:
    from piqa_tui.core.dedup.semantic import EmbeddingProgress


def similarity_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return value


def _size(text: str) -> int:
    from piqa_tui.core.dedup.budget import parse_size

    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_arguments(parser)
    parser.add_argument(
        "--against", metavar="OTHER", help="leakage: report items of PATH that duplicate items of OTHER"
    )
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="also sentence-embedding duplicates and translations (vectors cached in the workspace)",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="embedding model: 'e5' (multilingual-e5-small, the e5 extra), 'minilm' (the packaged "
        "all-MiniLM-L6-v2: English only, about 3 times faster), a sentence-transformers "
        "directory or a name in the local Hugging Face cache, a .gguf file, or 'gemma' (the packaged Gemma 3 270M); "
        "default: the best one on this machine (see docs/dedup.md); implies --semantic",
    )
    parser.add_argument(
        "--threshold",
        type=similarity_value,
        default=DEFAULT_THRESHOLD,
        metavar="X",
        help=f"lexical: Jaccard of character 3-grams (default {DEFAULT_THRESHOLD})",
    )
    parser.add_argument(
        "--semantic-threshold",
        type=similarity_value,
        default=None,
        metavar="X",
        help="semantic: cosine similarity (default: the model's own, measured in docs/dedup.md: "
        f"e5 {E5_THRESHOLD} on vectors standardised per script, others {DEFAULT_SEMANTIC_THRESHOLD})",
    )
    parser.add_argument(
        "--translation-threshold",
        type=similarity_value,
        default=DEFAULT_TRANSLATION_THRESHOLD,
        metavar="X",
        help="translation, with a --model other than e5 or gemma: cosine similarity between items in two scripts "
        f"(default {DEFAULT_TRANSLATION_THRESHOLD}); e5 and gemma find translations by their own rule (docs/dedup.md)",
    )
    parser.add_argument(
        "--max-memory",
        type=_size,
        default=None,
        metavar="SIZE",
        help="stop at once, with one line, when the lexical index would need more than SIZE (e.g. 4G; "
        "default: the memory the system has available)",
    )


def scan_progress(line: ProgressLine) -> tuple[Callable[[int, int], None], Callable[[EmbeddingProgress], None]]:
    """A scan's two progress callbacks on one line: while the model embeds, its count, rate and ETA
    (:func:`~piqa_tui.render.progress.embedding_text`); otherwise the scan's steps."""
    embedding: list[EmbeddingProgress] = []

    def steps(done: int, total: int) -> None:
        if not embedding or embedding[-1].done >= embedding[-1].total:
            line.count("finding duplicates", done, total)

    def embedded(progress: EmbeddingProgress) -> None:
        embedding[:] = [progress]
        line.show(embedding_text(progress))

    return steps, embedded


def run(args: argparse.Namespace) -> int:
    semantic_wanted = bool(args.semantic or args.model)
    request = ScanRequest(
        semantic=semantic_wanted,
        against=Path(args.against) if args.against else None,
        threshold=args.threshold,
        semantic_threshold=args.semantic_threshold,
        translation_threshold=args.translation_threshold,
        model=args.model,  # None: the best model on this machine (core.dedup.scan.OFFLINE_DEFAULTS)
    )
    with progress_line(args) as progress:
        progress.show(reading(args))
        # The workspace caches embeddings: make one only when embeddings are asked for.
        project = open_project(args, create=semantic_wanted)
        _check_memory(project.items, args.max_memory)
        steps, embedded = scan_progress(progress)
        result = scan(project, project.items, request, steps, embedding=embedded)
    if result.model is not None:
        print(f"piqa-tui: semantic signal by {terminal_safe(result.model)} ({result.rule})", file=sys.stderr)
    if result.translation_model is not None:
        print(f"piqa-tui: translation signal by {terminal_safe(result.translation_model)}", file=sys.stderr)
    for warning in (result.warning, result.notice):
        if warning:
            warn(warning)
    if args.json:
        print_json(
            {
                "path": str(project.dataset.path),
                "against": str(args.against) if args.against else None,
                "items": len(result.items),
                "semantic": result.model is not None,
                "model": result.model,
                "semantic_rule": result.rule or None,
                "translation_model": result.translation_model or result.model,
                "clusters": [c.to_json() for c in result.clusters],
            }
        )
    else:
        _print_clusters(result)
    return DATA_PROBLEMS if result.clusters else OK


def _check_memory(items: list[Item], limit: int | None) -> None:
    """Refuse, before any index is built, a run whose lexical index would not fit in ``limit`` bytes
    (None: the memory the system has available, where it says)."""
    from piqa_tui.core.dedup.budget import available_bytes, format_bytes, lexical_bytes

    need = lexical_bytes(items)
    allowed = limit if limit is not None else available_bytes()
    if allowed is not None and need > allowed:
        bound = "--max-memory" if limit is not None else "the memory available"
        raise PiqaError(
            f"dedup: {len(items):,} items would need about {format_bytes(need)} for the lexical index, more than "
            f"{bound} ({format_bytes(allowed)}); dedup a part of the file at a time (one language or source, "
            "say) or raise --max-memory"
        )


def _print_clusters(result: DuplicateScan) -> None:
    clusters = result.clusters
    for n, cluster in enumerate(clusters, 1):
        say(f"cluster {n}\t{cluster.signal}\tsimilarity {cluster.similarity:.3f}\t{len(cluster.members)} items")
        for m in cluster.members:
            where = f"{m.source}:" if m.source else ""
            say(f"  {terminal_safe(where + m.id, one_line=True)}\t{_preview(result.item(m).prompt)}")
    counts = {s: sum(1 for c in clusters if c.signal == s) for s in SIGNALS}
    detail = ", ".join(f"{s}: {n}" for s, n in counts.items() if n) or "none"
    if result.sources is not None:
        subject = f"items of {result.sources[0]} duplicating {result.sources[1]}"
    else:
        subject = f"{len(result.items)} items"
    say(f"{len(clusters)} duplicate clusters ({detail}) among {subject}")


def _preview(text: str, width: int = 70) -> str:
    flat = terminal_safe(" ".join(text.split()), one_line=True)
    return flat if len(flat) <= width else flat[: width - 1] + "…"
