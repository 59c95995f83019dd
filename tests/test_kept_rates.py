"""How often people kept the model's words (``core.authoring.kept``): per job and model in ``piqa-tui progress``
(text and --json, a real process) and on the card of a release (the released items only, the folder's self-check
passing). Suggestions are recorded and decided through the real suggestion store and the real word-level
decision of the TUI's keys; drafted and translated items through the real ``add_items`` and stage moves."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from piqa_tui.cli.commands.export import export_items
from piqa_tui.core.authoring.job_templates import shipped_job_templates
from piqa_tui.core.authoring.kept import KeptRow, kept_rows, suggestion_rows
from piqa_tui.core.authoring.suggesting import Target, decide, proposals
from piqa_tui.core.generation.protocol import ModelSource, Provenance
from piqa_tui.core.round.origin import Origin
from piqa_tui.core.round.stages import Draft, add_items, draft, set_stage
from piqa_tui.core.workspace.project import Project
from piqa_tui.core.workspace.suggestions import NewSuggestion, accept, kept_rates, record_suggestions, reject
from piqa_tui.core.workspace.suggestions import suggestions as all_suggestions
from piqa_tui.render.card import dataset_card
from tests.conftest import SAMPLES
from tests.test_release_folder import with_splits
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported

GEMMA = "gemma-3-270m-it-Q4_K_M.gguf"
ARABIC_MODEL = "نموذج\u202e-عربي"  # an Arabic name with a bidi override the data must not get to act on
SMOL = "SmolLM2-135M-Instruct.Q4_1.gguf"
QWEN = "Qwen2.5-7B-Instruct"


def provenance(model: str, job: str) -> str:
    return Provenance.now(ModelSource(model, sha256="ab" * 32), "hala", job, params={"column": "topic"}).to_json()


def classify_some(project: Project, model: str, values: list[tuple[str, str]]) -> list[str]:
    """Record the model's ``topic`` for each (item, value) as ``classify`` does; returns the suggestions' ids."""
    record_suggestions(project, [NewSuggestion(i, "meta:topic", v, provenance(model, "classify")) for i, v in values])
    return [s.id for s in all_suggestions(project)][-len(values) :]


def machine_item(goal: str, kind: str, key: str) -> Draft:
    made = draft(
        goal, ["حل أول", "حل ثان", "حل ثالث"], None, {"country": "Morocco", "region": "Maghreb", "topic": "food"}
    )
    return Draft(made.prompt, made.solutions, None, made.meta, Origin(kind, QWEN, "job", f"{kind}-run", key))


def record_model_work(dataset: Path, annotator: str = "hala") -> None:
    """Every kind of machine words on ``dataset``, decided as ``EXPECTED`` counts them."""
    project = Project.open(dataset, annotator=annotator)
    items = project.items
    values = [(items[0].id, "travel"), (items[1].id, "food"), (items[2].id, "x")]
    kept, turned, _open = classify_some(project, GEMMA, values)
    accept(project, kept)
    reject(project, turned)
    (arabic,) = classify_some(project, ARABIC_MODEL, [(items[3].id, "religion")])
    accept(project, arabic)
    # w on item 4: the goal's two word changes, one taken (an amend); a solution's change taken whole (an accept)
    item = items[4]
    correct = shipped_job_templates()["correct"]
    answer = {"goal": f"حقا {item.prompt} كل يوم", "solutions": [item.solutions[0] + " دائما", *item.solutions[1:]]}
    found = proposals(correct, Target(item), answer)
    assert [(p.field, len(p.changes)) for p in found] == [("prompt", 2), ("solution0", 1)]
    decide(project, item.id, found, [{0}, {0}], provenance(SMOL, "correct"))
    # z on item 5: the distractor turned down
    (wrong,) = proposals(shipped_job_templates()["distractor"], Target(items[5]), {"solution": "في يوم آخر."})
    decide(project, items[5].id, [wrong], [set()], provenance(SMOL, "distractor"))
    # drafts: one moved on untouched, one corrected then moved on, one left at draft; a translation at draft
    untouched, corrected, _waiting, _translated = add_items(
        project,
        [
            machine_item("مسودة أولى", "drafted", "0"),
            machine_item("مسودة ثانية", "drafted", "1"),
            machine_item("مسودة ثالثة", "drafted", "2"),
            machine_item("ترجمة", "translated", "0"),
        ],
    )
    project.edit(corrected, {"prompt": "مسودة ثانية مصححة"})
    set_stage(project, [untouched, corrected], "validation")
    project.workspace.close()  # type: ignore[union-attr]


EXPECTED = [
    KeptRow("classify", GEMMA, kept=1, turned_down=1, open=1),
    KeptRow("classify", ARABIC_MODEL, kept=1),
    KeptRow("correct", SMOL, kept=1, changed=1),
    KeptRow("distractor", SMOL, turned_down=1),
    KeptRow("translate", QWEN, open=1),
    KeptRow("draft", QWEN, kept=1, changed=1, open=1),
]


def piqa(*args: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", *map(str, args)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


def test_rows_per_job_and_model_follow_every_decision_and_its_undo(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    assert kept_rows(Project.open(dataset, create=False)) == []
    record_model_work(dataset)
    project = Project.open(dataset, annotator="hala")
    rows = kept_rows(project)
    assert rows == EXPECTED
    gemma = rows[0]
    assert (gemma.made, gemma.reviewed, gemma.rate, gemma.rate_text()) == (3, 2, 0.5, "50%")
    assert rows[4].rate is None and rows[4].rate_text() == "—"
    # classify --report's share is the same figure
    (report,) = [r for r in kept_rates(all_suggestions(project)) if r.model == GEMMA]
    assert report.kept_share == gemma.rate
    # undoing the last action (the drafts' move to validation) makes them open again
    project.undo()
    assert kept_rows(project)[5] == KeptRow("draft", QWEN, open=3)
    # a decision undone: the suggestion is open again
    reject(project, all_suggestions(project)[2].id)  # the third classify value, turned down
    assert kept_rows(project)[0] == KeptRow("classify", GEMMA, kept=1, turned_down=2)
    project.undo()
    assert kept_rows(project)[0] == KeptRow("classify", GEMMA, kept=1, turned_down=1, open=1)


def test_progress_reports_kept_rates_in_text_and_json(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    before = piqa("progress", dataset)
    assert "model suggestions" not in before.stdout  # no model wrote anything: no new line
    assert json.loads(piqa("progress", dataset, "--json").stdout)["model_suggestions"] == []
    record_model_work(dataset)
    text = piqa("progress", dataset).stdout
    lines = text.splitlines()
    assert lines[0] == "round arab-culture-pilot: 34 items, 1 validation each"  # the 4 model-made items joined
    start = lines.index("model suggestions, per job and model (kept rate: kept as the model wrote it / reviewed):")
    assert lines[start + 1 :] == [
        f"  classify by {GEMMA}: 3 made, 2 reviewed: 1 kept, 0 changed, 1 turned down; 1 open; kept rate 50%",
        "  classify by نموذج\\u202e-عربي: 1 made, 1 reviewed: 1 kept, 0 changed, 0 turned down; 0 open; kept rate 100%",
        f"  correct by {SMOL}: 2 made, 2 reviewed: 1 kept, 1 changed, 0 turned down; 0 open; kept rate 50%",
        f"  distractor by {SMOL}: 1 made, 1 reviewed: 0 kept, 0 changed, 1 turned down; 0 open; kept rate 0%",
        f"  translate by {QWEN}: 1 made, 0 reviewed: 0 kept, 0 changed, 0 turned down; 1 open; kept rate —",
        f"  draft by {QWEN}: 3 made, 2 reviewed: 1 kept, 1 changed, 0 turned down; 1 open; kept rate 50%",
    ]
    assert "\u202e" not in text  # the override is shown, never obeyed
    found = json.loads(piqa("progress", dataset, "--json").stdout)["model_suggestions"]
    assert found[1] == {
        "job": "classify",
        "model": ARABIC_MODEL,
        "made": 1,
        "reviewed": 1,
        "kept": 1,
        "changed": 0,
        "turned_down": 0,
        "open": 0,
        "kept_rate": 1.0,
    }
    assert [(r["job"], r["made"], r["kept_rate"]) for r in found] == [(row.job, row.made, row.rate) for row in EXPECTED]


def card_rows(card: str) -> list[list[str]]:
    block = card.split("### Model suggestions\n", 1)[1].split("\n\n#", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines() if line.startswith("| ")]
    return rows[2:]


def test_the_card_counts_the_suggestions_on_the_items_it_describes(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    assert "### Model suggestions" not in dataset_card(Project.open(dataset, create=False))
    record_model_work(dataset)
    project = Project.open(dataset, create=False)
    card = dataset_card(project)
    assert card_rows(card) == [
        ["classify", GEMMA, "2", "1", "0", "1", "50%"],
        ["classify", "نموذج\\u202e-عربي", "1", "1", "0", "0", "100%"],
        ["correct", SMOL, "2", "1", "1", "0", "50%"],
        ["distractor", SMOL, "1", "0", "0", "1", "0%"],
    ]
    assert "1 suggestion was never decided" in card
    # a card of some items counts theirs alone: items 0 and 4 (a kept classify value, a correction)
    some = [project.items[0], project.items[4]]
    assert card_rows(dataset_card(project, items=some)) == [
        ["classify", GEMMA, "1", "1", "0", "0", "100%"],
        ["correct", SMOL, "2", "1", "1", "0", "50%"],
    ]
    assert [r.job for r in suggestion_rows(project, {project.items[5].id})] == ["distractor"]


def test_a_release_card_counts_the_released_items_and_passes_its_self_check(tmp_path: Path) -> None:
    dataset = with_splits(tmp_path)
    assert cli("votes", "import", dataset, SAMPLES / "votes-darija-algerian.tsv")[0] == 0
    project = Project.open(dataset, annotator="lead")
    (held,) = add_items(project, [draft("كيفاش نحل البوقال؟", ["بيدي", "بالسكين"], None)])  # no votes: not released
    released = {i.id for i in export_items(project, decided=True, drop_flagged=False, only_decided=True).items}
    shown = [i.id for i in project.items if i.id in released][:2]
    assert held not in released and len(shown) == 2
    ids = [*shown, held]
    made = [NewSuggestion(i, "meta:category", "cooking", provenance(GEMMA, "classify")) for i in ids]
    record_suggestions(project, made)
    first, second, third = all_suggestions(project)
    accept(project, first.id)
    reject(project, second.id)
    accept(project, third.id)  # on an item the release leaves out: not counted
    project.workspace.close()  # type: ignore[union-attr]
    folder = tmp_path / "release"
    code, out, err = cli("export", dataset, "--only-decided", "--release", folder, "--name", "Darija")
    assert code == 0, err  # the folder's self-check read the card back and agreed
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card_rows(card) == [["classify", GEMMA, "2", "1", "0", "1", "50%"]]
    assert "never decided" not in card


def section(card: str, heading: str) -> str:
    """One ``### heading`` section of a card, up to the next heading."""
    start = card.index(heading)
    rest = card[start + len(heading) :]
    ends = [k for k in (rest.find("\n### "), rest.find("\n## ")) if k >= 0]
    return rest[: min(ends)] if ends else rest


def test_readable_ids_do_not_hide_the_machine_words_from_the_card(tmp_path: Path) -> None:
    """With ``--readable-ids`` the card describes items under release ids; what it looks up in the workspace
    (corrections of machine drafts, the suggestions on them) it still finds under the workspace's ids."""
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    record_model_work(dataset)
    plain, readable = tmp_path / "plain.md", tmp_path / "readable.md"
    piqa("export", dataset, "--to", tmp_path / "plain.tsv", "--card", plain)
    piqa("export", dataset, "--to", tmp_path / "readable.tsv", "--readable-ids", "--card", readable)
    assert "new-" in (tmp_path / "plain.tsv").read_text(encoding="utf-8")
    assert "new-" not in (tmp_path / "readable.tsv").read_text(encoding="utf-8")
    for heading in ("### Authoring and correction", "### Model suggestions"):
        shown = section(readable.read_text(encoding="utf-8"), heading)
        assert shown == section(plain.read_text(encoding="utf-8"), heading) and shown.strip()
