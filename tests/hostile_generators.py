"""Seeded generators of hostile input, one per class of attack, each drawing new variants on every seed.

``tests/hostile_corpus.py`` builds a fixed folder of files; these build many
small variants instead, by applying one to three faults drawn at random to a
good dataset, vote file or output target, so a test tries combinations nobody
wrote down. Every variant says which faults it carries (a failing test names
them and the seed: rerun with ``PIQA_HOSTILE_SEED``).

Classes: dataset text (escapes, markup, invisible look-alikes, NUL and
undecodable bytes, line breaks inside values), numbers (labels past 64 bits,
other scripts' digits), shape (encodings, line endings, ragged rows, very
wide or very long), values every writer must read back (``awkward_dataset``),
vote files (times out of range, undecodable names, look-alike annotators,
cells under no column, CR line ends), and outputs that alias the dataset or
its workspace.
"""

from __future__ import annotations

import codecs
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from piqa_tui.core.workspace.limits import MAX_VALUE_BYTES
from tests.hostile_corpus import SEED, escape_sequences, huge_numbers, invisible_twin, markup_texts

COLUMNS = ["id", "prompt", "solution0", "solution1", "label", "category"]


def rng_for(salt: str) -> random.Random:
    """The generator for one class: the same seed draws the same variants."""
    return random.Random(f"{SEED}:generated:{salt}")


@dataclass
class Table:
    """A dataset being made hostile: a header and rows of cells, written as TSV, CSV or JSON lines."""

    header: list[str] = field(default_factory=lambda: list(COLUMNS))
    rows: list[list[object]] = field(default_factory=list)
    suffix: str = ".tsv"
    encoding: str = "utf-8"
    newline: str = "\n"
    header_newline: str | None = None
    prefix: bytes = b""  # a BOM, or bytes that are not text
    faults: list[str] = field(default_factory=list)
    quoted: bool = False  # CSV: quote a value holding a separator, quote, CR or LF (RFC 4180); else cells go raw

    def data(self) -> bytes:
        if self.suffix == ".jsonl":
            lines = [json.dumps(dict(zip(self.header, row, strict=False)), ensure_ascii=False) for row in self.rows]
            text = "".join(line + self.newline for line in lines)
        else:
            sep = "," if self.suffix == ".csv" else "\t"
            cell = _quoted if self.quoted and sep == "," else str
            head = sep.join(map(cell, self.header)) + (self.header_newline or self.newline)
            text = head + "".join(sep.join(map(cell, row)) + self.newline for row in self.rows)
        errors = {"utf-8": "surrogateescape", "latin-1": "replace"}.get(self.encoding, "surrogatepass")
        return self.prefix + text.encode(self.encoding, errors)


def _quoted(value: object) -> str:
    text = str(value)
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\r\n') else text


def good_table(rng: random.Random, n: int = 4) -> Table:
    prompts = ["open a jar", "cool soup", "dry a phone", "keep bread fresh", "fix a squeaky door"]
    return Table(
        rows=[
            [f"q{k}", rng.choice(prompts), "twist the lid", "hit the lid", k % 2, rng.choice(["home", "food"])]
            for k in range(n)
        ]
    )


def _cell(t: Table, rng: random.Random) -> tuple[int, int]:
    """A text cell (prompt, a solution or the category) of a row, short rows included."""
    r = rng.randrange(len(t.rows))
    return r, rng.choice([c for c in (1, 2, 3, 5) if c < len(t.rows[r])])


def _escape_in_cell(t: Table, rng: random.Random) -> None:
    r, c = _cell(t, rng)
    t.rows[r][c] = f"{t.rows[r][c]}{rng.choice(escape_sequences(8))}".replace("\t", " ").replace("\n", " ")


def _markup_in_cell(t: Table, rng: random.Random) -> None:
    r, c = _cell(t, rng)
    t.rows[r][c] = rng.choice(markup_texts(8))


def _hostile_column_name(t: Table, rng: random.Random) -> None:
    name = rng.choice([*markup_texts(8), *escape_sequences(8)]).replace("\t", " ").replace("\n", " ")
    t.header[5] = name or "x"


def _look_alike_id(t: Table, rng: random.Random) -> None:
    twin = list(t.rows[0])
    twin[0] = invisible_twin(str(twin[0]), rng)
    t.rows.append(twin)


def _huge_label(t: Table, rng: random.Random) -> None:
    t.rows[0][4] = rng.choice(huge_numbers(rng, 2))


def _foreign_digit_label(t: Table, rng: random.Random) -> None:
    t.rows[0][4] = rng.choice(["١", "１", "۱", "৪", "-1", "+0", "0x1", "1e0", ""])


def _nul_byte(t: Table, rng: random.Random) -> None:
    r, c = _cell(t, rng)
    t.rows[r][c] = f"a\x00{t.rows[r][c]}"


def _undecodable_bytes(t: Table, rng: random.Random) -> None:
    r, c = _cell(t, rng)
    bad = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"])
    t.rows[r][c] = f"{t.rows[r][c]}{bad.decode('utf-8', 'surrogateescape')}"


def _ragged_row(t: Table, rng: random.Random) -> None:
    r = rng.randrange(1, len(t.rows))  # the first row keeps its label cell for the faults that set it
    t.rows[r] = t.rows[r][:-2] if rng.random() < 0.5 else [*t.rows[r], "extra", "more"]


def _encoding(t: Table, rng: random.Random) -> None:
    t.encoding = rng.choice(["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "latin-1"])
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-32-le": codecs.BOM_UTF32_LE, "utf-16-be": codecs.BOM_UTF16_BE}
    if rng.random() < 0.5:
        t.prefix = bom.get(t.encoding, b"")
    if t.encoding == "latin-1":  # only what latin-1 can write
        t.rows = [[str(v).encode("latin-1", "replace").decode("latin-1") for v in row] for row in t.rows]


def _line_endings(t: Table, rng: random.Random) -> None:
    t.newline = rng.choice(["\r", "\r\n", "\n"])
    t.header_newline = rng.choice(["\r\n", "\n", "\r"])


def _bom(t: Table, rng: random.Random) -> None:
    t.prefix = codecs.BOM_UTF8 * rng.randint(1, 2)


def _wide(t: Table, rng: random.Random) -> None:
    extra = rng.randint(30, 400)
    t.header += [f"c{k}" for k in range(extra)]
    t.rows = [[*row, *(rng.choice("ab") for _ in range(extra))] for row in t.rows]


def _long_cell(t: Table, rng: random.Random) -> None:
    r, c = _cell(t, rng)
    t.rows[r][c] = "word " * rng.randint(10_000, 60_000)


def _line_break_in_value(t: Table, rng: random.Random) -> None:
    """A value holding a lone CR, an LF or a CRLF, quoted as CSV quotes it (raw in TSV, which cannot hold it)."""
    r, c = _cell(t, rng)
    t.rows[r][c] = f"{t.rows[r][c]}{rng.choice(LINE_BREAKS)}{t.rows[r][c]}"
    t.quoted = True


def _format(t: Table, rng: random.Random) -> None:
    t.suffix = rng.choice([".csv", ".jsonl"])
    if t.suffix == ".jsonl":
        t.header = ["id", "goal", "sol1", "sol2", "label", *t.header[5:]]


FAULTS: dict[str, Callable[[Table, random.Random], None]] = {
    "escape in a cell": _escape_in_cell,
    "markup in a cell": _markup_in_cell,
    "hostile column name": _hostile_column_name,
    "look-alike id": _look_alike_id,
    "huge label": _huge_label,
    "label in other digits": _foreign_digit_label,
    "NUL byte": _nul_byte,
    "undecodable bytes": _undecodable_bytes,
    "ragged row": _ragged_row,
    "other encoding": _encoding,
    "line endings": _line_endings,
    "BOM": _bom,
    "wide": _wide,
    "long cell": _long_cell,
    "other format": _format,
    "line break in a value": _line_break_in_value,
}
LINE_BREAKS = ["\r", "\n", "\r\n", "\r\r", "\n\r"]


@dataclass(frozen=True)
class Variant:
    """One generated file: its name, its bytes and the faults it carries."""

    name: str
    data: bytes
    faults: tuple[str, ...]

    def write(self, folder: Path) -> Path:
        path = folder / self.name
        path.write_bytes(self.data)
        return path


def dataset_variants(n: int) -> list[Variant]:
    """``n`` datasets, each a good one with one to three faults drawn from ``FAULTS``."""
    rng = rng_for("datasets")
    found = []
    for k in range(n):
        table = good_table(rng)
        names = rng.sample(sorted(FAULTS), rng.randint(1, 3))
        for name in names:
            FAULTS[name](table, rng)
        found.append(Variant(f"v{k}{table.suffix}", table.data(), tuple(names)))
    return found


# ---------------------------------------------------------------- values every writer must read back

AWKWARD_PARTS = [
    *LINE_BREAKS,
    '"',
    '""',
    ",",
    "\\",
    "\\r",
    " ",
    "\u2028",
    "\u2029",
    "\x85",
    "\ufeff",
    "=1+1",
    "عربي",
    "\u202e",
    "\t",
    "{}",
    "[1]",
]


def awkward_value(rng: random.Random) -> str:
    """A text made of pieces that a writer must quote or escape and a reader must give back as they were."""
    return "".join(rng.choice([*AWKWARD_PARTS, "word", "a b"]) for _ in range(rng.randint(1, 5)))


def awkward_dataset(rng: random.Random, suffix: str, n: int = 6) -> Table:
    """A good dataset (``suffix``: .csv or .jsonl, each written as its format says) whose prompts, solutions and
    categories are awkward values: read, written and read again, every value must come back unchanged."""
    table = good_table(rng, n)
    table.suffix, table.quoted = suffix, True
    for row in table.rows:
        for c in (1, 2, 3, 5):
            row[c] = awkward_value(rng)
        if row[2] == row[3]:
            row[3] += " (other)"
    table.faults = ["awkward values"]
    return table


def vote_file_variants(n: int, item_ids: list[str]) -> list[Variant]:
    """``n`` long-format vote files for a dataset with ``item_ids``: good lines mixed with bad times, choices,
    undecodable or look-alike annotator names, unknown ids, escape-laden cells and cells under no column, with
    LF, CRLF or CR line ends."""
    rng = rng_for("votes")
    bad_times = ["2999-12-31T23:59:59-05:00", "0000-01-01T00:00:00Z", "1e20", "2026-13-40T25:61:61Z", "", "now"]
    bad_choices = ["١", "-1", "99999999999999999999", "1e300", "x", ""]
    found = []
    for k in range(n):
        lines, faults = [], []
        for j in range(rng.randint(2, 6)):
            item, who, choice, time = rng.choice(item_ids), rng.choice(["amina", "selma"]), str(j % 2), ""
            time = f"2026-01-01T00:00:{j:02d}Z"
            kind = rng.choice(["good", "good", "time", "choice", "name", "twin", "id", "escape", "extra cell"])
            if kind == "time":
                time = rng.choice(bad_times)
            elif kind == "choice":
                choice = rng.choice(bad_choices)
            elif kind == "name":
                who = "se" + rng.choice(["\udcff", "\udcc3", "\udced\udca0\udc80"]) + "lma"
            elif kind == "twin":
                who = invisible_twin(who, rng)
            elif kind == "id":
                item = rng.choice([invisible_twin(item, rng), item + "x", "0" * 500])
            elif kind == "escape":
                who = f"{who}{rng.choice(escape_sequences(8))}".replace("\t", " ").replace("\n", " ")
            if kind != "good":
                faults.append(kind)
            extra = ("lost",) if kind == "extra cell" else ()  # a cell under no column: never dropped unsaid
            lines.append("\t".join((item, who, choice, time, *extra)))
        end = rng.choice(["\n", "\n", "\r\n", "\r"])  # CR alone (old Mac) ends a line too, never all of them
        text = "item_id\tannotator\tchoice\ttime" + end + end.join(lines) + end
        name = f"votes{k}{'-cr' if end == chr(13) else ''}.tsv"
        found.append(Variant(name, text.encode("utf-8", "surrogateescape"), tuple(faults)))
    return found


def output_aliases(dataset: Path, workspace: Path, rng: random.Random | None = None) -> list[tuple[str, Path]]:
    """(how, target) pairs: paths that name the dataset or its workspace (or its WAL and SHM) by another
    spelling or a link. Every writer must refuse each of them, ``--force`` or not."""
    rng = rng or rng_for("aliases")
    folder = dataset.parent
    links = folder / "links"
    links.mkdir(exist_ok=True)
    found: list[tuple[str, Path]] = []
    for how, target in [("the dataset", dataset), ("the workspace", workspace)]:
        found.append((how, target))
        found.append((f"{how} via ./", folder / "." / target.name))
        found.append((f"{how} via ../", folder / "links" / ".." / target.name))
        link = links / f"link-{rng.randint(0, 999)}-{target.name}"
        link.symlink_to(target)
        found.append((f"a symlink to {how}", link))
        chain = links / f"chain-{rng.randint(0, 999)}-{target.name}"
        chain.symlink_to(link)
        found.append((f"a symlink to a symlink to {how}", chain))
        hard = links / f"hard-{rng.randint(0, 999)}-{target.name}"
        hard.hardlink_to(target)
        found.append((f"a hard link to {how}", hard))
        found.append((f"{how} through a linked folder", _linked_folder(folder, links) / target.name))
    for suffix in ("-wal", "-shm"):
        found.append((f"the workspace's {suffix[1:].upper()}", workspace.with_name(workspace.name + suffix)))
    return rng.sample(found, len(found))


def _linked_folder(folder: Path, links: Path) -> Path:
    """A symlink to ``folder`` (made once): the dataset reached through another folder name."""
    alias = links / "same-folder"
    if not alias.is_symlink():
        alias.symlink_to(folder)
    return alias


# ---------------------------------------------------------------- merged workspaces

GOOD_TIME = "2026-11-20T09:14:{:02d}.{:06d}Z"  # second, microsecond: every good event at its own instant
FAR_FUTURE = "2030-01-01T00:00:00.000000Z"


def good_event(rng: random.Random, item_ids: list[str], k: int) -> dict[str, object]:
    """An event as this program writes it (a vote, note, flag or edit), unique by id, clock and time."""
    kind = rng.choice(["vote", "vote", "note", "flag", "edit"])
    item = rng.choice(item_ids)
    field_new = {
        "vote": ("choice", str(rng.randint(0, 1))),
        "note": ("note", f"note {k}"),
        "flag": ("typo", "1"),
        "edit": ("prompt", f"prompt {k}"),
    }[kind]
    return {
        "time": GOOD_TIME.format(k % 60, k),
        "annotator": rng.choice(["amina", "selma", "bilal"]),
        "kind": kind,
        "item_id": item,
        "field": field_new[0],
        "old": None,
        "new": field_new[1],
        "action": None,
        "note": None,
        "uid": f"generated{rng.getrandbits(64):016x}{k:06d}",
        "clock": 10_000 + k,
    }


def _new_item(payload: str) -> Callable[[dict[str, object], random.Random], None]:
    def fault(event: dict[str, object], rng: random.Random) -> None:
        event.update(kind="new-item", field="new-item", new=payload, item_id=f"new-{rng.getrandbits(48):012x}")

    return fault


# Each breaks one rule of the gate (core/workspace/event_rules.py); the cases of issue 36 first.
EVENT_FAULTS: dict[str, Callable[[dict[str, object], random.Random], None]] = {
    "clock at 2^62": lambda e, r: e.update(clock=2**62),
    "clock 2^63-1": lambda e, r: e.update(clock=2**63 - 1),
    "real clock 1e300": lambda e, r: e.update(clock=1e300),
    "negative clock": lambda e, r: e.update(clock=-1),
    "text clock": lambda e, r: e.update(clock="twelve"),
    "blob clock": lambda e, r: e.update(clock=b"\x00\x01"),
    "year 9999": lambda e, r: e.update(time="9999-12-31T23:59:59.000000Z"),
    "zzzz time": lambda e, r: e.update(time="zzzz"),
    "Arabic-Indic time": lambda e, r: e.update(time="٢٠٢٦-١١-٢٠T09:14:03.000000Z"),
    "impossible date": lambda e, r: e.update(time="2026-02-30T09:14:03.000000Z"),
    "far future": lambda e, r: e.update(time=FAR_FUTURE),
    "time without microseconds": lambda e, r: e.update(time="2026-11-20T09:14:03Z"),
    "NULL item vote": lambda e, r: e.update(kind="vote", field="choice", new="0", item_id=None),
    "unknown kind": lambda e, r: e.update(kind="explode"),
    "new-item bad JSON": _new_item("{"),
    "new-item list": _new_item("[1, 2]"),
    "new-item no prompt": _new_item('{"solutions": ["a", "b"]}'),
    "new-item integer solutions": _new_item('{"prompt": "p", "solutions": [1, 2]}'),
    "new-item one solution": _new_item('{"prompt": "p", "solutions": ["a"]}'),
    "new-item list meta": _new_item('{"prompt": "p", "solutions": ["a", "b"], "meta": []}'),
    "new-item string label": _new_item('{"prompt": "p", "solutions": ["a", "b"], "label": "1"}'),
    "new-item repeated key": _new_item('{"prompt": "p", "prompt": "q", "solutions": ["a", "b"]}'),
    "new-item NaN label": _new_item('{"prompt": "p", "solutions": ["a", "b"], "label": NaN}'),
    "vote choice": lambda e, r: e.update(kind="vote", field="choice", new="x" + str(r.randint(0, 9))),
    "blob value": lambda e, r: e.update(new=b"\xff\xfe"),
    "huge note": lambda e, r: e.update(note="x" * (MAX_VALUE_BYTES + 1)),
    "blob annotator": lambda e, r: e.update(annotator=b"amina"),
}


def hostile_events(rng: random.Random, item_ids: list[str], n: int, faulty: float = 0.3) -> list[tuple[dict, str]]:
    """``n`` events to slip into another machine's log: (event, its fault, "" when it is good)."""
    found = []
    for k in range(n):
        event = good_event(rng, item_ids, k)
        fault = rng.choice(sorted(EVENT_FAULTS)) if rng.random() < faulty else ""
        if fault:
            EVENT_FAULTS[fault](event, rng)
        found.append((event, fault))
    return found


EVENT_FIELDS = ("time", "annotator", "kind", "item_id", "field", "old", "new", "action", "note", "uid", "clock")


def craft_workspace(path: Path, events: list[dict[str, object]]) -> None:
    """Append ``events`` to the workspace file at ``path`` as another program could: raw rows, its unique indexes
    dropped so that nothing SQLite checks stands in the way, then checkpointed into the one file."""
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("DROP INDEX IF EXISTS events_by_uid")
        conn.execute("DROP INDEX IF EXISTS one_vote_per_instant")
        marks = ", ".join("?" * len(EVENT_FIELDS))
        conn.executemany(
            f"INSERT INTO events({', '.join(EVENT_FIELDS)}) VALUES ({marks})",
            [tuple(e[f] for f in EVENT_FIELDS) for e in events],
        )
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
