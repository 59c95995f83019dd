"""A generated corpus of bad and hostile input files, built into a folder at test time.

Nothing here is checked in as a binary: every file is written by ``build``.
Each entry is a dataset (or a dataset with a hostile side file) that every
subcommand and the TUI must survive with one honest line: exit 0, 1 or 2, at
most one line on stderr, no "internal error", no control byte on the terminal.

Run it by hand to get a folder to try things on::

    python tests/hostile_corpus.py /tmp/hostile
"""

from __future__ import annotations

import codecs
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

HEADER = "id\tprompt\tsolution0\tsolution1\tlabel\tcategory"
OSC0 = "\x1b]0;pwned\x07"
OSC52 = "\x1b]52;c;cm0gLXJmIH4gIyBwYXN0ZWQ=\x07"
CLEAR = "\x1b[2J"
OSC8 = "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"
SGR = "\x1b[31;1mred\x1b[0m"
C1_CSI = "\x9b2J"


def _tsv(*rows: str) -> str:
    return "\n".join((HEADER, *rows)) + "\n"


def _row(
    item_id: str,
    prompt: str = "open a jar",
    s0: str = "twist the lid",
    s1: str = "hit the lid",
    label: str = "0",
    category: str = "kitchen",
) -> str:
    return "\t".join((item_id, prompt, s0, s1, label, category))


@dataclass(frozen=True)
class Entry:
    """One corpus file: its name, its bytes, and whether it is a special file made by ``build``."""

    name: str
    data: bytes = b""
    special: str = ""  # fifo | folder | symlink-loop | unreadable | devzero | labels-folder | labels-fifo


def _text_entries() -> list[Entry]:
    escape_rows = _tsv(
        _row(f"a{OSC0}", prompt=f"clear {CLEAR} now", category="[/]"),
        _row("b", s0=f"copy {OSC52}", s1=f"link {OSC8}", category="[bold]x[/bold]"),
        _row("c", s0=f"colour {SGR}", s1=f"csi {C1_CSI}", category="[/]"),
        _row("d", prompt="bell \x07 backspace \x08 cr \r del \x7f", category="[link=x]"),
        _row("e", s0="bidi \u202e override", category="[bold]x[/bold]"),
        _row("f", prompt=f"clear {CLEAR} now", category="[/]"),
    )
    deep = "[" * 100_000 + "]" * 100_000
    return [
        Entry("escapes.tsv", escape_rows.encode()),
        Entry("escape-columns.tsv", f"x{OSC0}\ty{CLEAR}\n1\t2\n".encode()),
        Entry(
            "deep.jsonl",
            (json.dumps({"goal": "g", "sol1": "a", "sol2": "b", "label": 0})[:-1] + f', "meta": {deep}}}\n').encode(),
        ),
        Entry("long-label.tsv", _tsv(_row("a", label="9" * 5000)).encode()),
        Entry("long-id.tsv", _tsv(_row("1" * 5000)).encode()),
        Entry(
            "long-id.jsonl", (f'{{"id": {"7" * 5000}, "goal": "g", "sol1": "a", "sol2": "b", "label": 0}}\n').encode()
        ),
        Entry("surrogate.jsonl", b'{"goal": "g\\ud800", "sol1": "a", "sol2": "b", "label": 0}\n'),
        Entry("utf16-nobom.tsv", _tsv(_row("a")).encode("utf-16-le")),
        Entry("utf16-bom.tsv", codecs.BOM_UTF16_LE + _tsv(_row("a")).encode("utf-16-le")),
        Entry("cr-only.tsv", _tsv(_row("a"), _row("b")).replace("\n", "\r").encode()),
        Entry("huge-header.tsv", ("\t".join(f"column_{n}_" + "x" * 50 for n in range(40_000)) + "\n").encode()),
        Entry("header-only.tsv", (HEADER + "\n").encode()),
        Entry("arabic-digit-label.tsv", _tsv(_row("a", label="١"), _row("b", label="１")).encode()),
        Entry(
            "fifth-solution.tsv",
            (b"id\tprompt\tsolution0\tsolution1\tsolution2\tsolution3\tsolution4\tlabel\na\tp\tw\tx\ty\tz\tq\t0\n"),
        ),
        Entry(
            "mixed-types.jsonl",
            (
                json.dumps({"goal": "g", "sol1": "a", "sol2": "b", "label": 0, "extra": 1})
                + "\n"
                + json.dumps({"goal": "h", "sol1": "a", "sol2": "b", "label": 1, "extra": "x"})
                + "\n"
                + json.dumps({"goal": "i", "sol1": "a", "sol2": "b", "label": 1, "extra": [1, {"k": 2}]})
                + "\n"
            ).encode(),
        ),
        Entry("nul-bytes.tsv", _tsv(_row("a", prompt="nul\x00inside")).encode()),
        Entry("binary.csv", bytes(range(256)) * 8),
        Entry("big-field.tsv", _tsv(_row("a", prompt="word " * 2_000_000)).encode()),
    ]


def batches(paths: list[Path], size: int = 6) -> list[list[Path]]:
    """The files in groups for one driver process each: the special files (FIFOs, devices…) alone, so a
    hang names its file, the others together, so the interpreter starts a few times, not once per file."""
    special = {e.name for e in entries() if e.special}
    alone = [[p] for p in paths if p.name in special]
    rest = [p for p in paths if p.name not in special]
    return alone + [rest[k : k + size] for k in range(0, len(rest), size)]


def entries() -> list[Entry]:
    """Every corpus file, text ones and special ones."""
    specials = [
        Entry("fifo.tsv", special="fifo"),
        Entry("folder.tsv", special="folder"),
        Entry("loop.tsv", special="symlink-loop"),
        Entry("unreadable.tsv", special="unreadable"),
        Entry("zero.tsv", special="devzero"),
        Entry("lst-folder.jsonl", special="labels-folder"),
        Entry("lst-fifo.jsonl", special="labels-fifo"),
    ]
    return _text_entries() + specials


def _make_special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "symlink-loop":
        path.symlink_to(path.name)
    elif kind == "unreadable":
        path.write_text(_tsv(_row("a")))
        path.chmod(0)
    elif kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind.startswith("labels-"):
        path.write_text(json.dumps({"goal": "g", "sol1": "a", "sol2": "b"}) + "\n")
        lst = path.with_name(path.stem + "-labels.lst")
        lst.mkdir() if kind == "labels-folder" else os.mkfifo(lst)


def build(folder: Path) -> list[Path]:
    """Write every corpus file into ``folder``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for entry in entries():
        path = folder / entry.name
        if entry.special:
            _make_special(path, entry.special)
        else:
            path.write_bytes(entry.data)
        paths.append(path)
    return paths


def hostile_votes(folder: Path) -> Path:
    """A votes file with a repeated column and ids that carry escape sequences."""
    path = folder / "votes-hostile.tsv"
    path.write_text(f"item_id\tannotator\tchoice\tchoice\ttime\nzz{OSC0}\tamina{CLEAR}\t1\t0\t2026-01-01T00:00:00Z\n")
    return path


# Files that load as datasets and whose content adds nothing to what escapes.tsv shows ``score``:
# scoring them would only load the model once more (seconds each).
UNSCORED = {
    "long-id.tsv",
    "mixed-types.jsonl",
    "nul-bytes.tsv",
    "utf16-bom.tsv",
    "unreadable.tsv",
    "arabic-digit-label.tsv",
}


def command_lines(path: Path, out: Path, votes: Path) -> list[list[str]]:
    """Every subcommand's argument list for one corpus file (``out``: a folder for exports)."""
    p = str(path)
    score = [] if path.name in UNSCORED else [["score", p, "--limit", "2", "--no-cache"]]
    return score + [
        ["validate", p],
        ["validate", p, "--json"],
        ["stats", p],
        ["stats", p, "--json"],
        ["dedup", p],
        ["card", p],
        ["agree", p],
        ["agree", p, "--markdown"],
        ["export", p, "--to", str(out / f"{path.stem}.jsonl")],
        ["export", p, "--to", str(out / f"{path.stem}.csv")],
        ["export", p, "--to", str(out / f"{path.stem}.parquet")],
        ["votes", "import", p, str(votes)],
        ["votes", "export", p, str(out / f"{path.stem}-votes.tsv")],
    ]


def run_in_process(argv: list[str]) -> dict[str, object]:
    """``piqa-tui ARGV`` in this process, its stdout and stderr caught as the bytes a terminal would get."""
    import contextlib
    import io

    from piqa_tui.cli.main import main

    streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True) for _ in range(2)]
    with contextlib.redirect_stdout(streams[0]), contextlib.redirect_stderr(streams[1]):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except UnicodeEncodeError as exc:  # what a real terminal stream would have raised
            code = f"unencodable output: {exc}"
    out, err = (s.buffer.getvalue().decode("utf-8", "replace") for s in streams)  # type: ignore[attr-defined]
    return {"argv": argv, "code": code, "out": out, "err": err}


def _run_files(out: Path, votes: Path, paths: list[Path]) -> None:
    """Every subcommand on each file, one JSON line each on stdout (the driver the tests start)."""
    real = sys.stdout
    for path in paths:
        for argv in command_lines(path, out, votes):
            real.write(json.dumps({"file": path.name, **run_in_process(argv)}) + "\n")
            real.flush()


if __name__ == "__main__":
    if sys.argv[1] == "--run":
        _run_files(Path(sys.argv[2]), Path(sys.argv[3]), [Path(p) for p in sys.argv[4:]])
    else:
        for made in build(Path(sys.argv[1])):
            print(made)
