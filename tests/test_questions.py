"""Extra questions per item: the round file's [[question]] tables, answers as events with undo, decided values
per policy, agreement against krippendorff and statsmodels, release columns, the answers file and merge.

The Arab-culture country question is the worked example of docs/rounds.md, read from that page.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from piqa_tui.core.round.declaration import Round, RoundError, parse_round
from piqa_tui.core.round.questions import (
    Answers,
    Question,
    QuestionError,
    answers_in_force,
    decide,
    project_answers,
    question_agreement,
    record_answer,
)
from piqa_tui.core.round.recorded import round_in_force
from piqa_tui.core.votes.exchange import export_answers, import_answers
from piqa_tui.core.workspace.project import Project
from tests.conftest import copy_sample
from tests.test_rounds import ARAB, DOCS, cli, culture_copy, doc_round, round_file

PEOPLE = '[[annotator]]\nname = "a"\nroles = ["validator"]\n'
RELEVANT = "relevant_to_other_countries"


def doc_questions() -> str:
    """The [[question]] block of docs/rounds.md's worked example."""
    return next(
        b
        for b in re.findall(r"```toml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
        if b.startswith("[[question]]")
    )


def asked(*tables: str) -> Round:
    return parse_round(PEOPLE + "".join(tables), "round.toml")


YES_NO = '[[question]]\nid = "rel"\ntext = "Relevant elsewhere?"\nkind = "yes/no"\npolicy = "any-yes"\n'
SCALE = '[[question]]\nid = "acc"\ntext = "Cultural accuracy"\nkind = "number"\nmin = 1\nmax = 5\n'
CHOICE = '[[question]]\nid = "reg"\ntext = "Register"\nkind = "choice"\noptions = ["formal", "casual", "mixed"]\n'
NOTE = '[[question]]\nid = "why"\ntext = "Why?"\nkind = "text"\n'


# ------------------------------------------------------------------------------- the round file


def test_questions_are_read_with_their_defaults_and_survive_the_recorded_round() -> None:
    declared = asked(YES_NO, SCALE, CHOICE, NOTE)
    assert [(q.id, q.kind, q.policy) for q in declared.questions] == [
        ("rel", "yes/no", "any-yes"),
        ("acc", "number", "median"),
        ("reg", "choice", "majority"),
        ("why", "text", "none"),
    ]
    assert declared.questions[1].categories == ("1", "2", "3", "4", "5")
    assert Round.from_canonical(declared.canonical()) == declared
    assert "questions" not in asked().canonical()  # a round without questions records what it did before


BAD = [
    ('[[question]]\ntext = "x"\nkind = "text"\n', "round.toml:4: question id"),
    ('[[question]]\nid = "2x"\ntext = "x"\nkind = "text"\n', "should be a letter"),
    ('[[question]]\nid = "a b"\ntext = "x"\nkind = "text"\n', "should be a letter"),
    ('[[question]]\nid = "q"\nkind = "text"\n', "needs text"),
    ('[[question]]\nid = "q"\ntext = "x\\u0007"\nkind = "text"\n', "needs text"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "scale"\n', "kind = 'scale' should be one of"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "text"\npolicy = "any-yes"\n', "does not fit text"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "yes/no"\npolicy = "median"\n', "does not fit yes/no"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "choice"\n', "needs options"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "choice"\noptions = ["a"]\n', "needs options"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "choice"\noptions = ["a", "a"]\n', "names an option twice"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "yes/no"\noptions = ["a", "b"]\n', "options belong"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "number"\nmin = 5\nmax = 1\n', "min <= max"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "number"\nmin = 1.5\nmax = 3\n', "min <= max"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "number"\nmin = 0\nmax = 1000\n', "at most 100 apart"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "text"\nmin = 1\n', "min and max belong"),
    ('[[question]]\nid = "q"\ntext = "x"\nkind = "text"\ncolour = "red"\n', "unknown key 'colour'"),
    (YES_NO + YES_NO, "'rel' is declared twice"),
    ('question = "rel"\n', "should be [[question]] tables"),
    ("question = [1]\n", "a question is not a table"),
]


@pytest.mark.parametrize(("table", "says"), BAD, ids=[b[1] for b in BAD])
def test_a_bad_question_is_one_line_naming_the_file(table: str, says: str) -> None:
    text = table + PEOPLE if table.startswith("question =") else PEOPLE + table
    with pytest.raises(RoundError) as raised:
        parse_round(text, "round.toml")
    message = str(raised.value)
    assert says in message and message.startswith("round.toml") and "\n" not in message


def test_answers_are_checked_and_spelt_one_way() -> None:
    rel, acc, reg, why = asked(YES_NO, SCALE, CHOICE, NOTE).questions
    assert [rel.answer(a) for a in ("y", "YES", " no ", "n", "")] == ["yes", "yes", "no", "no", ""]
    assert [reg.answer(a) for a in ("2", "mixed")] == ["casual", "mixed"]
    assert [acc.answer(a) for a in ("1", "+5")] == ["1", "5"]
    assert why.answer("  بسبب العادات  ") == "بسبب العادات"
    assert why.answer("cafe\u0301") == "caf\u00e9"  # stored in NFC, as typed text always is
    bad_answers = ((rel, "maybe"), (reg, "4"), (reg, "²"), (reg, "①"), (acc, "6"), (acc, "2.5"), (acc, "²"))
    for question, bad in (*bad_answers, (why, "a\x1b[2J"), (why, "x" * 501)):
        with pytest.raises(QuestionError):
            question.answer(bad)


# ------------------------------------------------------------------------------- answers in the workspace


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return copy_sample("msa-culture.tsv", tmp_path)


def with_round(dataset: Path, text: str) -> Path:
    code, _, err = cli("round", dataset, "import", round_file(dataset.parent, text), "--annotator", "hala")
    assert code == 0, err
    return dataset


def test_a_later_answer_replaces_an_earlier_and_undo_brings_each_back(sample: Path) -> None:
    rel = asked(YES_NO).questions[0]
    amina = Project.open(sample, annotator="amina")
    karim = Project.open(sample, annotator="karim")
    record_answer(amina, "msa-001", rel, "y")
    record_answer(karim, "msa-001", rel, "n")
    record_answer(amina, "msa-001", rel, "n")
    record_answer(amina, "msa-001", rel, "n")  # the same answer again records nothing
    assert len(amina.workspace.events(kinds=["answer"])) == 3
    assert project_answers(amina).of("rel", "msa-001") == {"amina": "no", "karim": "no"}
    amina.undo()
    assert project_answers(amina).of("rel", "msa-001") == {"amina": "yes", "karim": "no"}  # not karim's "no"
    amina.undo()
    assert project_answers(amina).of("rel", "msa-001") == {"karim": "no"}
    amina.redo()
    assert project_answers(amina).of("rel", "msa-001") == {"amina": "yes", "karim": "no"}
    record_answer(amina, "msa-001", rel, "")  # taken back
    assert answers_in_force(Project.open(sample, create=False).workspace).of("rel", "msa-001") == {"karim": "no"}


# ------------------------------------------------------------------------------- decided values


def question(kind: str, policy: str) -> Question:
    options = ("a", "b", "c") if kind == "choice" else ()
    low, high = (1, 5) if kind == "number" else (None, None)
    return Question("q", "?", kind, policy, options, low, high)


@pytest.mark.parametrize(
    ("kind", "policy", "answers", "decided"),
    [
        ("yes/no", "any-yes", ["no", "yes", "no"], "yes"),
        ("yes/no", "any-yes", ["no", "no"], "no"),
        ("yes/no", "all-yes", ["yes", "yes"], "yes"),
        ("yes/no", "all-yes", ["yes", "no"], "no"),
        ("yes/no", "majority", ["yes", "no"], ""),  # a tie is no majority
        ("yes/no", "majority", ["yes", "no", "yes"], "yes"),
        ("choice", "majority", ["a", "b", "c"], ""),
        ("choice", "majority", ["c", "c", "a"], "c"),
        ("choice", "unanimous", ["b", "b", "b"], "b"),
        ("choice", "unanimous", ["b", "b", "a"], ""),
        ("number", "median", ["1", "4", "5", "2"], "2"),  # the lower median stays on the scale
        ("number", "median", ["3", "5", "4"], "4"),
        ("text", "none", ["x", "x"], ""),
        ("yes/no", "any-yes", [], ""),
    ],
)
def test_decided_values_follow_each_policy(kind: str, policy: str, answers: list[str], decided: str) -> None:
    assert decide(question(kind, policy), answers) == decided


# ------------------------------------------------------------------------------- agreement


def by_item(matrix: list[list[str | None]]) -> dict[str, dict[str, str]]:
    """Item → annotator → answer from a raters × items matrix (None: no answer)."""
    found: dict[str, dict[str, str]] = {}
    for rater, row in enumerate(matrix):
        for item, value in enumerate(row):
            if value is not None:
                found.setdefault(f"i{item}", {})[f"r{rater}"] = value
    return found


def test_nominal_agreement_equals_krippendorff_and_statsmodels() -> None:
    matrix = [
        ["yes", "no", "yes", "yes", "no", "yes", None, "no"],
        ["yes", "no", "no", "yes", "no", "yes", "yes", "no"],
        ["no", "no", "yes", "yes", "yes", "yes", "yes", None],
    ]
    found = question_agreement(question("yes/no", "majority"), by_item(matrix)).measures
    codes = np.array([[np.nan if v is None else float(v == "yes") for v in row] for row in matrix])
    alpha = krippendorff.alpha(reliability_data=codes, level_of_measurement="nominal")
    assert found["krippendorff_alpha"].value == pytest.approx(alpha)
    complete = codes[:, :6].T.astype(int)  # Fleiss' κ on the items every rater answered
    assert found["fleiss_kappa"].value == pytest.approx(sm_fleiss(aggregate_raters(complete)[0]))


def test_ordinal_agreement_on_a_scale_equals_krippendorff() -> None:
    matrix = [
        ["1", "2", "3", "3", "2", "1", "4", "1", "2", None],
        ["1", "2", "3", "3", "2", "2", "4", "1", "2", "5"],
        [None, "3", "3", "3", "2", "3", "4", "2", "2", "5"],
        ["1", "2", "3", "3", "2", "4", "4", "1", "2", "5"],
    ]
    found = question_agreement(question("number", "median"), by_item(matrix))
    codes = np.array([[np.nan if v is None else float(v) for v in row] for row in matrix])
    expected = krippendorff.alpha(reliability_data=codes, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert found.level == "ordinal"
    assert found.measures["krippendorff_alpha_ordinal"].value == pytest.approx(expected)


def test_free_text_has_no_agreement_statistic() -> None:
    found = question_agreement(question("text", "none"), by_item([["a", "b"], ["a", "c"]]))
    assert found.level == "none" and found.measures == {} and found.items == 2


# ------------------------------------------------------------------------------- the Arab-culture round


@pytest.fixture
def culture(tmp_path: Path) -> Path:
    dataset = with_round(culture_copy(tmp_path), doc_round(ARAB) + doc_questions())
    code, _, err = cli("assign", dataset, "--annotator", "hala")
    assert code == 0, err
    return dataset


def answer_as_validators(dataset: Path) -> dict[str, str]:
    """Each item's assigned validator answers the country question (yes on every third item); the answers."""
    from piqa_tui.core.round.recorded import assignment_in_force

    lead = Project.open(dataset, create=False)
    relevant = round_in_force(lead.workspace).question(RELEVANT)
    given = {}
    for n, (item_id, names) in enumerate(sorted(assignment_in_force(lead.workspace).items.items())):
        given[item_id] = "yes" if n % 3 == 0 else "no"
        record_answer(Project.open(dataset, annotator=names[0]), item_id, relevant, given[item_id])
    return given


def test_the_release_has_the_country_specific_column_the_validators_answered(culture: Path) -> None:
    given = answer_as_validators(culture)
    out = culture.parent / "release.tsv"
    code, _, err = cli("export", culture, "--decided", "--to", out, "--card", culture.parent / "README.md")
    assert code == 0, err
    header, *rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    column, votes = header.index(RELEVANT), header.index(f"{RELEVANT}_votes")
    assert {row[0]: row[column] for row in rows} == given
    assert {row[0]: json.loads(row[votes]) for row in rows} == {k: [v] for k, v in given.items()}
    card = (culture.parent / "README.md").read_text(encoding="utf-8")
    assert "### Extra questions" in card and f"`{RELEVANT}`" in card and "policy any-yes" in card
    yes = sum(v == "yes" for v in given.values())
    assert f"no: {len(given) - yes}, yes: {yes}" in card
    fields = card.split("### Data Fields")[1].split("###")[0]  # the release's every column, the questions' too
    votes_row = next(line for line in fields.splitlines() if line.startswith(f"| `{RELEVANT}_votes`"))
    assert "a JSON list without names" in votes_row and '`["yes"]`' in votes_row
    assert any(line.startswith(f"| `{RELEVANT}` ") and "any-yes" in line for line in fields.splitlines())
    code, _, err = cli("export", culture, "--to", out, "--card", culture.parent / "README.md", "--force")
    assert code == 0, err  # without --decided the release has no question columns, nor does its card
    assert (
        f"`{RELEVANT}_votes`"
        not in (culture.parent / "README.md").read_text(encoding="utf-8").split("### Data Fields")[1].split("###")[0]
    )


def test_agree_has_a_section_per_question(culture: Path) -> None:
    answer_as_validators(culture)
    code, out, err = cli("agree", culture, "--json", "--resamples", "0")
    assert code == 0, err
    (found,) = json.loads(out)["questions"]
    assert found["question"] == RELEVANT and found["level"] == "nominal" and found["answers"] == 30
    code, out, _ = cli("agree", culture, "--resamples", "0")
    assert code == 0 and RELEVANT in out


def test_a_question_named_like_a_dataset_column_is_refused_at_export(sample: Path) -> None:
    with_round(sample, PEOPLE + YES_NO.replace('"rel"', '"country"'))
    code, _, err = cli("export", sample, "--decided", "--to", sample.parent / "out.tsv")
    assert code != 0 and "question column 'country'" in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------- exchange and merge

# Names a round may hold (no control characters: a round file refuses them) that TSV, CSV and JSONL must escape.
HOSTILE = ["tab\\tlike", "back\\slash", "cr\\r", "sep\u2028line", "عربي", '"quoted", comma', "semi;colon"]


def people(*names: str) -> str:
    """[[annotator]] tables naming ``names`` (validators), as a round file writes them."""
    return "".join(f'[[annotator]]\nname = {json.dumps(name)}\nroles = ["validator"]\n' for name in names)


@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".jsonl"])
def test_answers_travel_by_file_whatever_they_hold(tmp_path: Path, suffix: str) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    source, target = copy_sample("msa-culture.tsv", here), copy_sample("msa-culture.tsv", there)
    text = people(*HOSTILE, "amina") + YES_NO + NOTE
    with_round(source, text), with_round(target, text)
    why = asked(NOTE).questions[0]
    rel = asked(YES_NO).questions[0]
    for n, name in enumerate(HOSTILE):
        record_answer(Project.open(source, annotator=name), f"msa-00{n + 1}", why, f'{n} \\t "q", c\u2028عربي')
    record_answer(Project.open(source, annotator="amina"), "msa-001", rel, "y")
    record_answer(Project.open(source, annotator="amina"), "msa-001", rel, "n")
    path = tmp_path / f"answers{suffix}"
    assert export_answers(Project.open(source, create=False), path) == len(HOSTILE) + 2
    code, _, err = cli("votes", "import", target, "--answers", path)
    assert code == 0, err
    mine, theirs = Project.open(source, create=False), Project.open(target, create=False)
    assert project_answers(theirs).by_question == project_answers(mine).by_question
    assert project_answers(theirs).of("rel", "msa-001") == {"amina": "no"}
    again = import_answers(Project.open(target), path, lambda who, q, a: a)
    assert again.new == 0  # nothing twice


def test_a_bad_answers_row_is_one_line_and_the_rest_are_recorded(sample: Path) -> None:
    with_round(sample, people("amina") + YES_NO)
    path = sample.parent / "answers.tsv"
    path.write_text(
        "item_id\tannotator\tquestion\tanswer\ttime\n"
        "msa-001\tamina\trel\tyes\t2026-01-01T00:00:00.000000Z\n"
        "msa-002\tamina\trel\tmaybe\t2026-01-01T00:00:01.000000Z\n"
        "msa-003\tamina\tcolour\tyes\t2026-01-01T00:00:02.000000Z\n"
        "nope\tamina\trel\tyes\t2026-01-01T00:00:03.000000Z\n"
        "msa-004\tamina\trel\tyes\tyesterday\n",
        encoding="utf-8",
    )
    code, _, err = cli("votes", "import", sample, "--answers", path)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 4 and "answers.tsv:6:" in lines[3] and "not as the log writes it" in lines[3]
    assert "answers.tsv:3:" in lines[0] and "answers.tsv:4:" in lines[1] and "asks no question 'colour'" in lines[1]
    assert answers_in_force(Project.open(sample, create=False).workspace).by_question == {
        "rel": {"msa-001": {"amina": "yes"}}
    }


ANSWERS_HEADER = "item_id\tannotator\tquestion\tanswer\ttime\n"


def test_every_answers_row_left_out_is_named_and_counted(sample: Path) -> None:
    """A cell under no column, a row too short, someone the round does not name: each a line naming the row;
    the count says what was new, what was here already and what was rejected."""
    with_round(sample, people("amina") + YES_NO)
    path = sample.parent / "answers.tsv"
    path.write_text(
        ANSWERS_HEADER + "msa-001\tamina\trel\tyes\t2026-01-01T00:00:00.000000Z\n"
        "msa-002\tamina\trel\tyes\t2026-01-01T00:00:01.000000Z\tno\n"
        "msa-003\tamina\trel\tyes\n"
        "msa-004\tzed\trel\tyes\t2026-01-01T00:00:03.000000Z\n"
        "msa-005\tamina\trel\tno\t2026-01-01T00:00:04.000000Z\t\n",  # a trailing tab: nothing lost
        encoding="utf-8",
    )
    code, out, err = cli("votes", "import", sample, "--answers", path)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 3, err
    assert "answers.tsv:3: 6 cells where the header has 5: 'no' is under no column" in lines[0]
    assert "answers.tsv:4: 4 cells where the header has 5: no 'time'" in lines[1]
    assert "answers.tsv:5: 'zed' is not an annotator of the round in force" in lines[2]
    assert "read 5 answers: 2 new, 0 already recorded or older than the answer here, 3 rejected" in out
    code, out, _ = cli("votes", "import", sample, "--answers", path, "--json")
    assert json.loads(out) == {"answers_read": 5, "answers_new": 0, "answers_known": 2, "answers_bad": 3}
    assert answers_in_force(Project.open(sample, create=False).workspace).by_question == {
        "rel": {"msa-001": {"amina": "yes"}, "msa-005": {"amina": "no"}}
    }


@pytest.mark.parametrize("suffix", [".tsv", ".csv", ".jsonl"])
def test_an_answers_file_with_cr_line_ends_reads_as_its_lines(sample: Path, suffix: str) -> None:
    """Saved with CR line ends (old Mac), the file used to read as "0 answers, 0 rejected"."""
    with_round(sample, people("amina") + YES_NO)
    rows = [
        ("msa-001", "amina", "rel", "yes", "2026-01-01T00:00:00.000000Z"),
        ("msa-002", "amina", "rel", "no", "2026-01-01T00:00:01.000000Z"),
    ]
    columns = ("item_id", "annotator", "question", "answer", "time")
    if suffix == ".jsonl":
        text = "".join(json.dumps(dict(zip(columns, row))) + "\r" for row in rows)
    else:
        sep = "\t" if suffix == ".tsv" else ","
        text = "".join(sep.join(row) + "\r" for row in [columns, *rows])
    path = sample.parent / f"answers{suffix}"
    path.write_bytes(text.encode("utf-8"))
    code, out, err = cli("votes", "import", sample, "--answers", path)
    assert code == 0 and "read 2 answers: 2 new" in out, err
    assert project_answers(Project.open(sample, create=False)).of("rel", "msa-002") == {"amina": "no"}


def test_a_json_answers_line_that_repeats_a_key_or_has_an_unknown_one_is_rejected(sample: Path) -> None:
    with_round(sample, people("amina") + YES_NO)
    path = sample.parent / "answers.jsonl"
    good = '"item_id": "msa-001", "annotator": "amina", "question": "rel", "time": "2026-01-01T00:00:00.000000Z"'
    path.write_text(
        "{" + good + ', "answer": "yes", "answer": "no"}\n'
        "{" + good + ', "answer": "yes", "note": "x"}\n'
        '{"item_id": "msa-001", "annotator": "amina", "question": "rel", "answer": "yes"}\n'
        "{" + good.replace("msa-001", "msa-002") + ', "answer": "no"}\n',
        encoding="utf-8",
    )
    code, out, err = cli("votes", "import", sample, "--answers", path)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 3 and "read 4 answers: 1 new" in out, err
    assert 'answers.jsonl:1: repeats the key "answer"' in lines[0]
    assert "answers.jsonl:2: unknown key 'note'" in lines[1] and "answers.jsonl:3: no 'time'" in lines[2]


def test_votes_export_writes_the_answers_file_beside_the_votes(sample: Path) -> None:
    with_round(sample, PEOPLE + YES_NO)
    record_answer(Project.open(sample, annotator="amina"), "msa-001", asked(YES_NO).questions[0], "yes")
    votes, answers = sample.parent / "votes.tsv", sample.parent / "answers.csv"
    code, _, err = cli("votes", "export", sample, votes, "--answers", answers)
    assert code == 0, err
    assert answers.read_text(encoding="utf-8").splitlines()[0] == '"item_id","annotator","question","answer","time"'


def test_answers_made_on_two_copies_meet_in_a_merge(sample: Path, tmp_path: Path) -> None:
    with_round(sample, PEOPLE + YES_NO)
    rel = asked(YES_NO).questions[0]
    workspace = Path(f"{sample}.piqa.sqlite")
    other_folder = tmp_path / "laptop"
    other_folder.mkdir()
    other = other_folder / sample.name
    shutil.copy(sample, other)
    with sqlite3.connect(workspace) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(workspace, Path(f"{other}.piqa.sqlite"))
    record_answer(Project.open(sample, annotator="amina"), "msa-001", rel, "yes")
    record_answer(Project.open(other, annotator="karim"), "msa-001", rel, "no")
    record_answer(Project.open(other, annotator="karim"), "msa-002", rel, "yes")
    code, _, err = cli("workspace", "merge", sample, Path(f"{other}.piqa.sqlite"))
    assert code == 0, err
    merged = Project.open(sample, create=False)
    assert answers_in_force(merged.workspace).by_question == {
        "rel": {"msa-001": {"amina": "yes", "karim": "no"}, "msa-002": {"karim": "yes"}}
    }
    assert isinstance(project_answers(merged), Answers)


def test_an_older_answer_brought_back_by_a_merge_does_not_replace_a_newer_one(sample: Path, tmp_path: Path) -> None:
    """amina answers yes on her laptop, the lead imports her answers file on the server, she changes her mind there
    (no); then the laptop's log is merged in. Her yes comes back with the laptop's clock, which is ahead of the
    server's (the file carried no clock): by the log's order alone it would stand again; by time, no stands, on
    both machines."""
    with_round(sample, people("amina") + YES_NO)
    rel = asked(YES_NO).questions[0]
    server_ws = Path(f"{sample}.piqa.sqlite")
    laptop = tmp_path / "laptop" / sample.name
    laptop.parent.mkdir()
    shutil.copy(sample, laptop)
    with sqlite3.connect(server_ws) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(server_ws, Path(f"{laptop}.piqa.sqlite"))
    on_laptop = Project.open(laptop, annotator="amina")
    for n in range(2, 9):  # the laptop's clock moves ahead of the server's
        on_laptop.vote(f"msa-00{n}", "0")
    record_answer(on_laptop, "msa-001", rel, "yes")
    answers = tmp_path / "answers.tsv"
    export_answers(on_laptop, answers)
    code, _, err = cli("votes", "import", sample, "--answers", answers)
    assert code == 0, err
    record_answer(Project.open(sample, annotator="amina"), "msa-001", rel, "no")
    code, _, err = cli("workspace", "merge", sample, Path(f"{laptop}.piqa.sqlite"))
    assert code == 0, err
    code, _, err = cli("workspace", "merge", laptop, server_ws)
    assert code == 0, err
    for machine in (sample, laptop):
        project = Project.open(machine, create=False)
        assert project_answers(project).of("rel", "msa-001") == {"amina": "no"}
        current = tmp_path / f"current-{machine.parent.name}.tsv"
        export_answers(project, current, current_only=True)
        assert [line.split("\t")[3] for line in current.read_text(encoding="utf-8").splitlines()[1:]] == ["no"]


def test_round_show_lists_the_questions(sample: Path) -> None:
    with_round(sample, PEOPLE + YES_NO + SCALE)
    code, out, err = cli("round", sample, "show")
    assert code == 0, err
    assert "  rel  yes/no (yes or no), policy any-yes: Relevant elsewhere?" in out
    assert "  acc  number (a whole number 1–5), policy median: Cultural accuracy" in out
    code, out, _ = cli("round", sample, "show", "--json")
    assert [q["id"] for q in json.loads(out)["questions"]] == ["rel", "acc"]


def test_answers_a_redeclared_question_cannot_take_are_left_out_of_its_release(sample: Path) -> None:
    with_round(sample, PEOPLE + YES_NO)
    record_answer(Project.open(sample, annotator="amina"), "msa-001", asked(YES_NO).questions[0], "yes")
    with_round(sample, PEOPLE + SCALE.replace('"acc"', '"rel"'))  # the same id, now a 1-5 scale
    scale = round_in_force(Project.open(sample, create=False).workspace).question("rel")
    record_answer(Project.open(sample, annotator="karim"), "msa-001", scale, "4")
    out = sample.parent / "out.tsv"
    code, _, err = cli("export", sample, "--decided", "--to", out)
    assert code == 0, err
    header, first = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()[:2]]
    assert first[header.index("rel")] == "4" and first[header.index("rel_votes")] == '["4"]'
