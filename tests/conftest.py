"""Shared fixtures: paths to the real data in tests/data (licences in its README) and to the bundled samples."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "samples"
PIQA_VALID = TEST_DATA / "piqa-en" / "valid.jsonl"
XCOPA_TA_TEST = TEST_DATA / "xcopa-ta" / "test.ta.jsonl"


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never read the developer's own config file."""
    monkeypatch.setenv("PIQA_TUI_CONFIG", str(tmp_path_factory.getbasetemp() / "no-config.toml"))


@pytest.fixture
def piqa_copy(tmp_path: Path) -> Path:
    """The real PIQA validation split (jsonl + labels), copied where a workspace may be written."""
    shutil.copy(PIQA_VALID, tmp_path / "valid.jsonl")
    shutil.copy(PIQA_VALID.with_name("valid-labels.lst"), tmp_path / "valid-labels.lst")
    return tmp_path / "valid.jsonl"


def copy_sample(name: str, folder: Path) -> Path:
    target = folder / name
    shutil.copy(SAMPLES / name, target)
    return target
