"""The shapes dataset rows come in, one module each, registered here (see ``kind.py``).

``arabculture`` (ArabCulture's nested JSONL) and ``flat`` are built in; a project adds one with
``register_dataset_shape``.
"""

from __future__ import annotations

from piqa_tui.core.dataset.shapes.arabculture import ArabCulture
from piqa_tui.core.dataset.shapes.flat import Flat
from piqa_tui.core.dataset.shapes.kind import register_dataset_shape

register_dataset_shape(ArabCulture())
register_dataset_shape(Flat())
