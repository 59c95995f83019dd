"""Text made safe to show on a terminal: the one output sanitiser every face uses.

Dataset values, file and column names, config values and workspace contents
are data: printed raw, an ESC sequence in them can retitle the terminal, write
the clipboard (OSC 52), clear the screen or plant a link. Before any such
string reaches a terminal it goes through ``terminal_safe``, which shows every
C0/C1 control, DEL and bidi control as a visible escape (``\\x1b``,
``\\u009b``, ``\\u202e``) and leaves all other text as typed. Bidi controls
the display adapter adds for layout are added after this, so they survive.

Rich markup is a second channel: ``[/]`` in a category would be parsed as a
closing tag; ``piqa_tui.render.safe_text`` builds on this module for Rich.

``json_safe`` escapes the same characters inside JSON text with ``\\uXXXX``,
which any JSON reader decodes back to the exact value.
"""

from __future__ import annotations

import re

from piqa_tui.core.text.characters import BIDI_CONTROLS

# C0 controls but tab and newline, DEL, the C1 range, the bidi controls, and
# the line/paragraph separators some terminals treat as line breaks.
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029]")
_UNSAFE_IN_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{BIDI_CONTROLS}\u2028\u2029]")
MAX_MESSAGE_CHARS = 1000  # a one-line message longer than this is cut in the middle


def visible_escape(char: str) -> str:
    """How one unsafe character is shown: ``\\x1b`` below U+0080, ``\\u202e`` above."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def terminal_safe(text: object, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as a visible escape.

    ``one_line`` also escapes tab, newline and carriage return, for
    messages that must stay on one line. Lone surrogates (from JSON
    ``\\ud800``), which no terminal encoding can write, are shown the same way.
    """
    text = text if isinstance(text, str) else str(text)
    pattern = _UNSAFE_IN_LINE if one_line else _UNSAFE
    text = pattern.sub(lambda m: visible_escape(m.group()), text)
    return _SURROGATE.sub(lambda m: visible_escape(m.group()), text)


def message_line(text: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A one-line, terminal-safe message, cut in the middle when longer than ``limit``."""
    line = terminal_safe(text, one_line=True)
    if len(line) <= limit:
        return line
    half = limit // 2
    return f"{line[:half]} … ({len(line) - 2 * half:,} characters left out) … {line[-half:]}"


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a marker naming how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters not shown)"


def json_safe(json_text: str) -> str:
    """JSON text with DEL, C1, bidi controls and lone surrogates written as ``\\uXXXX`` escapes.

    ``json.dumps(..., ensure_ascii=False)`` already escapes C0; these others
    can only occur inside strings, where ``\\uXXXX`` stands for the same value.
    """
    escaped = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped)
