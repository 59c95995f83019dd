"""A new kind, registered from this module alone, works everywhere: a question kind, a dataset shape, a backend.

Each extension point takes a new kind in one place (docs/architecture.md, "Where a new feature goes"). Here a
1–5 ``likert`` question kind, a ``solutions`` nested JSONL shape and a ``length`` scoring backend (a real backend
of the protocol: it scores a continuation by a fixed rule, the shorter the likelier) are registered by this
module and nothing else, then used through the command line (in this process, so the registrations apply), the
dataset card and, for the question kind, the TUI driven with Pilot. Each fixture takes its kind out again, so the
other test modules see the built-in kinds only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.dataset.shapes.kind import DATASET_SHAPES, register_dataset_shape
from piqa_tui.core.errors import ModelError
from piqa_tui.core.round.question_kinds.kind import (
    QUESTION_KINDS,
    Parameters,
    Question,
    QuestionError,
    register_question_kind,
)
from piqa_tui.core.round.questions import project_answers, record_answer
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.scoring.backend import ContinuationScore, ModelBackend, ModelChoice, ScoreRequest
from piqa_tui.core.scoring.backends.kind import SCORING_BACKENDS, BackendOption, register_scoring_backend
from piqa_tui.core.scoring.engine import ScoringEngine
from piqa_tui.core.setting_values import invalid_setting
from piqa_tui.core.workspace.project import Project
from piqa_tui.tui.dialogs.questions import AnswerDialog
from tests.test_questions import PEOPLE, with_round
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported
from tests.tui.conftest import curate, current_id, main_screen, wait_for

# ------------------------------------------------------------------------------- a question kind


class Likert:
    """A five-point agreement scale answered 1–5 by key; ``anchors`` name its two ends (its own key)."""

    name = "likert"
    aliases = ("likert5",)
    keys = ("anchors",)
    policies = ("majority", "median", "none")
    default_policy = "median"
    level = "ordinal"

    def parameters(self, entry: Mapping[str, object], qid: str, place: str) -> Parameters:
        anchors = entry.get("anchors", ["disagree", "agree"])
        if not isinstance(anchors, list) or len(anchors) != 2 or not all(isinstance(a, str) for a in anchors):
            raise QuestionError(f'{place}: likert question {qid!r} needs anchors = ["low end", "high end"]')
        return Parameters(options=tuple(anchors))

    def categories(self, question: Question) -> tuple[str, ...]:
        return ("1", "2", "3", "4", "5")

    def hint(self, question: Question) -> str:
        low, high = question.options
        return f"1 ({low}) to 5 ({high})"

    def answer(self, question: Question, value: str) -> str | None:
        return value if value in self.categories(question) else None

    def to_json(self, question: Question) -> dict[str, object]:
        return {"anchors": list(question.options)}

    def keyed(self, question: Question) -> tuple[tuple[str, str], ...]:
        return tuple((n, n) for n in self.categories(question))


LIKERT = Likert()
FLUENCY = (
    '[[question]]\nid = "fluency"\ntext = "How natural does the goal read?"\nkind = "likert"\n'
    'anchors = ["stilted", "native"]\n'
)


@pytest.fixture
def likert() -> Iterator[Likert]:
    register_question_kind(LIKERT)
    yield LIKERT
    QUESTION_KINDS.unregister(LIKERT.name)


def test_a_registered_question_kind_is_declared_answered_agreed_on_and_carded(likert: Likert, tmp_path: Path) -> None:
    sample = culture_copy(tmp_path)
    with_round(sample, PEOPLE + FLUENCY)
    code, out, err = cli("round", sample, "show")
    assert code == 0 and "fluency  likert (1 (stilted) to 5 (native)), policy median" in out, err
    fluency = round_in_force(Project.open(sample, create=False).workspace).question("fluency")
    assert fluency is not None and fluency.to_json()["anchors"] == ["stilted", "native"]
    with pytest.raises(QuestionError, match="answer 1 \\(stilted\\) to 5 \\(native\\)"):
        fluency.answer("6")
    given = {"amina": ["5", "4", "2", "1"], "karim": ["4", "4", "3", "1"], "salma": ["5", "3", "2", "2"]}
    items = ["msa-001", "msa-002", "msa-003", "msa-004"]
    for name, answers in given.items():
        project = Project.open(sample, annotator=name)
        for item_id, value in zip(items, answers):
            record_answer(project, item_id, fluency, value)

    code, out, err = cli("agree", sample, "--json", "--resamples", "0")
    assert code == 0, err
    (found,) = json.loads(out)["questions"]
    expected = krippendorff.alpha(
        reliability_data=np.array([[float(v) for v in answers] for answers in given.values()]),
        level_of_measurement="ordinal",
    )
    assert found["kind"] == "likert" and found["level"] == "ordinal" and found["answers"] == 12
    assert found["measures"]["krippendorff_alpha_ordinal"]["value"] == pytest.approx(expected)

    code, card, err = cli("card", sample)
    assert code == 0, err
    assert "`fluency` — How natural does the goal read? (likert; 1 (stilted) to 5 (native); policy median)" in card
    assert "1: 1, 2: 1, 4: 1, 5: 1" in card  # the lower medians of the four items: 5, 4, 2, 1
    assert "Krippendorff's α (ordinal)" in card


async def test_a_registered_question_kind_is_answered_by_key_in_the_tui(likert: Likert, tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB) + FLUENCY)
    async with curate(dataset, annotator="karim") as pilot:
        screen = main_screen(pilot)
        await wait_for(pilot, lambda: screen.filtering.filters.queue == "assigned")
        item = current_id(pilot)
        await pilot.press("Q")  # one question: its answer dialog at once, its options by the kind's keys
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, AnswerDialog))
        assert pilot.app.screen.keys == {"1": "1", "2": "2", "3": "3", "4": "4", "5": "5", "backspace": "\x00clear"}
        await pilot.press("4")
        await wait_for(pilot, lambda: "? fluency: 4" in str(screen.view.item_view.title_line.render()))
    assert project_answers(Project.open(dataset, create=False)).of("fluency", item) == {"karim": "4"}


def test_without_the_registration_the_kind_is_refused_in_one_line(tmp_path: Path) -> None:
    sample = culture_copy(tmp_path)
    path = tmp_path / "round.toml"
    path.write_text(PEOPLE + FLUENCY, encoding="utf-8")
    code, _, err = cli("round", sample, "import", path, "--annotator", "hala")
    assert code == 2 and "unknown key 'anchors' in a question; the keys are id, text, kind, options, min" in err
    path.write_text(PEOPLE + FLUENCY.replace('anchors = ["stilted", "native"]\n', ""), encoding="utf-8")
    code, _, err = cli("round", sample, "import", path, "--annotator", "hala")
    assert code == 2 and "kind = 'likert' should be one of yes/no, choice, number, text" in err
    assert len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------- a dataset shape

SOLUTIONS = ("sol1", "sol2")


class NestedSolutions:
    """JSON lines whose two solutions sit in one object: ``{"goal": …, "solutions": {"sol1": …, "sol2": …}}``."""

    name = "solutions"
    formats = ("jsonl",)

    def recognises(self, rows: Sequence[dict[str, object]]) -> bool:
        return bool(rows) and all(
            isinstance(row.get("solutions"), dict) and not set(SOLUTIONS) & set(row) for row in rows
        )

    def flatten(self, row: dict[str, object]) -> dict[str, object]:
        flat: dict[str, object] = {}
        for key, value in row.items():
            flat.update(value if key == "solutions" and isinstance(value, dict) else {key: value})
        return flat

    def nest(self, flat: dict[str, object]) -> dict[str, object]:
        row: dict[str, object] = {}
        for key, value in flat.items():
            if key in SOLUTIONS:
                nested = row.setdefault("solutions", {})
                assert isinstance(nested, dict)
                nested[key] = value
            else:
                row[key] = value
        return row


NESTED_ROWS = [
    {"id": "n1", "goal": "Open a jar", "solutions": {"sol1": "Twist the lid", "sol2": "Shout at it"}, "label": 0},
    {"id": "n2", "goal": "Dry a towel", "solutions": {"sol1": "Freeze it", "sol2": "Hang it in the sun"}, "label": 1},
    {"id": "n3", "goal": "Cool tea", "solutions": {"sol1": "Wait a while", "sol2": "Boil it more"}, "label": 0},
]


@pytest.fixture
def nested(tmp_path: Path) -> Iterator[Path]:
    register_dataset_shape(NestedSolutions())
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in NESTED_ROWS), encoding="utf-8")
    yield path
    DATASET_SHAPES.unregister("solutions")


def test_a_registered_nested_shape_is_read_exported_back_and_carded(nested: Path, tmp_path: Path) -> None:
    dataset = load_dataset(nested)
    assert dataset.shape == "solutions" and dataset.columns == ["id", "goal", "sol1", "sol2", "label"]
    assert [(i.prompt, i.solutions, i.label) for i in dataset.items][1] == (
        "Dry a towel",
        ("Freeze it", "Hang it in the sun"),
        1,
    )
    same = tmp_path / "same.jsonl"
    code, _, err = cli("export", nested, "--to", same)
    assert code == 0 and same.read_bytes() == nested.read_bytes(), err

    Project.open(nested, annotator="amina").edit("n2", {"solution0": "Put it in the freezer"})
    edited = tmp_path / "edited.jsonl"
    code, _, err = cli("export", nested, "--to", edited)
    assert code == 0, err
    rows = [json.loads(line) for line in edited.read_text(encoding="utf-8").splitlines()]
    assert rows[1] == {**NESTED_ROWS[1], "solutions": {"sol1": "Put it in the freezer", "sol2": "Hang it in the sun"}}
    assert edited.read_text(encoding="utf-8").splitlines()[0] == nested.read_text(encoding="utf-8").splitlines()[0]

    code, card, err = cli("card", nested)
    assert code == 0 and "3 items" in card.replace("**", ""), err


def test_without_the_registration_the_nested_file_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in NESTED_ROWS), encoding="utf-8")
    code, _, err = cli("validate", path)
    assert code == 2 and "unknown layout: found columns id, goal, solutions, label" in err  # no sol1, sol2
    assert len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------- a scoring backend


class LengthRule:
    """A model that prefers the shortest continuation: log-likelihood minus its length in ``unit``s."""

    batch_items = 8

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.loaded = False

    def load(self) -> None:
        self.loaded = True

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[ContinuationScore, ...]]:
        return [tuple(self._one(c) for c in request.continuations) for request in requests]

    def _one(self, continuation: str) -> ContinuationScore:
        size = len(continuation.split()) if self.unit == "words" else len(continuation)
        return ContinuationScore(-float(size), max(1, len(continuation.split())))

    def describe(self) -> dict[str, object]:
        return {"identity": f"length-rule:{self.unit}", "backend": "length", "model": f"length rule ({self.unit})"}

    def close(self) -> None:
        self.loaded = False


class LengthBackend:
    """The ``length`` backend kind: ``--length-unit chars|words`` on ``score``, ``[length] unit`` in the config."""

    name = "length"
    table = "length"
    options = (BackendOption("--length-unit", "score by the length rule in this unit", choices=("chars", "words")),)

    def check_table(self, value: object) -> str:
        if not isinstance(value, dict) or set(value) != {"unit"} or value["unit"] not in ("chars", "words"):
            raise invalid_setting("length", value, 'a [length] table with unit = "chars" or "words"')
        return str(value["unit"])

    def configured(self, settings: object, origin: str) -> ModelChoice:
        return ModelChoice(None, "length", backend=self.name, settings=settings or "chars", origin=origin)

    def choices(self, values: Mapping[str, object], configured: Mapping[str, object]) -> list[ModelChoice]:
        unit = values.get("length_unit")
        return [ModelChoice(None, "--length-unit", backend=self.name, settings=unit)] if unit else []

    def with_options(
        self, choice: ModelChoice, values: Mapping[str, object], configured: Mapping[str, object]
    ) -> ModelChoice:
        return choice

    def usable(self, choice: ModelChoice) -> None:
        if choice.settings not in ("chars", "words"):
            raise ModelError("the length rule counts chars or words")

    def open(self, choice: ModelChoice, **options: Any) -> ModelBackend:
        self.usable(choice)
        return LengthRule(str(choice.settings))

    def describe(self, choice: ModelChoice, info: Mapping[str, object]) -> str:
        return f"{info['model']} · {choice.source}"


@pytest.fixture
def length() -> Iterator[LengthBackend]:
    kind = LengthBackend()
    register_scoring_backend(kind)
    yield kind
    SCORING_BACKENDS.unregister(kind.name)


SHORTER = [  # (goal, sol1, sol2, label): the shorter solution is right on 3 of 4 items, by characters
    ("Open a jar", "Twist the lid", "Shout at it until it opens", 0),
    ("Dry a towel", "Freeze it solid overnight", "Hang it up", 1),
    ("Cool tea", "Wait", "Pour it into a wide cold bowl", 0),
    ("Light a room", "Dark", "Switch the lamp on", 1),
]


def short_dataset(folder: Path) -> Path:
    path = folder / "short.tsv"
    path.write_text(
        "id\tgoal\tsol1\tsol2\tlabel\n"
        + "".join(f"s{n}\t{g}\t{a}\t{b}\t{lab}\n" for n, (g, a, b, lab) in enumerate(SHORTER)),
        encoding="utf-8",
    )
    return path


def test_a_registered_backend_scores_from_the_command_line_and_the_config(
    length: LengthBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = short_dataset(tmp_path)
    code, out, err = cli("score", data, "--length-unit", "chars", "--template", "bare", "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["model"] == "length-rule:chars" and found["acc"] == pytest.approx(0.75) and found["n_items"] == 4

    config = tmp_path / "config.toml"
    config.write_text('backend = "length"\n[length]\nunit = "words"\n', encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    code, out, err = cli("score", data, "--template", "bare", "--json")
    assert code == 0 and json.loads(out)["model"] == "length-rule:words", err

    code, card, err = cli("card", data)
    assert code == 0 and "length rule (chars)" in card and "length rule (words)" in card, err

    from piqa_tui.settings.model_choice import choose_model

    engine = ScoringEngine(Project.open(data, create=False), choose_model())  # what the TUI's session makes
    assert engine.describe() == "length rule (words) · length"

    config.write_text('[length]\nunit = "letters"\n', encoding="utf-8")
    code, _, err = cli("score", data, "--json")
    assert code == 2 and 'length = a table is not valid; it should be a [length] table with unit = "chars"' in err
    assert len(err.strip().splitlines()) == 1


def test_without_the_registration_its_option_and_table_are_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = short_dataset(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["score", str(data), "--length-unit", "chars"])
    assert exited.value.code == 2 and "unrecognized arguments: --length-unit chars" in capsys.readouterr().err
    config = tmp_path / "config.toml"
    config.write_text('[length]\nunit = "words"\n', encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    code, _, err = cli("score", data, "--json")
    assert code == 2 and "unknown setting 'length'" in err
