"""How items' token sequences are laid out in llama.cpp batches, so that an item scores the same alone or among others.

The ``llama-perplexity --multiple-choice`` layout: each item's solutions share
one evaluation of the tokens they have in common (tagged with all the item's
sequence ids), several items share one decode (sequence ids keep them apart),
and logits are asked for only where a row predicts a scored token.

On top of that the layout keeps every number independent of the batch around
it. llama.cpp's CPU kernels sum in SIMD blocks along the KV cells and treat the
last ``rows % 4`` rows of a matrix product with another kernel, and 8-bit
activation quantisation turns those last-bit differences into tenths of a nat.
So every item starts on a block boundary, and, with ``exact``, each sequence's
cells start at an index congruent to its position (mod ``align``, the kernels'
block width, see ``machine.simd_lanes``; the gaps are filled with padding tokens
on a spare sequence id), solutions share only whole blocks, and every ubatch
holds a multiple of 4 tokens and of 4 output rows. An item then scores the same
alone or among others.

Pure: token ids in, a plan of cells and rows out; the backend feeds the plan to
llama.cpp, and ``tests/test_batch_layout.py`` checks it without a model.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from piqa_tui.core.errors import ModelError

MAX_SOLUTIONS = 16  # sequence ids one token may carry
_ROW_BLOCK = 4  # rows llama.cpp's matrix kernels take at a time
_SHARED = -1  # the solution number of a row all the item's solutions read


@dataclass(frozen=True, slots=True)
class BatchShape:
    """The limits and alignment a backend lays items out under.

    ``n_ubatch`` is a multiple of 8 and ``n_batch`` a multiple of ``n_ubatch``
    (the backend rounds them so), which keeps every ubatch a whole number of
    4-token blocks. The last sequence id (``n_seq_max - 1``) carries the padding.
    """

    align: int  # KV cells the CPU kernels sum in one block (see machine.simd_lanes)
    exact: bool  # pad so that scores equal a lone evaluation's; False shares every common token
    n_batch: int  # tokens per decode
    n_ubatch: int  # tokens per llama.cpp micro-batch
    n_ctx: int  # KV cells
    n_seq_max: int  # sequence ids

    @property
    def pad_seq(self) -> int:
        return self.n_seq_max - 1


class RowKey(NamedTuple):
    """Which logits row a token yields: item (in its group), solution (-1: shared by all), position."""

    item: int
    solution: int
    position: int


@dataclass(frozen=True, slots=True)
class BatchEntry:
    """One token of a batch: a cleared KV cache puts the batch's i-th token in cell i."""

    token: int
    position: int  # in its sequence
    seq_ids: tuple[int, ...]  # the sequences that see it (several for a shared token)
    row: RowKey | None = None  # the row its logits are read as; None when nobody reads them
    logits: bool = False  # whether llama.cpp computes its logits (a read row, or a spare one for whole row blocks)


@dataclass(frozen=True, slots=True)
class ItemTokens:
    """One item's solutions as token sequences, with what they share and which rows are scored."""

    index: int  # the item's place among the requests
    n_context: int  # tokens before the first scored token
    sequences: tuple[tuple[int, ...], ...]  # context + continuation tokens, one per solution
    prefix: int  # leading tokens evaluated once for all sequences
    common: int  # leading tokens all sequences share (prefix, plus what alignment copies per sequence)

    @classmethod
    def of(cls, index: int, n_context: int, sequences: Sequence[Sequence[int]], shape: BatchShape) -> ItemTokens:
        """The item whose solutions tokenise to ``sequences``, their first ``n_context`` tokens the context.

        With ``exact``, solutions share whole blocks of ``align`` tokens only: a
        block that mixed shared and own tokens would be summed differently than
        in a lone evaluation; the rest of what they share is evaluated once per
        solution.
        """
        common = _common_prefix(sequences)
        shared = common // shape.align * shape.align if shape.exact else common
        return cls(index, n_context, tuple(tuple(s) for s in sequences), shared, common)

    @property
    def n_seq(self) -> int:
        return len(self.sequences)

    def unique_tokens(self, s: int) -> range:
        """Positions sequence ``s`` evaluates on its own; its last token predicts nothing scored, so never."""
        return range(self.prefix, len(self.sequences[s]) - 1)

    def row_owner(self, s: int, pos: int) -> int:
        """Which copy of the token at ``pos`` gives sequence ``s`` its logits row: -1 for the shared prefix.

        Past the prefix, a token every sequence shares is evaluated once per
        sequence, and each copy computes the same row bit for bit; only the
        first sequence that evaluates it asks for logits.
        """
        if pos < self.prefix:
            return _SHARED
        if pos < self.common:
            return next(o for o in range(self.n_seq) if pos < len(self.sequences[o]) - 1)
        return s

    def padded_tokens(self, align: int, exact: bool) -> int:
        """Cells this item takes in a batch once aligned, padding included (what ``lay_out`` gives it)."""
        n = self.prefix
        for s in range(self.n_seq):
            n += ((self.prefix - n) % align if exact else 0) + len(self.unique_tokens(s))
        return n + (-n) % align


@dataclass(frozen=True, slots=True)
class BatchLayout:
    """A group of items as batch entries, and where each scored token's log-probability is read."""

    entries: tuple[BatchEntry, ...]  # in batch order: entry i lands in KV cell i
    cells: tuple[range, ...]  # per item, the cells it occupies (its padding included)
    row_targets: list[list[int]]  # per logits row, the indices into ``targets`` it predicts
    targets: tuple[int, ...]  # the scored tokens, item by item, solution by solution
    solutions: tuple[tuple[range, ...], ...]  # per item and solution, its scored tokens' indices into ``targets``


def _common_prefix(sequences: Sequence[Sequence[int]]) -> int:
    first = sequences[0]
    n = min(len(s) for s in sequences)
    for i in range(n):
        if any(s[i] != first[i] for s in sequences[1:]):
            return i
    return n


def pack(items: Sequence[ItemTokens], shape: BatchShape) -> list[list[ItemTokens]]:
    """Group items into decodes of at most ``n_batch`` tokens and ``n_seq_max - 1`` sequences, in order.

    Every token of a group shares one unified KV cache, and attention runs
    over all of it, so groups are kept to one batch; an item longer than a
    batch gets a group of its own, decoded in several chunks.
    """
    groups: list[list[ItemTokens]] = []
    current: list[ItemTokens] = []
    n_tok = n_seq = 0
    for item in items:
        if item.n_seq > MAX_SOLUTIONS:
            raise ModelError(f"an item has {item.n_seq} solutions; scoring supports at most {MAX_SOLUTIONS}")
        size = item.padded_tokens(shape.align, shape.exact)
        if size > shape.n_ctx:
            raise ModelError(
                f"an item needs {size} tokens, more than the context of {shape.n_ctx}; shorten it or raise n_ctx"
            )
        # One sequence id stays free for the alignment padding.
        if current and (n_tok + size > shape.n_batch or n_seq + item.n_seq > shape.n_seq_max - 1):
            groups.append(current)
            current, n_tok, n_seq = [], 0, 0
        current.append(item)
        n_tok += size
        n_seq += item.n_seq
    if current:
        groups.append(current)
    return groups


class _Cells:
    """The batch being filled in cell order, with the padding that aligns it."""

    def __init__(self, shape: BatchShape, pad_token: int) -> None:
        self.entries: list[BatchEntry] = []
        self._align = shape.align
        self._pad_seq = (shape.pad_seq,)
        self._pad_token = pad_token
        self._pad_positions = itertools.count()  # llama.cpp wants each sequence's positions consecutive

    def add(self, token: int, position: int, seq_ids: tuple[int, ...], row: RowKey | None) -> None:
        self.entries.append(BatchEntry(token, position, seq_ids, row, row is not None))

    def align_to(self, position: int) -> None:
        """Pad until the next cell's index is congruent to ``position`` (mod the block width)."""
        while (len(self.entries) - position) % self._align:
            self.entries.append(BatchEntry(self._pad_token, next(self._pad_positions), self._pad_seq))


def _place(cells: _Cells, t: int, item: ItemTokens, seq0: int, exact: bool) -> None:
    """Item ``t`` of the group into the cells: its shared prefix once, then each solution's own tokens."""
    longest = max(len(s) for s in item.sequences)
    shared = tuple(range(seq0, seq0 + item.n_seq))
    for pos in range(item.prefix):
        # A shared token's logits are needed if it predicts a scored token of any solution.
        wanted = item.n_context - 1 <= pos <= longest - 2
        cells.add(item.sequences[0][pos], pos, shared, RowKey(t, _SHARED, pos) if wanted else None)
    for s, seq in enumerate(item.sequences):
        if exact:
            cells.align_to(item.prefix)
        for pos in item.unique_tokens(s):
            # Logits where this copy's row predicts a scored token (alignment may copy context tokens too).
            wanted = pos >= item.n_context - 1 and item.row_owner(s, pos) == s
            cells.add(seq[pos], pos, (seq0 + s,), RowKey(t, s, pos) if wanted else None)
    cells.align_to(0)


def _whole_row_blocks(entries: list[BatchEntry], n_ubatch: int) -> None:
    """Ask for a few logits nobody reads, so that every ubatch has whole 4-row blocks of outputs."""
    for start in range(0, len(entries), n_ubatch):
        window = range(start, min(start + n_ubatch, len(entries)))
        missing = -sum(entries[i].logits for i in window) % _ROW_BLOCK
        for i in reversed(window):
            if not missing:
                break
            if not entries[i].logits:
                entries[i] = replace(entries[i], logits=True)
                missing -= 1


def lay_out(group: Sequence[ItemTokens], shape: BatchShape, pad_token: int) -> BatchLayout:
    """Lay a group out as batch entries, logits rows and the scored tokens each row predicts."""
    cells = _Cells(shape, pad_token)
    spans: list[range] = []
    seq0 = 0
    for t, item in enumerate(group):
        start = len(cells.entries)
        _place(cells, t, item, seq0, shape.exact)
        spans.append(range(start, len(cells.entries)))
        seq0 += item.n_seq
    entries = cells.entries
    _whole_row_blocks(entries, shape.n_ubatch)

    row_of = {e.row: r for r, e in enumerate(e for e in entries if e.logits) if e.row is not None}
    row_targets: list[list[int]] = [[] for _ in range(sum(e.logits for e in entries))]
    targets: list[int] = []
    solutions: list[tuple[range, ...]] = []
    for t, item in enumerate(group):
        item_solutions = []
        for s, seq in enumerate(item.sequences):
            start = len(targets)
            for pos in range(item.n_context, len(seq)):
                # The token at pos is predicted by the row of the token before it.
                row_targets[row_of[RowKey(t, item.row_owner(s, pos - 1), pos - 1)]].append(len(targets))
                targets.append(seq[pos])
            item_solutions.append(range(start, len(targets)))
        solutions.append(tuple(item_solutions))
    return BatchLayout(tuple(entries), tuple(spans), row_targets, tuple(targets), tuple(solutions))
