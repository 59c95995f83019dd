"""``export --release DIR``: a folder the ``datasets`` library, pandas and a spreadsheet each open, holding
exactly the workspace's decided items, with a card and manifest that claim only what its files hold.

Loaded with the real libraries (``datasets.load_dataset`` offline, pandas' ``read_parquet``/``read_csv``/
``read_json``), compared with the items ``export_items`` decides from the same workspace."""

from __future__ import annotations

import json
import os
import re
import shutil
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
import yaml

from piqa_tui.cli.commands.export import export_items
from piqa_tui.core.release import verify
from piqa_tui.core.release.folder import ReleaseError
from piqa_tui.core.release.manifest import file_sha256
from piqa_tui.core.release.verify import front_matter, verify_release
from piqa_tui.core.report.release_ids import kept_ids
from piqa_tui.core.round.stages import Draft, add_items, set_stage
from piqa_tui.core.workspace.project import Project
from piqa_tui.render import card as render_card
from tests.conftest import SAMPLES, copy_sample
from tests.test_rounds import ARAB, cli, culture_copy, doc_round, imported

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
SPLITS = ("train", "validation", "test")


def load(folder: Path, tmp_path: Path) -> dict[str, list[dict[str, object]]]:
    """The release as ``datasets.load_dataset(DIR)`` reads it, offline, with a cache of its own."""
    import datasets

    datasets.config.HF_HUB_OFFLINE = True
    datasets.disable_progress_bars()
    loaded = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))
    return {name: loaded[name].to_list() for name in loaded}


def with_splits(tmp_path: Path) -> Path:
    """samples/darija-algerian.tsv with a ``split`` column (train, validation, test in turn)."""
    header, *lines = (SAMPLES / "darija-algerian.tsv").read_text(encoding="utf-8").splitlines()
    rows = [f"{line}\t{SPLITS[k % 3]}" for k, line in enumerate(lines)]
    path = tmp_path / "darija.tsv"
    path.write_text("\n".join([f"{header}\tsplit", *rows]) + "\n", encoding="utf-8")
    return path


def decided(dataset: Path) -> dict[str, dict[str, object]]:
    """Id → the row the workspace decides for the release: text, metadata and decided label (as text)."""
    project = Project.open(dataset, create=False)
    found = export_items(project, decided=True, drop_flagged=False).items
    codec = project.dataset.codec
    return {
        i.id: {"prompt": i.prompt, "solutions": i.solutions, "label": str(codec.encode(i.label)), "index": i.label}
        for i in found
    }


def test_a_release_loads_with_datasets_and_pandas_as_the_decided_items(tmp_path: Path) -> None:
    dataset = with_splits(tmp_path)
    assert cli("votes", "import", dataset, SAMPLES / "votes-darija-algerian.tsv")[0] == 0
    folder = tmp_path / "darija-v1"
    code, out, err = cli("export", dataset, "--decided", "--release", folder, "--global-piqa-tsv", "--name", "Darija")
    assert code == 0, err
    assert "--license" in err and "--name" not in err  # the placeholder left, said on stderr
    card = front_matter((folder / "README.md").read_text(encoding="utf-8"))
    assert card["pretty_name"] == "Darija" and card["license"] == "[More Information Needed]"
    want = decided(dataset)
    assert any(
        row["label"] != gold for row, gold in zip(want.values(), pd.read_csv(dataset, sep="\t", dtype=str)["label"])
    )
    loaded = load(folder, tmp_path)
    assert set(loaded) == set(SPLITS)
    columns = list(pd.read_csv(dataset, sep="\t", dtype=str, nrows=0).columns)
    for split, rows in loaded.items():
        assert rows and all(list(row) == columns for row in rows)
        assert all(row["split"] == split for row in rows)
        for row in rows:
            item = want[str(row["id"])]
            assert (row["prompt"], (row["solution0"], row["solution1"]), row["label"]) == (
                item["prompt"],
                item["solutions"],
                item["label"],
            )
            text = str(row["prompt"]) + str(row["solution0"])
            assert unicodedata.is_normalized("NFC", text) and any("\u0600" <= c <= "\u06ff" for c in text)
        parquet = pd.read_parquet(folder / "data" / f"{split}.parquet")
        tsv = pd.read_csv(folder / "data" / f"{split}.tsv", sep="\t", dtype=str, keep_default_na=False)
        assert parquet.to_dict("records") == tsv.to_dict("records") == rows
        gp = pd.read_csv(folder / "global-piqa" / f"{split}.tsv", sep="\t", dtype=str, keep_default_na=False)
        assert list(gp.columns) == ["prompt", "solution0", "solution1", "label"]
        assert [int(v) for v in gp["label"]] == [want[str(r["id"])]["index"] for r in rows]  # from 0
    assert sum(len(rows) for rows in loaded.values()) == len(want)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert {name: s["items"] for name, s in manifest["splits"].items()} == {k: len(v) for k, v in loaded.items()}
    assert all(file_sha256(folder / name) == entry["sha256"] for name, entry in manifest["files"].items())
    project = Project.open(dataset, create=False)
    *made_from, recorded = project.workspace.events()  # the release's own event follows the log it came from
    assert manifest["workspace"]["events"] == len(made_from) > 0 and recorded.kind == "release"
    assert manifest["options"]["global_piqa_tsv"] is True and manifest["protocol"] == {
        "guidelines": None,
        "round": None,
    }
    assert "wrote the release" in out and "darija-v1" in out


def assert_sizes(folder: Path, tmp_path: Path) -> None:
    """The card's dataset_info is what ``datasets`` records: rows, bytes in Arrow memory, columns."""
    import datasets

    card = front_matter((folder / "README.md").read_text(encoding="utf-8"))
    built = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))
    info = card["dataset_info"]
    for split in info["splits"]:
        table = built[split["name"]].data
        assert split["num_examples"] == table.num_rows and split["num_bytes"] == table.nbytes
        assert [f["name"] for f in info["features"]] == built[split["name"]].column_names
    assert [entry["path"] for entry in card["configs"][0]["data_files"]] == [
        f"data/{s['name']}.parquet" for s in info["splits"]
    ]


def test_the_cards_sizes_are_the_ones_datasets_records(tmp_path: Path) -> None:
    dataset = with_splits(tmp_path)
    folder = tmp_path / "release"
    assert cli("export", dataset, "--release", folder)[0] == 0
    assert_sizes(folder, tmp_path)
    assert list(front_matter((folder / "README.md").read_text(encoding="utf-8"))["dataset_info"]["splits"][0]) == [
        "name",
        "num_bytes",
        "num_examples",
    ]


def test_a_piqa_source_releases_json_lines_with_its_labels(tmp_path: Path) -> None:
    source = (Path(__file__).parent / "data" / "piqa-en").resolve()
    lines = (source / "valid.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    labels = (source / "valid-labels.lst").read_text(encoding="utf-8").splitlines()[:40]
    (tmp_path / "valid.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "valid-labels.lst").write_text("\n".join(labels) + "\n", encoding="utf-8")
    folder = tmp_path / "piqa-release"
    code, _, err = cli("export", tmp_path / "valid.jsonl", "--release", folder)  # valid: the validation split
    assert code == 0, err
    loaded = load(folder, tmp_path)["validation"]
    assert [str(row["label"]) for row in loaded] == labels
    assert [row["goal"] for row in loaded] == [json.loads(line)["goal"] for line in lines]
    text = pd.read_json(folder / "data" / "validation.jsonl", lines=True, dtype=False)
    assert text["goal"].tolist() == [row["goal"] for row in loaded]


def test_pseudonyms_readable_ids_and_dropped_columns_reach_every_file(tmp_path: Path) -> None:
    dataset = imported(culture_copy(tmp_path), doc_round(ARAB))
    guidelines = tmp_path / "guidelines.md"
    guidelines.write_text("# Guidelines\n\nPick the answer a local would give.\n", encoding="utf-8")
    assert cli("round", dataset, "guidelines", guidelines, "--annotator", "hala")[0] == 0
    names = set(pd.read_csv(dataset, sep="\t", dtype=str)["author"])
    folder = tmp_path / "culture"
    assert "--splits 'saudi_arabia=country:Saudi Arabia'" in refused(
        dataset, "--release", folder, "--split-by", "country"
    )
    countries = sorted(set(pd.read_csv(dataset, sep="\t", dtype=str)["country"]))
    splits = [f"{c.lower().replace(' ', '_')}=country:{c}" for c in countries]
    code, _, err = cli(
        "export",
        dataset,
        "--release",
        folder,
        "--pseudonyms",
        "--drop-columns",
        "subtopic,region",
        *[arg for split in splits for arg in ("--splits", split)],
    )
    assert code == 0, err
    loaded = load(folder, tmp_path)
    assert set(loaded) == {c.lower().replace(" ", "_") for c in countries}
    for rows in loaded.values():
        assert all("subtopic" not in row and "region" not in row for row in rows)
        assert all(str(row["author"]).startswith("annotator ") for row in rows)
    every = "".join(
        path.read_text(encoding="utf-8")
        for path in folder.rglob("*")
        if path.suffix in (".md", ".json", ".jsonl", ".tsv")
    )
    assert not any(re.search(rf"\b{name}\b", every) for name in names)  # the round, card and data name nobody
    assert (folder / "guidelines.md").read_text(encoding="utf-8") == guidelines.read_text(encoding="utf-8")
    round_file = json.loads((folder / "round.json").read_text(encoding="utf-8"))
    assert all(person["name"].startswith("annotator ") for person in round_file["annotators"])
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "`subtopic`" in card and "pseudonyms" in card and "`author`" in card


def test_the_check_refuses_a_card_that_claims_what_the_files_do_not_hold(tmp_path: Path) -> None:
    dataset = with_splits(tmp_path)
    folder = tmp_path / "release"
    assert cli("export", dataset, "--release", folder, "--vote-columns", "--flag-column", "--global-piqa-tsv")[0] == 0
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "| `votes_2` | votes for solution 2 |" in card and "| `flags` |" in card
    assert verify.CARD_COLUMNS == render_card.CARD_COLUMNS
    verify_release(folder)  # as written: true
    for name, change in (
        ("fewer rows", lambda text: text.replace("num_examples: 12", "num_examples: 13", 1)),
        ("a split with no file", lambda text: text.replace("split: test", "split: heldout", 1)),
        ("a column not written", lambda text: text.replace("name: source", "name: origin", 1)),
        ("a table count", lambda text: text.replace("| train | 12 |", "| train | 11 |", 1)),
        ("a field not written", lambda text: text.replace("| `source` |", "| `origin` |", 1)),
    ):
        copy = tmp_path / name.replace(" ", "-")
        shutil.copytree(folder, copy)
        card = (copy / "README.md").read_text(encoding="utf-8")
        assert change(card) != card, name
        (copy / "README.md").write_text(change(card), encoding="utf-8")
        with pytest.raises(ReleaseError):
            verify_release(copy)
    for name in ("data/train.tsv", "global-piqa/train.tsv"):
        lost = tmp_path / f"lost-row-{name.split('/')[0]}"
        shutil.copytree(folder, lost)
        tsv = lost / name
        tsv.write_text("".join(tsv.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
        with pytest.raises(ReleaseError, match="rows"):
            verify_release(lost)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def refused(*args: object) -> str:
    code, _, err = cli("export", *args)
    assert code != 0 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_bad_input_is_one_line_and_overwrites_nothing(tmp_path: Path) -> None:
    dataset = with_splits(tmp_path)
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("mine\n", encoding="utf-8")
    assert "not a piqa-tui release" in refused(dataset, "--release", other)
    assert snapshot(other) == {"todo.txt": b"mine\n"}
    folder = tmp_path / "v1"
    assert cli("export", dataset, "--release", folder)[0] == 0
    before = snapshot(folder)
    assert "already a release" in refused(dataset, "--release", folder)
    tamil = copy_sample("tamil.tsv", tmp_path)
    assert "release of darija.tsv" in refused(tamil, "--release", folder, "--force")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    assert ".git/HEAD" in refused(dataset, "--release", folder, "--force")  # a clone of the Hub repository
    (folder / ".git" / "HEAD").unlink()
    (folder / ".git").rmdir()
    assert "'dev set'" in refused(
        dataset, "--release", tmp_path / "x", "--splits", "dev set=split:validation|train|test"
    )
    assert snapshot(folder) == before and not (tmp_path / "x").exists()
    lines = (tmp_path / "darija.tsv").read_text(encoding="utf-8").replace("\tvalidation\n", "\tdev-set\n")
    (tmp_path / "darija.tsv").write_text(lines, encoding="utf-8")
    assert "'dev-set'" in refused(dataset, "--release", tmp_path / "x")
    lines = lines.replace("\tdev-set\n", "\tTest\n")
    (tmp_path / "darija.tsv").write_text(lines, encoding="utf-8")
    assert "'Test'" in refused(dataset, "--release", folder, "--force")
    assert "no such column" in refused(dataset, "--release", folder, "--force", "--drop-columns", "nope")
    assert "stay in a release" in refused(dataset, "--release", folder, "--force", "--drop-columns", "prompt")
    assert "leave out --to" in refused(dataset, "--release", folder, "--force", "--to", tmp_path / "r.tsv")
    assert "needs --release" in refused(dataset, "--to", tmp_path / "r.tsv", "--global-piqa-tsv")
    assert "holds darija.tsv" in refused(dataset, "--release", tmp_path, "--force")
    assert snapshot(folder) == before and not (tmp_path / "r.tsv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no half-built folder left behind


def test_force_replaces_a_release_of_the_same_dataset(tmp_path: Path) -> None:
    dataset = with_splits(tmp_path)
    folder = tmp_path / "v1"
    assert cli("export", dataset, "--release", folder)[0] == 0
    code, _, err = cli("export", dataset, "--release", folder, "--force", "--drop-columns", "source")
    assert code == 0, err
    assert all("source" not in row for rows in load(folder, tmp_path).values() for row in rows)
    assert yaml.safe_load((folder / "manifest.json").read_text(encoding="utf-8"))["options"]["drop_columns"] == [
        "source"
    ]


def test_readable_ids_name_the_items_written_in_the_workspace(tmp_path: Path) -> None:
    dataset = copy_sample("tamil.tsv", tmp_path)
    project = Project.open(dataset, annotator="meena")
    (new,) = add_items(project, [Draft("Boil rice", ("a pot", "a sieve"), 0)])
    set_stage(project, [new], "validation")
    before = project.workspace.log_state()
    project.workspace.close()
    folder = tmp_path / "tamil-v1"
    code, out, err = cli("export", dataset, "--release", folder, "--readable-ids", "--json")
    assert code == 0, err
    given = json.loads(out)["release_ids"][new]
    ids = [str(row["id"]) for row in load(folder, tmp_path)["test"]]
    assert ids[-1] == given and not any(i.startswith("new-") for i in ids)
    assert kept_ids(Project.open(dataset, create=False)) == {new: given}
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert {k: manifest["workspace"][k] for k in before} == before  # the log the release came from
    project = Project.open(dataset, annotator="meena")
    project.vote(project.items[0].id, "0")
    after = project.workspace.log_state()
    # the release's id mapping (a release-id event), the release itself (a release event) and the vote
    assert after["events"] == before["events"] + 3 and after["events_sha256"] != before["events_sha256"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_csv_and_parquet_sources_release_their_own_text_format(tmp_path: Path, suffix: str) -> None:
    dataset = tmp_path / f"darija{suffix}"
    assert cli("export", with_splits(tmp_path), "--to", dataset)[0] == 0
    folder = tmp_path / "release"
    code, _, err = cli("export", dataset, "--release", folder)
    assert code == 0, err
    loaded = load(folder, tmp_path)
    assert {k: len(v) for k, v in loaded.items()} == {split: 12 for split in SPLITS}
    for split, rows in loaded.items():
        if suffix == ".csv":
            text = pd.read_csv(folder / "data" / f"{split}.csv", dtype=str, keep_default_na=False)
        else:  # a Parquet source's text file is JSON Lines
            text = pd.read_json(folder / "data" / f"{split}.jsonl", lines=True, dtype=False)
        assert (
            text.to_dict("records") == rows == pd.read_parquet(folder / "data" / f"{split}.parquet").to_dict("records")
        )


def test_a_failure_while_building_leaves_the_old_release_whole(tmp_path: Path) -> None:
    rows = [
        {"id": "a-1", "prompt": "Open a jar", "solution0": "twist", "solution1": "kick", "label": 0, "n": 1},
        {"id": "a-2", "prompt": "Dry a shirt", "solution0": "sun", "solution1": "oven", "label": 0, "n": 2},
    ]
    dataset = tmp_path / "mixed.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    folder = tmp_path / "v1"
    assert cli("export", dataset, "--release", folder)[0] == 0
    assert_sizes(folder, tmp_path)  # numbers: int64 in the card, as datasets loads them
    assert ("n", "int64") in [
        (f["name"], f["dtype"])
        for f in front_matter((folder / "README.md").read_text(encoding="utf-8"))["dataset_info"]["features"]
    ]
    before = snapshot(folder)
    rows[1]["n"] = "two"  # Parquet cannot hold a column of numbers and text
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert "mixes value types" in refused(dataset, "--release", folder, "--force")
    assert snapshot(folder) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_num_bytes_counts_nulls_and_types_batch_by_batch_as_datasets_does(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"a-{k}",
            "prompt": f"goal {k} ؟",
            "solution0": "x",
            "solution1": "y",
            "label": k % 2,
            "n": None if k % 3 == 0 else k,
            "note": None if k % 2 else "t",
            "score": None if k == 4 else 1.5 * k,  # one null: only the first batch has a bitmap
            "ok": None if k == 5 else k % 2 == 0,
            "empty": None,
        }
        for k in range(1, 2500)
    ]
    dataset = tmp_path / "typed.jsonl"
    dataset.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    folder = tmp_path / "typed"
    assert cli("export", dataset, "--release", folder)[0] == 0
    assert_sizes(folder, tmp_path)


def test_an_empty_split_value_is_named_by_splits(tmp_path: Path) -> None:
    dataset = with_splits(tmp_path)
    text = dataset.read_text(encoding="utf-8").replace("\ttrain\n", "\t\n")
    dataset.write_text(text, encoding="utf-8")
    assert "--splits 'split_1=split:'" in refused(dataset, "--release", tmp_path / "r")
    code, _, err = cli(
        "export",
        dataset,
        "--release",
        tmp_path / "r",
        *("--splits", "train=split:", "--splits", "rest=split:validation|test"),
    )
    assert code == 0, err
    assert {name: len(rows) for name, rows in load(tmp_path / "r", tmp_path).items()} == {"train": 12, "rest": 24}
