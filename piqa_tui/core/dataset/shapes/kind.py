"""What a dataset shape is (``DatasetShape``) and the shapes' registry.

Most datasets are flat: one column per value. Some publish a row with values nested in objects (ArabCulture's
``options: {text: [...]}``); a nested shape recognises such rows, reads each as the flat columns the layout
detector knows, and nests a written row back exactly as it was, so an unmodified export gives the file back.
A new nested shape is one module with one object, passed to ``register_dataset_shape`` (the built-in ones are
registered by this package's ``__init__``); reading and writing ask the registry and never name a shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from piqa_tui.core.registry import Registry

FLAT = "flat"  # the shape of a file no nested shape recognises


class DatasetShape(Protocol):
    """One shape of dataset rows: ``formats`` the file formats it is looked for in (e.g. ``("jsonl",)``)."""

    @property
    def name(self) -> str: ...
    @property
    def formats(self) -> tuple[str, ...]: ...

    def recognises(self, rows: Sequence[dict[str, object]]) -> bool:
        """Whether every row has this shape (and nothing its flat names would hide)."""
        ...

    def flatten(self, row: dict[str, object]) -> dict[str, object]:
        """One row of this shape as flat columns, each in the place of the value it came from."""
        ...

    def nest(self, flat: dict[str, object]) -> dict[str, object]:
        """A flat row (``flatten``'s columns, values maybe edited) written back in this shape."""
        ...


DATASET_SHAPES: Registry[DatasetShape] = Registry("dataset shape")


def register_dataset_shape(shape: DatasetShape) -> DatasetShape:
    """Make ``shape`` one that reading looks for in its formats (before the flat shape, which takes any row)."""
    return DATASET_SHAPES.register(shape)


def shape_of(rows: Sequence[dict[str, object]], fmt: str) -> DatasetShape:
    """The first registered shape of ``fmt`` that recognises ``rows``, else the flat shape."""
    found = next((s for s in DATASET_SHAPES if fmt in s.formats and s.recognises(rows)), None)
    return found or dataset_shape(FLAT)


def dataset_shape(name: str) -> DatasetShape:
    """The shape registered as ``name`` (a dataset read under a shape since unregistered is written flat)."""
    found = DATASET_SHAPES.get(name) or DATASET_SHAPES.get(FLAT)
    if found is None:
        raise LookupError("the flat dataset shape is not registered")
    return found
