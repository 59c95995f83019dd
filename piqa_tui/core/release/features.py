"""What a release's card says of each Parquet file: its columns' ``datasets`` types and its size in memory.

The card's ``dataset_info`` gives ``features`` (name and dtype per column) and, per split, ``num_examples``
and ``num_bytes``: ``datasets`` checks the rows it loads against ``num_examples`` and reads ``num_bytes`` as
the split's size in Arrow memory, the sum of its columns' buffers once loaded as those types (32-bit string
offsets, a validity bitmap only where a batch of a column holds a null), batch by batch as ``datasets``
writes them. Both are measured from the written file; the tests check them against ``datasets``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

DTYPES = {
    "String": "string",
    "Int64": "int64",
    "Int32": "int32",
    "Float64": "float64",
    "Float32": "float32",
    "Boolean": "bool",
    "Null": "null",
}
FIXED_WIDTH = {"int64": 8, "float64": 8, "int32": 4, "float32": 4}
BATCH = 1000  # the rows per batch ``datasets`` writes (datasets.config.DEFAULT_MAX_BATCH_SIZE)


def features_of(files: Sequence[Path]) -> list[tuple[str, str]]:
    """Each column of the Parquet ``files`` and its ``datasets`` dtype (from the first file where it is not all
    null)."""
    import polars as pl

    found: dict[str, str] = {}
    for path in files:
        for column, dtype in pl.read_parquet_schema(path).items():
            if found.get(column) in (None, "null"):
                found[column] = DTYPES.get(str(dtype), str(dtype).lower())
    return list(found.items())


def arrow_bytes(path: Path, features: Sequence[tuple[str, str]]) -> int:
    """The bytes the Parquet file at ``path`` takes in Arrow memory as ``features`` (``num_bytes``), in the
    batches of ``BATCH`` rows ``datasets`` writes (a batch with no null in a column has no validity bitmap)."""
    import polars as pl

    frame = pl.read_parquet(path)
    return sum(_batch_bytes(frame.slice(start, BATCH), features) for start in range(0, frame.height, BATCH))


def _batch_bytes(frame: pl.DataFrame, features: Sequence[tuple[str, str]]) -> int:
    n = frame.height
    total = 0
    for column, dtype in features:
        values = frame[column]
        total += (n + 7) // 8 if values.null_count() and dtype != "null" else 0
        if dtype == "string":
            total += 4 * n + sum(len(v.encode("utf-8")) for v in values.drop_nulls().to_list())
        elif dtype == "bool":
            total += (n + 7) // 8
        else:
            total += FIXED_WIDTH.get(dtype, 0) * n
    return total
