"""One PIQA-style item: a prompt, 2-4 solutions, a gold label and everything else."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(slots=True, eq=True)
class Item:
    """An item as the curator sees it, with the workspace's edits applied.

    Treat it as immutable: change it with ``with_changes``. (Not ``frozen``
    because frozen dataclasses are slow to build, and we build 100,000 at load.)

    ``label`` is a 0-based index into ``solutions`` or ``None`` when the item has
    no (readable) label; ``meta`` keeps every column the program does not
    interpret, in file order, as strings exactly as read.
    """

    id: str
    prompt: str
    solutions: tuple[str, ...]
    label: int | None
    row: int
    meta: dict[str, str] = field(default_factory=dict, compare=False)
    question: str | None = None  # COPA/XCOPA "cause"/"effect"; None elsewhere

    @property
    def text(self) -> str:
        """Prompt and solutions joined: the item's text for search and dedup."""
        return "\n".join((self.prompt, *self.solutions))

    def with_changes(self, **changes: Any) -> Item:
        return replace(self, **changes)
