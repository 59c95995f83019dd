"""The round's guidelines where the work happens (W): the Markdown in force, and the questions asked about it.

The Markdown is parsed with markdown-it (CommonMark) into blocks — headings, paragraphs, list items, quotes,
code — and each block is drawn by the bidi display adapter, as item text is: an Arabic paragraph is shaped
and right-aligned, a Tamil one keeps its clusters whole, whatever the bidi mode. Textual's own Markdown
widget lays text out left to right, unshaped, and turns links into actions; here emphasis, code and links
are only styles over the block's text (a link shows its address after it, and nothing on screen can be
clicked), and control characters are drawn as their pictures, so a guidelines file cannot act on the app
or the terminal.

An annotator asks the lead about the item they were on (``a``); a reviewer answers the open question on
it (``r``). Both are submitted by the guidelines controller (``tui/controllers/guidelines.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Group
from rich.padding import Padding
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from piqa_tui.core.round.guidelines import (
    Question,
    guideline_questions,
    guidelines_in_force,
)
from piqa_tui.core.text.bidi import BidiText
from piqa_tui.core.text.direction import Direction
from piqa_tui.core.text.terminal_safe import isolated
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.safe_text import rich_text
from piqa_tui.tui.controllers.guidelines import GuidelinesController
from piqa_tui.tui.keymap import GUIDELINES_ACTIONS, bindings
from piqa_tui.tui.messages import ItemsChanged, OthersChanged
from piqa_tui.tui.screens.host import ScreenHost
from piqa_tui.tui.state.session import Session

INLINE_STYLES = {"strong": "bold", "em": "italic", "s": "strike", "link": "underline"}
CODE_STYLE = "reverse"


@dataclass
class Block:
    """One block of the guidelines as drawn: its text, a style for all of it, styled spans, an indent."""

    text: str = ""
    style: str = ""
    spans: list[tuple[int, int, str]] = field(default_factory=list)
    indent: int = 0
    marker: bool = False  # a list item's bullet or number, waiting for the item's first paragraph


def markdown_blocks(markdown: str) -> list[Block]:
    """The blocks of ``markdown`` in reading order (inline markup turned into styled spans, never actions)."""
    blocks: list[Block] = []
    lists: list[list[int]] = []  # per open list: [next number] (ordered) or [] (bullets)
    quote = 0
    heading = ""
    for token in MarkdownIt("commonmark").parse(markdown):
        kind = token.type
        indent = 2 * len(lists) + 2 * quote
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append([int(token.attrs.get("start", 1) or 1)] if kind == "ordered_list_open" else [])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "blockquote_open":
            quote += 1
        elif kind == "blockquote_close":
            quote -= 1
        elif kind == "heading_open":
            heading = "bold underline" if token.tag == "h1" else "bold"
        elif kind == "list_item_open" and lists:
            blocks.append(Block(_marker(lists[-1]), "bold", indent=max(0, indent - 2), marker=True))
        elif kind == "inline":
            blocks.append(_inline(token, heading or ("italic" if quote else ""), indent, blocks))
            heading = ""
        elif kind in ("fence", "code_block", "html_block"):
            blocks.append(Block(token.content.rstrip("\n"), CODE_STYLE if kind != "html_block" else "", indent=indent))
        elif kind == "hr":
            blocks.append(Block("─" * 40, "dim", indent=indent))
    return [b for b in blocks if b.text]


def _marker(numbers: list[int]) -> str:
    if not numbers:
        return "•"
    numbers[0] += 1
    return f"{numbers[0] - 1}."


def _inline(token: Token, style: str, indent: int, blocks: list[Block]) -> Block:
    """An inline run as one block; the first paragraph of a list item joins its marker."""
    block = Block(style=style, indent=indent)
    if blocks and blocks[-1].marker:
        marker = blocks.pop()
        block.text = marker.text + " "
        block.indent = marker.indent
        block.spans.append((0, len(marker.text), "bold"))
    opened: dict[str, list[int]] = {}
    links: list[str] = []
    for child in token.children or []:
        kind = child.type
        start = len(block.text)
        if kind in ("text", "html_inline"):
            block.text += child.content
        elif kind == "code_inline":
            block.text += child.content
            block.spans.append((start, len(block.text), CODE_STYLE))
        elif kind == "softbreak":
            block.text += " "
        elif kind == "hardbreak":
            block.text += "\n"
        elif kind == "image":
            block.text += f"[image: {child.content}]"
        elif kind.endswith("_open"):
            opened.setdefault(kind[: -len("_open")], []).append(start)
            if kind == "link_open":
                links.append(str(child.attrs.get("href", "")))
        elif kind.endswith("_close") and opened.get(name := kind[: -len("_close")]):
            block.spans.append((opened[name].pop(), start, INLINE_STYLES.get(name, "")))
            if name == "link" and links:
                block.text += f" <{links.pop()}>"
                block.spans.append((start, len(block.text), "dim"))
    return block


class GuidelinesHost(ScreenHost["GuidelinesScreen"]):
    """What the guidelines controller asks of the screen."""

    def after_change(self, item_ids: list[str]) -> None:
        self.post_to_app(ItemsChanged(item_ids))  # the main screen's items follow
        if self.screen.is_attached:
            self.screen.show_questions()


class GuidelinesScreen(Screen[None]):
    """The guidelines in force, and the questions on them: the annotator's own, or every open one (reviewer)."""

    DEFAULT_CSS = """
    GuidelinesScreen #guidelines-title {
        dock: top;
        height: 1;
        background: $panel;
        padding: 0 1;
        text-style: bold;
    }
    GuidelinesScreen VerticalScroll {
        padding: 0 1;
    }
    GuidelinesScreen #guidelines-text, GuidelinesScreen #guidelines-questions {
        width: 1fr;
    }
    """

    ACTIONS = GUIDELINES_ACTIONS
    BINDINGS = bindings(ACTIONS)

    def __init__(self, session: Session, item_id: str | None) -> None:
        super().__init__()
        self.session = session
        self.item_id = item_id  # the item the annotator was on: questions are about it
        self.shown: list[tuple[BidiText, int]] = []  # the guidelines' blocks on screen, with their indents
        self.shown_title = ""  # the title line of the version on screen
        self.guidelines = GuidelinesController(session, GuidelinesHost(self, session))

    @property
    def project(self) -> Project:
        """The session's project, asked for each time (never a reference kept across a refresh)."""
        return self.session.project

    def compose(self) -> ComposeResult:
        self.shown_title = self.title_line()
        yield Static(rich_text(self.shown_title, one_line=True), id="guidelines-title")
        with VerticalScroll(id="guidelines-body"):
            guidelines = guidelines_in_force(self.project.workspace)
            if guidelines is None:
                yield Static(
                    "No guidelines are recorded for this dataset. The lead records them with: "
                    "piqa-tui round PATH guidelines FILE.md",
                    markup=False,
                )
            self.shown = [self.block_view(b) for b in markdown_blocks(guidelines.text if guidelines else "")]
            yield Static(
                Group(*(Padding(text, (0, 0, 1, indent)) for text, indent in self.shown)), id="guidelines-text"
            )
            yield Static(id="guidelines-questions")
        yield Footer(compact=True)

    def block_view(self, block: Block) -> tuple[BidiText, int]:
        """A block as the bidi display draws it, and its indent (one widget holds them all: a long file of
        guidelines costs no widget per paragraph)."""
        return BidiText(block.text, self.session.bidi_mode, block.style or None, highlights=block.spans), block.indent

    def title_line(self) -> str:
        guidelines = guidelines_in_force(self.project.workspace)
        name = self.project.dataset.name
        if guidelines is None:
            return f"Guidelines — {name}: none recorded"
        return f"Guidelines — {name}: version {guidelines.version} (sha256 {guidelines.sha256[:12]}…)"

    def on_mount(self) -> None:
        self.show_questions()
        self.query_one(VerticalScroll).focus()

    # -------------------------------------------------------------- questions

    def questions_shown(self) -> list[Question]:
        """A reviewer sees every open question and the current item's; an annotator sees their own."""
        found = guideline_questions(self.project.workspace)
        if self.session.reviewer:
            return [q for q in found if q.open or q.item_id == self.item_id]
        return [q for q in found if q.asked_by == self.project.annotator]

    def questions_text(self) -> str:
        shown = self.questions_shown()
        head = "Open questions from annotators" if self.session.reviewer else "Your questions to the lead"
        keys = "a: ask the lead" + (", r: answer" * self.session.reviewer)
        where = f"({keys} about item {isolated(self.item_id)})" if self.item_id else "(open an item to ask about it)"
        lines = [f"━━ {head} ━━ {where}"]
        for q in shown:  # what annotators wrote is isolated: an RLO or an Arabic reply cannot reorder "[open]"
            state = "open" if q.open else f"answered by {isolated(q.replied_by)}: {isolated(q.reply)}"
            lines.append(f"• {isolated(q.item_id)} — {isolated(q.asked_by)}: {isolated(q.text)}  [{state}]")
        if not shown:
            lines.append("none")
        return "\n".join(lines)

    def show_questions(self) -> None:
        questions = BidiText(self.questions_text(), self.session.bidi_mode, direction=Direction.LTR)  # the app's list
        self.query_one("#guidelines-questions", Static).update(questions)

    def on_others_changed(self, message: OthersChanged) -> None:
        """Questions, replies or a new version arrived from another process: the screen follows."""
        message.stop()
        if self.title_line() != self.shown_title:
            self.refresh(recompose=True)
            self.call_after_refresh(self.show_questions)
        else:
            self.show_questions()

    # -------------------------------------------------------------- actions

    def action_ask(self) -> None:
        self.guidelines.ask(self.item_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Answering is the lead's: the key is off (and out of the footer) outside reviewer mode."""
        return self.session.reviewer if action == "reply" else True

    def action_reply(self) -> None:
        question = next((q for q in self.questions_shown() if q.open and q.item_id == self.item_id), None)
        self.guidelines.reply(question, self.item_id)

    def action_close(self) -> None:
        self.dismiss()
