"""Frame-shaped drafts: short items that share a fixed sentence frame with a few slots filled, for the lexical dedup benchmark.

    python benchmarks/make_frame_drafts.py OUT.tsv [N=100000] [SHAPE=darija]

What a model gives when asked for many items on one theme: every item is one of
a handful of sentence frames (goal and two solutions) whose 2-4 slots are
filled from small vocabularies, and the two solutions differ by one word (the
minimal pair). Items are short (60-130 characters in all), so one slot word is
a large share of an item's character 3-grams: two items of one frame differ by
one or two slot words and have a 3-gram Jaccard of 0.4-0.8, and every 3-gram
of the frame itself is found in a tenth of the whole pool or more.
``make_template_drafts.py`` differs in the other direction: long shared
openings followed by free filler words.

Shapes (``SHAPE``):

* ``darija``: Arabic-script Darija frames (Moroccan and Algerian spellings);
  planted exact variants carry harakat, tatweel, alef and taa-marbuta variants
  and changed punctuation, which folding undoes.
* ``arabizi``: Latin-script Darija ("Arabizi", digits for ع ح ق) on the same
  themes, with the spelling noise such text has (kifach / kifash / kifech,
  3 / 9 / 7 written or not, doubled letters): drafts that differ only in
  spelling are near copies of each other, so the pool holds many true pairs
  at >= 0.8 and large clusters.

Two kinds of copies are planted (1% each, on random originals): near copies
(1-3 character edits or one slot word changed) and exact variants. The TSV has
the columns id, prompt, solution0, solution1, label and ``copy_of`` (the
original's id for a planted copy, else empty), like make_template_drafts.py's.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # beside this script, however it is loaded
from planted_copies import Planted, Row, near_copy, plant_copies, word_swap, write_drafts  # noqa: E402

SHAPES = ("darija", "arabizi")

# Arabic-script frames: (goal, solution with {ok} where the right word goes), slots in braces.
DARIJA_FRAMES = [
    ("كيفاش نطيب {dish} باش يجي {adj}؟", "حط {dish} فالطنجرة مع {ing} وخليه يطيب على {ok} {time}."),
    ("كيفاش ننقي {thing} من {stain}؟", "حك {thing} ب{ok} و{ing2} وشطبو بالما {temp}."),
    ("شنو ندير ملي {thing} تاع {room} يتكسر؟", "جيب {tool} وصلح {thing} و{ok} مزيان قبل {time}."),
    ("كيفاش نحفظ {food} باش ما يخسرش {time}؟", "حط {food} ف{ok} وسدو مزيان وخليه ف{room}."),
    ("كيفاش نغسل {cloth} بلا ما {harm}؟", "صبن {cloth} بالما {temp} و{ok} ونشرو ف{place}."),
    ("واش نقدر نسخن {food} ف{tool}؟", "إيه، حطو ف{tool} {time} ومن بعد {ok} شوية."),
    ("كيفاش نزرع {plant} ف{place}؟", "حفر شوية فالتراب وحط {plant} وسقيه ب{ok} كل {time}."),
    ("كيفاش نبرد {room} فالصيف؟", "حل {thing} فالليل وسد {ok} فالنهار ورش الما ف{place}."),
]
DARIJA_SLOTS = {
    "dish": [
        "الكسكسي",
        "الشربة",
        "الحريرة",
        "الطاجين",
        "المرقة",
        "العدس",
        "اللوبيا",
        "البركوكس",
        "الرفيسة",
        "الشخشوخة",
    ],
    "adj": ["بنين", "خفيف", "مسقي", "حار", "ماشي مالح", "رطب", "مزيان", "كيما تاع ماما"],
    "ing": ["الزيت", "البصل", "الطماطم", "الملحة", "الكمون", "الحمص", "الما", "الزبدة", "الثوم"],
    "ing2": ["الصابون", "الخل", "الليمون", "الملحة", "البيكاربونات", "الجافيل"],
    "time": ["ساعة", "نص ساعة", "عشر دقايق", "ربع ساعة", "الليل كامل", "يومين", "سيمانة", "شوية"],
    "thing": ["الروبيني", "الباب", "الكرسي", "الطابلة", "الزليج", "الفريجيدار", "الكاشي", "البلاكار", "الشرجم"],
    "stain": ["الدهنة", "الصدا", "الكلس", "الوسخ", "القهوة", "الحنة", "الشمع"],
    "room": ["الكوزينة", "الحمام", "الصالون", "البيت", "السطح", "الكاراج", "الدار"],
    "tool": ["التورنوفيس", "المطرقة", "الكلاب", "الميكرو", "الفرن", "الطاوة", "الكوكوط"],
    "food": ["الخبز", "اللحم", "الحوت", "الحليب", "الخضرة", "الفريز", "الزيتون", "الدجاج"],
    "cloth": ["القندورة", "الجلابة", "القفطان", "الزربية", "الملحفة", "الفوطة", "الكاشكول"],
    "harm": ["يتقص", "يمشي اللون", "يتخسر", "يتكمش", "يتقطع"],
    "temp": ["البارد", "السخون", "الفاتر", "المغلي"],
    "place": ["الظل", "الشمس", "السطح", "الجردة", "الحوش", "البالكون"],
    "plant": ["النعناع", "الطماطم", "الفلفل", "الحبق", "البقدونس", "الكرافس", "القرع"],
}
DARIJA_OK = [
    "النار الهادية",
    "الما",
    "الكيس",
    "التقاشر",
    "الكاسرونة",
    "الشوية",
    "الفيترينة",
    "الحيط",
    "الما البارد",
    "الشراجم",
]
DARIJA_WRONG = ["النار القوية", "الزيت", "الحجرة", "السكين", "الحديد", "بزاف", "الشمس", "الضو", "الما السخون", "الباب"]

# Latin-script (Arabizi) frames on the same themes.
ARABIZI_FRAMES = [
    ("{how} nteyeb {dish} bach yji {adj}?", "{put} {dish} fel tanjra m3a {ing} w khalih yteyeb 3la {ok} {time}."),
    ("{how} nna9i {thing} mn {stain}?", "{rub} {thing} b {ok} w {ing2} w chetbo bel ma {temp}."),
    ("{how} nhafed {food} bach ma yekhserch {time}?", "{put} {food} f {ok} w seddo mlih w khalih f {room}."),
    ("{how} nghsel {cloth} bla ma {harm}?", "sabbon {cloth} bel ma {temp} w {ok} w nechro f {place}."),
    ("wach n9der nsakhen {food} f {tool}?", "ih, {put}o f {tool} {time} w men ba3d {ok} chwiya."),
    ("{how} nzre3 {plant} f {place}?", "hfer chwiya fel trab w {put} {plant} w s9ih b {ok} kol {time}."),
]
ARABIZI_SLOTS = {
    "how": ["kifach", "kifash", "kifech", "kifah", "kifache"],
    "put": ["hot", "7ot", "hott", "7ott"],
    "rub": ["hok", "7ok", "hokk", "7akk"],
    "dish": ["couscous", "chorba", "7rira", "harira", "tajine", "mar9a", "3des", "loubya", "berkoukes", "rfissa"],
    "adj": ["bnin", "khfif", "mes9i", "7ar", "mlih", "rteb", "kima ta3 mama"],
    "ing": ["zit", "bsel", "tmatem", "mel7a", "kamoun", "7ommos", "ma", "zebda", "toum"],
    "ing2": ["sabon", "khel", "lim", "mel7a", "bicarbonate", "javel"],
    "time": ["sa3a", "nos sa3a", "3chra d9aye9", "rbe3 sa3a", "lil kamel", "yomin", "simana", "chwiya"],
    "thing": ["robini", "bab", "korsi", "tabla", "zlij", "frigidaire", "kachi", "placard", "charjem"],
    "stain": ["dehna", "sda", "kals", "wsekh", "9ahwa", "7enna", "cham3"],
    "room": ["cuisine", "7mam", "salon", "bit", "sta7", "garage", "dar"],
    "tool": ["micro", "four", "tawa", "cocotte"],
    "food": ["khobz", "l7am", "7out", "7lib", "khodra", "fraise", "zitoun", "djej"],
    "cloth": ["gandoura", "djellaba", "caftan", "zerbiya", "mel7fa", "fouta", "cache-col"],
    "harm": ["yt9ass", "ymchi lon", "ytkhesser", "ytkmech", "yt9at3"],
    "temp": ["bared", "skhoun", "fater", "mghli"],
    "place": ["dell", "chems", "sta7", "jerda", "7ouch", "balcon"],
    "plant": ["na3na3", "tmatem", "felfel", "7bak", "ma3dnous", "krafes", "9ra3"],
}
ARABIZI_OK = ["nar hadya", "ma", "kis", "t9acher", "casserole", "chwiya", "vitrine", "7it", "ma bared", "chrajem"]
ARABIZI_WRONG = ["nar 9wiya", "zit", "7ajra", "sekkin", "7did", "bezzaf", "chems", "dow", "ma skhoun", "bab"]

ARABIC_LETTERS = "ابتثجحخدذرزسشصضطظعغفقكلمنهوي"
LATIN_LETTERS = "abcdefghijklmnopqrstuvwxyz379"
HARAKAT = "\u064e\u064f\u0650\u0651\u0652"


def _fill(frame: str, slots: dict[str, list[str]], chosen: dict[str, str], rng: random.Random) -> str:
    """The frame with each slot filled: a slot already chosen for this item keeps its word (goal and solutions agree)."""
    for name in slots:
        if "{" + name + "}" in frame:
            word = chosen.setdefault(name, rng.choice(slots[name]))
            frame = frame.replace("{" + name + "}", word)
    return frame


def _exact_variant(fields: list[str], shape: str, rng: random.Random) -> list[str]:
    """A copy that folding makes identical: solutions swapped, punctuation and spacing changed, and
    for Arabic script harakat, tatweel, alef and taa-marbuta variants; for Latin script, case."""
    prompt, sol0, sol1 = fields
    if shape == "darija":
        prompt = prompt.replace("ا", "أ", 1).replace("؟", " ؟!")
        sol0 = "".join(c + (rng.choice(HARAKAT) if c in "بتكم" and rng.random() < 0.5 else "") for c in sol0)
        sol0 = sol0.replace("ل", "لـ", 1)
    else:
        prompt, sol0 = prompt.upper().replace("?", " ??"), sol0.replace(",", " ,")
    return [prompt, sol1.replace(" ", "  ", 1), sol0]


def frame_drafts(n: int, shape: str = "darija", seed: int = 0) -> tuple[list[Row], list[Planted]]:
    """``n`` rows ``(id, prompt, solution0, solution1)`` and the planted pairs ``(original id, copy id, kind)``."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {', '.join(SHAPES)}")
    rng = random.Random(seed)
    frames, slots, ok, wrong, letters = (
        (DARIJA_FRAMES, DARIJA_SLOTS, DARIJA_OK, DARIJA_WRONG, ARABIC_LETTERS)
        if shape == "darija"
        else (ARABIZI_FRAMES, ARABIZI_SLOTS, ARABIZI_OK, ARABIZI_WRONG, LATIN_LETTERS)
    )
    vocab = sorted({w for words in slots.values() for phrase in words for w in phrase.split()})
    n_planted = max(1, n // 100)
    n_base = n - 2 * n_planted
    out: list[Row] = []
    for i in range(n_base):
        goal, solution = frames[rng.randrange(len(frames))]
        chosen: dict[str, str] = {}
        if shape == "arabizi":
            chosen["how"] = rng.choice(slots["how"])  # the spelling noise: one draft writes kifach, the next kifash
        prompt = _fill(goal, slots, chosen, rng)
        k = rng.randrange(len(ok))
        right = _fill(solution.replace("{ok}", ok[k]), slots, chosen, rng)
        out.append((f"f{i}", prompt, right, right.replace(ok[k], wrong[k], 1)))
    planted = plant_copies(
        out,
        n_planted,
        rng,
        near=lambda fields: near_copy(fields, rng, letters, vocab, word=word_swap),
        exact=lambda fields: _exact_variant(fields, shape, rng),
    )
    return out, planted


def main() -> None:
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    shape = sys.argv[3] if len(sys.argv) > 3 else "darija"
    write_drafts(path, *frame_drafts(n, shape))


if __name__ == "__main__":
    main()
