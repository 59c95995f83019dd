"""The kinds of extra question a round may ask, one module each, registered here (see ``kind.py``).

``yes/no``, ``choice``, ``number`` and ``text`` are built in; a project adds one with ``register_question_kind``.
"""

from __future__ import annotations

from piqa_tui.core.round.question_kinds.choice import Choice
from piqa_tui.core.round.question_kinds.kind import register_question_kind
from piqa_tui.core.round.question_kinds.number import Number
from piqa_tui.core.round.question_kinds.text import Text
from piqa_tui.core.round.question_kinds.yes_no import YesNo

for _kind in (YesNo(), Choice(), Number(), Text()):
    register_question_kind(_kind)
