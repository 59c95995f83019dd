"""The batch layout, without a model: an item is laid out the same alone or in any batch, on every CPU block width.

The scores' independence from the batch rests on this layout (the real-model
check is tests/test_scoring.py's ``test_an_item_scores_the_same_alone_or_in_any_batch``):
every item starts on a block boundary and keeps the same cells, tokens,
positions, shared sequence ids and read rows relative to that start; with
``exact``, each token sits in a cell congruent to its position and a block
never mixes two sequences' own tokens; every ubatch holds whole 4-row blocks.
Over the cells earlier batches left (``KvCells``), a batch evaluates only the
tokens whose cells are empty; a small model of llama.cpp's cache (its
``seq_rm`` and slot search, written here from llama-kv-cache.cpp) checks that
every token still lands in the cell the layout gives it.
Items are drawn by hypothesis: solutions from a small vocabulary, so that they
often start alike, are prefixes of each other, identical or empty.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from piqa_tui.core.errors import ModelError
from piqa_tui.core.scoring.batch_layout import (
    MAX_SOLUTIONS,
    BatchEntry,
    BatchLayout,
    BatchShape,
    ItemTokens,
    KvCells,
    lay_out,
    pack,
)
from piqa_tui.core.scoring.machine import BLOCK_WIDTHS, simd_lanes

PAD = 2  # Gemma's BOS, the backend's padding token
RawItem = tuple[int, list[list[int]]]  # (context tokens, one token sequence per solution)

settings.register_profile("layout", max_examples=50, deadline=None)
settings.load_profile("layout")


@st.composite
def raw_items(draw: st.DrawFn) -> RawItem:
    """A context and 2-5 solutions; a 3-token vocabulary after the context makes them share words often."""
    context = draw(st.lists(st.integers(3, 200), min_size=1, max_size=40))
    stem = draw(st.lists(st.integers(3, 5), max_size=12))
    solutions = [
        stem[: draw(st.integers(0, len(stem)))] + draw(st.lists(st.integers(3, 5), max_size=12))
        for _ in range(draw(st.integers(2, 5)))
    ]
    return len(context), [context + solution for solution in solutions]


@st.composite
def shapes(draw: st.DrawFn, align: int, exact: bool) -> BatchShape:
    """Limits as the backend rounds them: ubatches of whole 8-token blocks that tile the batch."""
    n_ubatch = draw(st.sampled_from([8, 16, 32, 64, 256, 512]))
    n_batch = n_ubatch * draw(st.integers(1, 4))
    return BatchShape(align, exact, n_batch, n_ubatch, n_ctx=max(4096, n_batch), n_seq_max=draw(st.integers(6, 256)))


def items_of(raw: Sequence[RawItem], shape: BatchShape) -> list[ItemTokens]:
    return [ItemTokens.of(i, n_context, sequences, shape) for i, (n_context, sequences) in enumerate(raw)]


def seq_offsets(group: Sequence[ItemTokens]) -> list[int]:
    """The first sequence id of each item in its group."""
    return list(itertools.accumulate((item.n_seq for item in group[:-1]), initial=0))


def reading_cells(layout: BatchLayout) -> list[int]:
    """For each scored token, the cell whose logits row predicts it."""
    logit_cells = [c for c, entry in enumerate(layout.entries) if entry.logits]
    read = [-1] * len(layout.targets)
    for row, predicted in enumerate(layout.row_targets):
        for target in predicted:
            read[target] = logit_cells[row]
    return read


@dataclass(frozen=True)
class ItemView:
    """An item's part of a layout, relative to its first cell and first sequence id."""

    first_cell: int = field(compare=False)
    cells: tuple[object, ...]  # per cell: "pad", or (token, position, seq ids, (solution, position) of its row)
    reads: tuple[tuple[tuple[int, int], ...], ...]  # per solution: (cell of the row, target token) per scored token

    @classmethod
    def of(cls, layout: BatchLayout, k: int, seq0: int, shape: BatchShape) -> ItemView:
        span = layout.cells[k]
        cells = tuple(
            "pad"
            if entry.seq_ids == (shape.pad_seq,)
            else (
                entry.token,
                entry.position,
                tuple(s - seq0 for s in entry.seq_ids),
                None if entry.row is None else (entry.row.solution, entry.row.position),
            )
            for entry in layout.entries[span.start : span.stop]
        )
        read = reading_cells(layout)
        reads = tuple(
            tuple((read[i] - span.start, layout.targets[i]) for i in solution) for solution in layout.solutions[k]
        )
        return cls(span.start, cells, reads)


def every_group(raw: Sequence[RawItem], shape: BatchShape) -> list[tuple[list[ItemTokens], BatchLayout]]:
    return [(group, lay_out(group, shape, PAD)) for group in pack(items_of(raw, shape), shape)]


widths_and_modes = pytest.mark.parametrize(
    ("align", "exact"), [(align, exact) for align in BLOCK_WIDTHS for exact in (True, False)]
)


def test_every_width_the_cpu_probe_answers_is_tested() -> None:
    infos = ["CPU : SSE3 = 1 | AVX2 = 1 | ", "CPU : SSE3 = 1 | AVX512 = 1 | ", "CPU : NEON = 1 | SVE = 1 | ", ""]
    assert {simd_lanes(info) for info in infos} == set(BLOCK_WIDTHS)


@widths_and_modes
@given(data=st.data(), raw=st.lists(raw_items(), min_size=1, max_size=12))
def test_an_item_is_laid_out_the_same_alone_or_in_any_batch(
    align: int, exact: bool, data: st.DataObject, raw: list[RawItem]
) -> None:
    shape = data.draw(shapes(align, exact))
    alone = [ItemView.of(lay_out([item], shape, PAD), 0, 0, shape) for item in items_of(raw, shape)]
    for order in (range(len(raw)), data.draw(st.permutations(range(len(raw))))):
        for group, layout in every_group([raw[i] for i in order], shape):
            for k, (item, seq0) in enumerate(zip(group, seq_offsets(group))):
                view = ItemView.of(layout, k, seq0, shape)
                assert view.first_cell % align == 0
                assert view == alone[order[item.index]]


@widths_and_modes
@given(data=st.data(), raw=st.lists(raw_items(), min_size=1, max_size=12))
def test_each_solution_sees_its_own_tokens_once_and_reads_the_row_before_each_scored_token(
    align: int, exact: bool, data: st.DataObject, raw: list[RawItem]
) -> None:
    shape = data.draw(shapes(align, exact))
    for group, layout in every_group(raw, shape):
        read = reading_cells(layout)
        for k, (item, seq0) in enumerate(zip(group, seq_offsets(group))):
            span = layout.cells[k]
            for s, seq in enumerate(item.sequences):
                seen = [(c, e) for c, e in enumerate(layout.entries) if seq0 + s in e.seq_ids]
                # every token but the last (which predicts nothing; unless the shared prefix covers it),
                # once each, in position order, all inside the item's cells
                assert [(e.position, e.token) for _, e in seen] == list(
                    enumerate(seq[: max(len(seq) - 1, item.prefix)])
                )
                assert all(c in span for c, _ in seen)
                for target, pos in zip(layout.solutions[k][s], range(item.n_context, len(seq))):
                    row = layout.entries[read[target]]
                    assert layout.targets[target] == seq[pos]
                    assert row.position == pos - 1 and row.token == seq[pos - 1] and row.logits
                    assert read[target] in span and (seq0 + s in row.seq_ids or row.position < item.common)
                    assert row.seq_ids[0] >= seq0 and row.seq_ids[-1] < seq0 + item.n_seq
        owners = [e.seq_ids for e in layout.entries if e.seq_ids != (shape.pad_seq,)]
        assert all(shape.pad_seq not in ids for ids in owners)  # padding is never seen by a solution


@pytest.mark.parametrize("align", BLOCK_WIDTHS)
@given(data=st.data(), raw=st.lists(raw_items(), min_size=1, max_size=12))
def test_exact_cells_sit_at_their_position_modulo_the_block_and_blocks_never_mix_sequences(
    align: int, data: st.DataObject, raw: list[RawItem]
) -> None:
    shape = data.draw(shapes(align, exact=True))
    for group, layout in every_group(raw, shape):
        assert all(item.prefix % align == 0 and item.prefix <= item.common for item in group)
        for start in range(0, len(layout.entries), align):
            block = [e for e in layout.entries[start : start + align] if e.seq_ids != (shape.pad_seq,)]
            assert len({e.seq_ids for e in block}) <= 1, f"cells {start}-{start + align - 1} mix sequences"
            for cell, entry in enumerate(layout.entries[start : start + align], start):
                assert entry.seq_ids == (shape.pad_seq,) or (cell - entry.position) % align == 0


@widths_and_modes
@given(data=st.data(), raw=st.lists(raw_items(), min_size=1, max_size=12))
def test_every_ubatch_holds_whole_blocks_of_four_tokens_and_four_rows(
    align: int, exact: bool, data: st.DataObject, raw: list[RawItem]
) -> None:
    shape = data.draw(shapes(align, exact))
    for _, layout in every_group(raw, shape):
        assert len(layout.row_targets) == sum(e.logits for e in layout.entries)
        for start in range(0, len(layout.entries), shape.n_ubatch):
            window = layout.entries[start : start + shape.n_ubatch]
            assert len(window) % 4 == 0 and sum(e.logits for e in window) % 4 == 0


@widths_and_modes
@given(data=st.data(), raw=st.lists(raw_items(), min_size=1, max_size=30))
def test_packing_keeps_order_batch_size_and_a_free_sequence_id_for_padding(
    align: int, exact: bool, data: st.DataObject, raw: list[RawItem]
) -> None:
    shape = data.draw(shapes(align, exact))
    groups = every_group(raw, shape)
    assert [item.index for group, _ in groups for item in group] == list(range(len(raw)))
    for group, layout in groups:
        sizes = [item.padded_tokens(align, exact) for item in group]
        assert [len(cells) for cells in layout.cells] == sizes  # what packing counted is what the layout takes
        assert len(layout.entries) == sum(sizes) and len(layout.entries) % align == 0
        assert len(group) == 1 or sum(sizes) <= shape.n_batch
        assert sum(item.n_seq for item in group) <= shape.n_seq_max - 1


@pytest.mark.parametrize("align", BLOCK_WIDTHS)
def test_solutions_that_start_alike_share_whole_blocks_only_when_exact(align: int) -> None:
    context = list(range(10, 10 + align + 3))  # one whole block and three tokens more
    sequences = [context + [7, 8], context + [7, 9]]
    exact = ItemTokens.of(0, len(context), sequences, BatchShape(align, True, 512, 512, 4096, 64))
    loose = ItemTokens.of(0, len(context), sequences, BatchShape(align, False, 512, 512, 4096, 64))
    assert (exact.prefix, exact.common) == (align, align + 4)
    assert (loose.prefix, loose.common) == (align + 4, align + 4)
    # the shared token 7 predicts both solutions' last token: one row, read by both
    layout = lay_out([exact], BatchShape(align, True, 512, 512, 4096, 64), PAD)
    read = reading_cells(layout)
    assert read[layout.solutions[0][0][-1]] == read[layout.solutions[0][1][-1]]


def test_an_item_too_long_or_with_too_many_solutions_is_refused_in_one_line() -> None:
    shape = BatchShape(16, True, 256, 256, 256, 64)
    long_item = ItemTokens.of(0, 1, [[1] * 300, [1] * 299 + [2]], shape)
    with pytest.raises(ModelError, match=r"^an item needs \d+ tokens, more than the context of 256; shorten it"):
        pack([long_item], shape)
    crowded = ItemTokens.of(0, 1, [[1, s] for s in range(MAX_SOLUTIONS + 1)], shape)
    with pytest.raises(ModelError, match=f"an item has {MAX_SOLUTIONS + 1} solutions; scoring supports at most"):
        pack([crowded], shape)


class LlamaCache:
    """llama.cpp's unified KV cache as far as placement goes (llama-kv-cache.cpp): cells, head, seq_rm, find_slot."""

    def __init__(self, size: int) -> None:
        self.cells: list[tuple[set[int], int] | None] = [None] * size
        self.head = 0

    def seq_rm(self, seq: int, p0: int, p1: int) -> None:
        p0, p1 = max(p0, 0), (p1 if p1 >= 0 else 1 << 30)
        new_head = None
        for i, cell in enumerate(self.cells):
            if cell is not None and p0 <= cell[1] < p1 and seq in cell[0]:
                cell[0].discard(seq)
                if not cell[0]:
                    self.cells[i] = None
                    new_head = i if new_head is None else new_head
        if new_head is not None and new_head < self.head:
            self.head = new_head

    def seq_pos_max(self, seq: int) -> int:
        return max((cell[1] for cell in self.cells if cell is not None and seq in cell[0]), default=-1)

    def decode(self, entries: Sequence[BatchEntry], n_ubatch: int) -> list[int]:
        """Place the batch ubatch by ubatch, each token in the next free cell from the head; the cells used."""
        placed = []
        for start in range(0, len(entries), n_ubatch):
            ubatch = entries[start : start + n_ubatch]
            used = sum(cell is not None for cell in self.cells)
            cur = 0 if self.head > used + 2 * len(ubatch) else self.head
            for entry in ubatch:
                while self.cells[cur] is not None:
                    cur = (cur + 1) % len(self.cells)
                self.cells[cur] = (set(entry.seq_ids), entry.position)
                placed.append(cur)
            self.head = placed[-1] + 1
        return placed


def check_batch_is_valid_for_llama(cache: LlamaCache, entries: Sequence[BatchEntry]) -> None:
    """llama_batch_allocr's rules: a sequence's positions continue its cells' (here: start at 0) without gaps."""
    by_seq: dict[int, list[int]] = {}
    for entry in entries:
        for seq in entry.seq_ids:
            by_seq.setdefault(seq, []).append(entry.position)
    for seq, positions in by_seq.items():
        assert cache.seq_pos_max(seq) == -1, f"sequence {seq} still has cells from an earlier batch"
        assert positions == list(range(positions[0], positions[0] + len(positions))) and positions[0] == 0


def decode_over_left_overs(
    raw: Sequence[RawItem], shape: BatchShape, kv: KvCells, cache: LlamaCache
) -> list[tuple[list[ItemTokens], BatchLayout, BatchLayout, int]]:
    """Every group decoded over what the earlier ones left: (group, cells from 0, what was decoded, seq offset)."""
    done = []
    for group in pack(items_of(raw, shape), shape):
        full = lay_out(group, shape, PAD)
        offset = kv.next_offset()
        plan = lay_out(group, shape, PAD, kv, offset)
        for seq, p0, p1 in plan.removals:
            cache.seq_rm(seq, p0, p1)
        check_batch_is_valid_for_llama(cache, plan.entries)
        placed = cache.decode(plan.entries, shape.n_ubatch)
        assert placed == sorted(placed)
        done.append((group, full, plan, offset))
        # Every token of the layout is in its cell; every padding cell holds something the batch cannot see.
        bank = set(range(offset, offset + shape.pad_seq))
        for c, entry in enumerate(full.entries):
            cell = cache.cells[c]
            assert cell is not None
            if entry.seq_ids == (shape.pad_seq,):
                assert not cell[0] & bank
            else:
                assert cell == ({offset + s for s in entry.seq_ids}, entry.position)
    return done


@pytest.mark.parametrize("align", [a for a in BLOCK_WIDTHS if a % 4 == 0])
@given(data=st.data(), raws=st.lists(st.lists(raw_items(), min_size=1, max_size=8), min_size=1, max_size=4))
def test_over_left_over_cells_every_token_lands_in_its_layout_cell_and_reads_its_row(
    align: int, data: st.DataObject, raws: list[list[RawItem]]
) -> None:
    base = data.draw(shapes(align, exact=True))
    shape = BatchShape(align, True, base.n_batch, base.n_ubatch, base.n_ctx, min(base.n_seq_max, 64))
    kv, cache = KvCells(shape.n_seq_max, banks=data.draw(st.integers(1, 4))), LlamaCache(shape.n_ctx)
    for raw in raws:  # several score() calls on one backend
        for group, full, plan, _ in decode_over_left_overs(raw, shape, kv, cache):
            if len(full.entries) > shape.n_batch:
                kv.clear()  # the backend decodes a long item from a cleared cache
                cache = LlamaCache(shape.n_ctx)
                continue
            assert plan.targets == full.targets and plan.solutions == full.solutions
            read = reading_cells(plan)  # indices into the decoded entries
            for k, item in enumerate(group):
                for s, seq in enumerate(item.sequences):
                    for target, pos in zip(plan.solutions[k][s], range(item.n_context, len(seq))):
                        row = plan.entries[read[target]]
                        assert row.logits and (row.position, row.token) == (pos - 1, seq[pos - 1])
            for start in range(0, len(plan.entries), shape.n_ubatch):
                window = plan.entries[start : start + shape.n_ubatch]
                assert len(window) % 4 == 0 and sum(e.logits for e in window) % 4 == 0
            assert len(plan.entries) <= max(len(full.entries), 4)


@pytest.mark.parametrize("align", [8, 16])
@given(raw=st.lists(raw_items(), min_size=1, max_size=8))
def test_padding_is_evaluated_only_where_its_cell_is_empty(align: int, raw: list[RawItem]) -> None:
    shape = BatchShape(align, True, 4096, 512, 8192, 64)  # one group
    kv, cache = KvCells(shape.n_seq_max, banks=2), LlamaCache(shape.n_ctx)
    first = decode_over_left_overs(raw, shape, kv, cache)
    again = decode_over_left_overs(raw, shape, kv, cache)
    for (_, full, plan, _), (_, _, replan, _) in zip(first, again):
        n_real = sum(e.seq_ids != (shape.pad_seq,) for e in full.entries)
        assert len(plan.entries) == len(full.entries)  # an empty cache: every padding cell is evaluated
        assert len(replan.entries) == n_real + (-n_real) % 4  # the second time only the tokens (whole 4-row blocks)
