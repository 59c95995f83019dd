"""``read_head``: a large file's first rows read as the whole file reads them, the possibly cut last row dropped."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from piqa_tui.core.dataset.reading import load_dataset, read_head

HEAD = 4096  # a small head keeps the files small: read_head previews files over four heads


def rows(n: int) -> list[list[str]]:
    return [
        [f"q-{k}", f"كيفاش نحضر الكسكسي {k}\nسطر ثاني", f"تحط الزيت {k}", f"தண்ணீர் {k}", str(k % 2), "cooking"]
        for k in range(n)
    ]


def write_csv(path: Path, n: int) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "prompt", "solution0", "solution1", "label", "category"])
        writer.writerows(rows(n))  # prompts over two lines, quoted: a cut may fall inside one
    return path


def write_tsv(path: Path, n: int) -> Path:
    lines = ["id\tprompt\tsolution0\tsolution1\tlabel\tcategory"]
    lines += ["\t".join(value.replace("\n", " ") for value in row) for row in rows(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_jsonl(path: Path, n: int) -> Path:
    names = ["id", "goal", "sol1", "sol2", "label", "category"]
    path.write_text("".join(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n" for row in rows(n)))
    return path


@pytest.mark.parametrize("write", [write_csv, write_tsv, write_jsonl])
@pytest.mark.parametrize("head", [HEAD, HEAD + 37, HEAD + 101])  # cuts at different places in a row
def test_the_head_reads_as_the_whole_file_reads_its_first_rows(tmp_path: Path, write, head: int) -> None:
    path = write(tmp_path / f"data.{write.__name__[6:]}", 200)
    whole = load_dataset(path)
    first = read_head(path, head_bytes=head)
    assert first is not None and 2 <= len(first.items) < len(whole.items)
    assert first.items == whole.items[: len(first.items)]
    assert first.columns == whole.columns and first.layout == whole.layout
    assert first.raw_ids == whole.raw_ids[: len(first.items)]  # type: ignore[index]
    assert len(first.rows) == len(first.items)


def test_a_small_file_has_no_head(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "small.tsv", 10)
    assert read_head(path, head_bytes=HEAD) is None


def test_a_head_that_does_not_parse_is_left_to_the_whole_read(tmp_path: Path) -> None:
    path = tmp_path / "unknown.tsv"
    path.write_text("a\tb\n" + "x\ty\n" * 5000, encoding="utf-8")  # no prompt or solution columns
    assert read_head(path, head_bytes=HEAD) is None
