"""Inputs whose first error message pointed the wrong way now get one line that names the real problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.cli.main import main
from piqa_tui.core.votes.files import canonical_time
from piqa_tui.core.workspace.project import Project

from .conftest import copy_sample


def test_a_time_whose_utc_value_leaves_the_year_range_is_one_bad_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = copy_sample("darija-algerian.tsv", tmp_path)
    votes = tmp_path / "times.tsv"
    votes.write_text(
        "item_id\tannotator\tchoice\ttime\n"
        "dz-001\tamina\t1\t2999-12-31T23:59:59-05:00\n"
        "dz-002\tamina\t0\t1900-01-01T00:30:00+01:00\n"
        "dz-003\tamina\t1\t2999-12-31T23:59:59+05:00\n",
        encoding="utf-8",
    )
    code = main(["votes", "import", str(dataset), str(votes)])
    err = capsys.readouterr().err
    assert code == 1
    assert "line 2: time '2999-12-31T23:59:59-05:00' is 3000 in UTC, out of range (1900-2999)" in err
    assert "line 3: time '1900-01-01T00:30:00+01:00' is 1899 in UTC" in err
    assert "line 4" not in err
    votes_now = Project.open(dataset).state.votes
    assert set(votes_now) == {"dz-003"}
    assert votes_now["dz-003"]["amina"].time == "2999-12-31T18:59:59.000000Z"
    with pytest.raises(ValueError, match="out of range"):
        canonical_time("2999-12-31T23:59:59-00:01")
