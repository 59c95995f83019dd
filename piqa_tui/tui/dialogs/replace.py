"""Asking before a write replaces files that exist (export, the agreement report)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from piqa_tui.tui.dialogs.asker import Asker
from piqa_tui.tui.dialogs.prompts import ChoiceDialog


def ask_before_replacing(asker: Asker, outputs: list[Path], then: Callable[[], None]) -> None:
    """Run ``then`` at once when no output exists, else after the user agrees to replace them."""
    existing = [p for p in outputs if p.exists()]
    if not existing:
        then()
        return

    def chosen(key: str | None) -> None:
        if key == "replace":
            then()

    names = ", ".join(str(p) for p in existing)
    asker.push_screen(
        ChoiceDialog(
            "Replace the file?",
            f"{names} already exists.",
            [("replace", "Replace it", "the old content is lost"), ("cancel", "Cancel", "write nothing")],
        ),
        chosen,
    )
