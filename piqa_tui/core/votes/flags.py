"""Flags an annotator can raise on an item, by reason code."""

from __future__ import annotations

# ------------------------------------------------------------ what annotators see

FLAG_REASONS: dict[str, str] = {
    "ungrammatical": "the text is not grammatical in its language or dialect",
    "culturally-wrong": "the situation or answer does not fit the culture",
    "both-correct": "both solutions work",
    "both-wrong": "neither solution works",
    "offensive": "offensive or harmful content",
    "duplicate": "repeats another item",
    "remove": "flagged for removal from the release",
}
