"""The round's guidelines, versioned in the workspace, and the questions annotators ask the lead about them.

Guidelines are Markdown recorded as ``guidelines`` events (``new`` the text, the note its version and SHA-256);
version N is the N-th such event in the log's order and the latest is in force, so every machine that merged
the same log names the same version. Recording the text already in force records nothing.

A guideline question is an ``ask`` event on an item (``field`` the question's id, ``new`` its text; "" once
withdrawn by undo); the lead's answer is a ``reply`` event with the same id (``new`` the reply; "" reopens it).
A question with a reply is done. Ids are random, not sequence numbers, so two machines never give one id twice.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from piqa_tui.core.dataset.input_file import check_regular_file, read_checked
from piqa_tui.core.errors import InputError
from piqa_tui.core.workspace.log import Change, Part, Workspace
from piqa_tui.core.workspace.project import Project

GUIDELINES_KIND = "guidelines"
ASK_KIND = "ask"
REPLY_KIND = "reply"
GUIDELINES_FIELD = "guidelines"
MAX_GUIDELINES_BYTES = 1024**2  # 1 MiB: a book of guidelines is far smaller; a bigger file is the wrong file
MAX_QUESTION_CHARS = 2000  # a question or a reply is a line or two, not a document
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class GuidelinesError(InputError):
    """Guidelines or a question that cannot be recorded: one line saying what, where and what to do."""


@dataclass(frozen=True, slots=True)
class Guidelines:
    """One recorded version of the guidelines."""

    version: int
    text: str
    sha256: str
    recorded_by: str
    time: str

    def to_json(self) -> dict[str, object]:
        return {"version": self.version, "sha256": self.sha256, "recorded_by": self.recorded_by, "time": self.time}


def read_guidelines_file(path: Path) -> str:
    """The Markdown of a guidelines file (UTF-8, at most ``MAX_GUIDELINES_BYTES``); ``GuidelinesError`` if not."""
    size = check_regular_file(path, "guidelines file")
    if size > MAX_GUIDELINES_BYTES:
        raise GuidelinesError(
            f"{path}: {size:,} bytes is more than the {MAX_GUIDELINES_BYTES:,} guidelines may have; "
            "give the Markdown file itself"
        )
    data = read_checked(path, size, "guidelines file")
    if len(data) > MAX_GUIDELINES_BYTES:
        raise GuidelinesError(f"{path}: grew past {MAX_GUIDELINES_BYTES:,} bytes while read; give it again")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GuidelinesError(f"{path}: not UTF-8 text (byte {exc.start}); save the guidelines as UTF-8") from None
    if not text.strip():
        raise GuidelinesError(f"{path}: the guidelines file is empty; write the guidelines, then record them")
    return text


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def guideline_versions(workspace: Workspace | None) -> list[Guidelines]:
    """Every recorded version, oldest first (version 1 is the first in the log's order)."""
    if workspace is None:
        return []
    events = [e for e in workspace.events(kinds=[GUIDELINES_KIND]) if e.field == GUIDELINES_FIELD and e.new]
    return [
        Guidelines(n, event.new or "", sha256_of(event.new or ""), event.annotator, event.time)
        for n, event in enumerate(events, 1)
    ]


def guidelines_in_force(workspace: Workspace | None) -> Guidelines | None:
    """The latest version (None: no guidelines recorded)."""
    versions = guideline_versions(workspace)
    return versions[-1] if versions else None


def guidelines_part(text: str, workspace: Workspace) -> Part | None:
    """The change that records ``text`` as the next version (None when it is the version in force already)."""
    versions = guideline_versions(workspace)
    current = versions[-1] if versions else None
    if current is not None and current.text == text:
        return None
    note = f"version {len(versions) + 1}, sha256 {sha256_of(text)}"
    return Part(GUIDELINES_KIND, (Change(None, GUIDELINES_FIELD, current.text if current else None, text),), note)


# --------------------------------------------------------------------------- questions to the lead


@dataclass(frozen=True, slots=True)
class Question:
    """A guideline question on an item, and the lead's reply once there is one ("" while open)."""

    id: str
    item_id: str
    asked_by: str
    time: str
    text: str
    reply: str = ""
    replied_by: str = ""

    @property
    def open(self) -> bool:
        return not self.reply

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "item": self.item_id,
            "asked_by": self.asked_by,
            "time": self.time,
            "question": self.text,
            "open": self.open,
            "reply": self.reply or None,
            "replied_by": self.replied_by or None,
        }


def checked_text(text: str, what: str) -> str:
    """A question or reply as recorded: stripped, one to ``MAX_QUESTION_CHARS`` characters, no control characters."""
    text = text.strip()
    if not text:
        raise GuidelinesError(f"the {what} is empty; write it, then send it")
    if len(text) > MAX_QUESTION_CHARS:
        raise GuidelinesError(f"the {what} has {len(text):,} characters; keep it under {MAX_QUESTION_CHARS:,}")
    if _CONTROL.search(text):
        raise GuidelinesError(f"the {what} holds a control character; type it again without it")
    return text


def ask_part(item_id: str, text: str) -> Part:
    """The change that asks the lead ``text`` about ``item_id`` (a fresh question id)."""
    question = checked_text(text, "question")
    return Part(ASK_KIND, (Change(item_id, f"q-{uuid.uuid4().hex[:10]}", None, question),))


def reply_part(question: Question, text: str) -> Part:
    """The change that answers ``question`` with ``text`` (done from then on)."""
    reply = checked_text(text, "reply")
    return Part(REPLY_KIND, (Change(question.item_id, question.id, question.reply or None, reply),))


def guideline_questions(workspace: Workspace | None) -> list[Question]:
    """Every question not withdrawn, in the order asked, each with its latest reply."""
    if workspace is None:
        return []
    asked: dict[str, Question] = {}
    replies: dict[str, tuple[str, str]] = {}
    for event in workspace.events(kinds=[ASK_KIND, REPLY_KIND]):
        if not event.field or event.item_id is None:
            continue
        if event.kind == ASK_KIND:
            asked.pop(event.field, None)  # a question asked again (redo) takes its place in the order anew
            if event.new:
                asked[event.field] = Question(event.field, event.item_id, event.annotator, event.time, event.new)
        else:
            replies[event.field] = (event.new or "", event.annotator if event.new else "")
    return [Question(q.id, q.item_id, q.asked_by, q.time, q.text, *replies.get(q.id, ("", ""))) for q in asked.values()]


def find_question(workspace: Workspace | None, question_id: str) -> Question:
    """The question with this id; ``GuidelinesError`` naming the open ones when there is none."""
    found = guideline_questions(workspace)
    for question in found:
        if question.id == question_id:
            return question
    open_ids = ", ".join(q.id for q in found if q.open)[:200] or "none"
    raise GuidelinesError(
        f"no guideline question {question_id!r} (open: {open_ids}); see piqa-tui round PATH questions"
    )


def items_asked_about(project: Project, asked_by: str | None = None) -> frozenset[str]:
    """The ids of items with an open guideline question (by ``asked_by`` alone, when given). A queue asks once
    per item: the questions are read again only when the project has applied new events."""
    if project.workspace is None:
        return frozenset()
    workspace = project.workspace

    def asked() -> frozenset[str]:
        questions = guideline_questions(workspace)
        return frozenset(q.item_id for q in questions if q.open and asked_by in (None, q.asked_by))

    return project.memo.get((items_asked_about, asked_by), asked)
