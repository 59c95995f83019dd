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
alone or among others. The padding need not be evaluated: ``KvCells`` lets
the cells keep what earlier batches left there (masked, they add exact zeros).

Pure: token ids in, a plan of cells and rows out; the backend feeds the plan to
llama.cpp, and ``tests/test_batch_layout.py`` checks it without a model.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from piqa_tui.core.errors import ModelError

MAX_SOLUTIONS = 16  # sequence ids one token may carry
ROW_BLOCK = 4  # rows llama.cpp's matrix kernels take at a time
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
    removals: tuple[tuple[int, int, int], ...] = ()  # llama_memory_seq_rm calls (seq, p0, p1) to make before decoding


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
        missing = -sum(entries[i].logits for i in window) % ROW_BLOCK
        for i in reversed(window):
            if not missing:
                break
            if not entries[i].logits:
                entries[i] = replace(entries[i], logits=True)
                missing -= 1


def lay_out(
    group: Sequence[ItemTokens], shape: BatchShape, pad_token: int, kv: KvCells | None = None, seq_offset: int = 0
) -> BatchLayout:
    """Lay a group out as batch entries, logits rows and the scored tokens each row predicts.

    Without ``kv`` the entries are every cell from 0, padding included (for a
    cleared cache). With ``kv`` (the cache's present cells) they are only the
    cells to evaluate: a padding cell that an earlier batch left occupied is
    kept as it is, and ``removals`` frees the cells the group's own tokens go
    to; sequence ids are shifted by ``seq_offset``.
    """
    cells = _Cells(shape, pad_token)
    spans: list[range] = []
    seq0 = 0
    for t, item in enumerate(group):
        start = len(cells.entries)
        _place(cells, t, item, seq0, shape.exact)
        spans.append(range(start, len(cells.entries)))
        seq0 += item.n_seq
    entries = cells.entries
    removals: list[tuple[int, int, int]] = []
    if kv is not None:
        removals, entries = kv.plan(entries, shape.pad_seq, seq_offset, pad_token)
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
    return BatchLayout(tuple(entries), tuple(spans), row_targets, tuple(targets), tuple(solutions), tuple(removals))


class KvCells:
    """What llama.cpp's KV cache holds, cell by cell (its sequence ids and position), mirrored to skip padding.

    A padding cell only has to be occupied by something no sequence of the
    batch reads: masked, its attention weight is exactly 0 (exp of -inf), and a
    finite value times 0 adds an exact zero to every sum, so any left-over
    token serves as well as a freshly evaluated pad token. So between batches
    the cells stay as they are; a batch frees (``llama_memory_seq_rm``) only the
    cells its own tokens must land in, and evaluates a pad token only where a
    padding cell happens to be empty. llama.cpp puts a batch's tokens into the
    free cells in increasing order (its slot search goes token by token from
    the search head, and ``seq_rm`` moves the head back to the first cell it
    frees), which ``plan`` simulates. Sequence ids rotate over ``banks`` of
    ``n_seq`` ids, so a batch's sequences never see an earlier batch's cells; a
    bank's cells are removed just before the bank is used again.
    """

    def __init__(self, n_seq: int, banks: int) -> None:
        self.n_seq = n_seq
        self.banks = banks
        self._cells: list[tuple[frozenset[int], int] | None] = []  # per cell: its sequence ids and position
        self._next_bank = 0

    def clear(self) -> None:
        """The cache was cleared: every cell is free."""
        self._cells = []

    def next_offset(self) -> int:
        """The first sequence id of the bank the next batch uses."""
        offset = self._next_bank * self.n_seq
        self._next_bank = (self._next_bank + 1) % self.banks
        return offset

    def occupied(self, cell: int) -> tuple[frozenset[int], int] | None:
        return self._cells[cell] if cell < len(self._cells) else None

    def plan(
        self, entries: Sequence[BatchEntry], pad_seq: int, seq_offset: int, pad_token: int
    ) -> tuple[list[tuple[int, int, int]], list[BatchEntry]]:
        """The removals and the entries to decode so that entry i of ``entries`` ends up in cell i.

        ``entries`` are a layout's cells from 0 (padding on ``pad_seq``); the
        mirror is updated to the state after the decode.
        """
        bank = range(seq_offset, seq_offset + pad_seq + 1)
        removals = self._remove_sequences(bank)
        wanted = {
            (seq, cell[1])
            for c, e in enumerate(entries)
            if e.seq_ids != (pad_seq,) and (cell := self.occupied(c)) is not None
            for seq in cell[0]
        }
        removals += self._remove_positions(wanted)
        pad_positions = itertools.count()
        decoded = []
        for c, e in enumerate(entries):
            if self.occupied(c) is not None:
                continue  # a padding cell still holding an earlier token
            if e.seq_ids == (pad_seq,):
                e = BatchEntry(pad_token, next(pad_positions), (seq_offset + pad_seq,))
            else:
                e = replace(e, seq_ids=tuple(seq_offset + s for s in e.seq_ids))
            decoded.append(e)
        while len(decoded) % ROW_BLOCK:  # whole 4-row blocks; these land in the first free cells after the group
            decoded.append(BatchEntry(pad_token, next(pad_positions), (seq_offset + pad_seq,)))
        self._fill(decoded)
        return removals, decoded

    def _remove_sequences(self, seq_ids: range) -> list[tuple[int, int, int]]:
        present = {s for cell in self._cells if cell is not None for s in cell[0]}
        gone = sorted(present.intersection(seq_ids))
        self._cells = [_without(cell, lambda s, _p: s in seq_ids) for cell in self._cells]
        return [(s, -1, -1) for s in gone]

    def _remove_positions(self, pairs: set[tuple[int, int]]) -> list[tuple[int, int, int]]:
        """Remove (sequence, position) pairs, in runs of consecutive positions (one ``seq_rm`` call each)."""
        removals = []
        for seq, runs in itertools.groupby(sorted(pairs), key=lambda sp: sp[0]):
            positions = [p for _, p in runs]
            for _, run in itertools.groupby(enumerate(positions), key=lambda ip: ip[1] - ip[0]):
                run_positions = [p for _, p in run]
                removals.append((seq, run_positions[0], run_positions[-1] + 1))
        self._cells = [_without(cell, lambda s, p: (s, p) in pairs) for cell in self._cells]
        return removals

    def _fill(self, decoded: Sequence[BatchEntry]) -> None:
        """The decoded tokens into the free cells, lowest first, as llama.cpp's slot search puts them."""
        c = 0
        for e in decoded:
            while self.occupied(c) is not None:
                c += 1
            if c >= len(self._cells):
                self._cells.extend([None] * (c + 1 - len(self._cells)))
            self._cells[c] = (frozenset(e.seq_ids), e.position)


def _without(
    cell: tuple[frozenset[int], int] | None, gone: Callable[[int, int], bool]
) -> tuple[frozenset[int], int] | None:
    """A cell with the sequences ``gone(seq, position)`` picks taken out; None (free) when none is left."""
    if cell is None:
        return None
    seqs = frozenset(s for s in cell[0] if not gone(s, cell[1]))
    return (seqs, cell[1]) if seqs else None
