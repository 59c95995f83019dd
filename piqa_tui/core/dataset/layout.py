"""Which column holds the prompt, the solutions, the label and the id.

The layouts met in the wild (PIQA, Global PIQA, COPA/XCOPA, ArabCulture; see the README) are recognised from the header alone;
anything else takes an explicit mapping such as
``prompt=question,solutions=a|b|c,label=answer,id=uid``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from piqa_tui.core.errors import LayoutError, MappedColumnMissing

MAX_SOLUTIONS = 4

# Solution column families, each a list of candidate names in order.
_SOLUTION_FAMILIES: list[list[str]] = [
    ["sol1", "sol2", "sol3", "sol4"],
    ["solution0", "solution1", "solution2", "solution3"],
    ["solution1", "solution2", "solution3", "solution4"],
    ["choice1", "choice2", "choice3", "choice4"],
    ["option_a", "option_b", "option_c", "option_d"],
    ["option1", "option2", "option3", "option4"],
    ["option0", "option1", "option2", "option3"],
    ["a", "b", "c", "d"],
    ["ending0", "ending1", "ending2", "ending3"],
    ["answer_a", "answer_b", "answer_c", "answer_d"],
]
_PROMPT_NAMES = ["goal", "prompt", "premise", "first_statement", "statement", "context", "question", "sentence"]
_LABEL_NAMES = ["label", "answer", "answer_key", "gold", "gold_label", "correct", "correct_answer"]
_ID_NAMES = ["id", "idx", "item_id", "qid", "uid", "example_id", "sample_id", "index"]
_QUESTION_NAMES = ["question"]  # COPA's cause/effect, only when the prompt is a premise

LAYOUT_NAMES = {
    "sol1": "piqa",
    "solution0": "global-piqa",
    "solution1": "global-piqa",
    "choice1": "copa",
}


def canonical(name: str) -> str:
    """Column names compared case- and punctuation-insensitively ("Answer Key" == "answer_key")."""
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


@dataclass(frozen=True)
class Layout:
    """The roles of a dataset's columns; ``labels_file`` is PIQA's separate .lst file."""

    name: str
    prompt: str
    solutions: tuple[str, ...]
    label: str | None
    id: str | None = None
    question: str | None = None
    label_base: int = 0
    labels_file: str | None = None
    explicit: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def role_columns(self) -> set[str]:
        cols = {self.prompt, *self.solutions}
        cols.update(c for c in (self.label, self.id, self.question) if c)
        return cols

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "prompt": self.prompt,
            "solutions": list(self.solutions),
            "label": self.label,
            "id": self.id,
            "question": self.question,
            "label_base": self.label_base,
            "labels_file": self.labels_file,
        }


def parse_mapping(spec: str) -> dict[str, str]:
    """Parse ``prompt=col,solutions=a|b,label=col,id=col,label_base=1`` into a dict."""
    mapping: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in {"prompt", "solutions", "label", "id", "question", "label_base"}:
            raise LayoutError(
                f"bad column mapping '{part}': use prompt=COL,solutions=COL|COL,label=COL,id=COL (label_base=1 for 1-based labels)"
            )
        mapping[key] = value.strip()
    return mapping


def format_mapping(mapping: dict[str, str]) -> str:
    """``mapping`` written as ``--map`` takes it (``parse_mapping`` reads it back)."""
    return ",".join(f"{key}={value}" for key, value in mapping.items() if value != "")


def shown_columns(columns: list[str] | tuple[str, ...], limit: int = 12) -> str:
    """A header's column names for a message: the first ``limit``, then how many more (a wide file's run long)."""
    more = f" and {len(columns) - limit} more" if len(columns) > limit else ""
    return ", ".join(columns[:limit]) + more


def detect_layout(columns: list[str], mapping: dict[str, str] | None = None, source: str = "") -> Layout:
    """The layout of a header, from ``mapping`` where given and recognition elsewhere."""
    by_canon: dict[str, str] = {}
    for col in columns:
        by_canon.setdefault(canonical(col), col)
    mapping = dict(mapping or {})

    def resolve(name: str) -> str:
        if name in columns:
            return name
        if canonical(name) in by_canon:
            return by_canon[canonical(name)]
        raise MappedColumnMissing(
            f"{source}: the mapping names column '{name}', which is not in the file (found: {shown_columns(columns)})",
            name,
            columns,
        )

    def first(names: list[str]) -> str | None:
        return next((by_canon[n] for n in names if n in by_canon), None)

    if "solutions" in mapping:
        solutions = tuple(resolve(c) for c in mapping["solutions"].split("|") if c)
        family = "custom"
    else:
        solutions, family = _detect_solutions(by_canon)
        _refuse_fifth_solution(solutions, by_canon, source)
    prompt = (
        resolve(mapping["prompt"])
        if "prompt" in mapping
        else first([n for n in _PROMPT_NAMES if by_canon.get(n) not in solutions])
    )
    if not prompt or len(solutions) < 2:
        raise LayoutError(
            f"{source}: unknown layout: found columns {', '.join(columns)}; "
            "map them with --map prompt=COL,solutions=COL|COL,label=COL"
        )
    if len(solutions) > MAX_SOLUTIONS:
        raise LayoutError(f"{source}: {len(solutions)} solution columns mapped; at most {MAX_SOLUTIONS} are supported")
    label = resolve(mapping["label"]) if mapping.get("label") else first(_LABEL_NAMES)
    id_col = resolve(mapping["id"]) if mapping.get("id") else first(_ID_NAMES)
    question = None
    if mapping.get("question"):
        question = resolve(mapping["question"])
    elif canonical(prompt) == "premise":
        question = first(_QUESTION_NAMES)
    name = "custom" if mapping else LAYOUT_NAMES.get(family, "multiple-choice" if len(solutions) > 2 else "custom")
    if family == "option_a" or (len(solutions) == 3 and name == "custom" and not mapping):
        name = "culture"
    base_text = mapping.get("label_base", "0").strip()
    if base_text not in ("0", "1"):  # ASCII 0 or 1 only: int() would read "١" as 1 and "2" as a base
        raise LayoutError(f"{source}: label_base must be 0 or 1, not '{mapping['label_base']}'")
    label_base = int(base_text)
    return Layout(
        name=name,
        prompt=prompt,
        solutions=solutions,
        label=label,
        id=id_col,
        question=question,
        label_base=label_base,
        explicit=mapping,
    )


def _refuse_fifth_solution(solutions: tuple[str, ...], by_canon: dict[str, str], source: str) -> None:
    """LayoutError when the header continues a 4-solution family (``solution4`` after ``solution3``).

    Read silently, the fifth column would become metadata and its text would never be voted on.
    """
    if len(solutions) < MAX_SOLUTIONS:
        return
    last = canonical(solutions[-1])
    following = last[:-1] + (str(int(last[-1]) + 1) if last[-1].isdecimal() else chr(ord(last[-1]) + 1))
    if following in by_canon:
        raise LayoutError(
            f"{source}: column '{by_canon[following]}' would be a fifth solution; piqa-tui handles at most "
            f"{MAX_SOLUTIONS}: remove it, or rename it if it is not a solution"
        )


def _detect_solutions(by_canon: dict[str, str]) -> tuple[tuple[str, ...], str]:
    """The longest run (2-4) of a known solution family present in the header."""
    best: tuple[str, ...] = ()
    best_family = ""
    for family in _SOLUTION_FAMILIES:
        run: list[str] = []
        for name in family:
            if name not in by_canon:
                break
            run.append(by_canon[name])
        if len(run) >= 2 and len(run) > len(best):
            best, best_family = tuple(run), family[0]
    return best, best_family
