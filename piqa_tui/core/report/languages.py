"""Which languages a dataset shows: codes for a dataset card, from its scripts and its language columns.

Two sources, and nothing else (a card must never claim a language the data
does not show):

* the **script** each item is mainly written in (``dominant_script`` over its
  prompt and solutions). A script names a language only where one language is
  what PIQA-style teams write in it (``SCRIPT_LANGUAGES``): Arabic script →
  ``ar``, Tamil → ``ta``, Bengali → ``bn``, Devanagari → ``hi`` and so on.
  Latin script names no language by itself, except English when most of its
  items use common English function words; Cyrillic and Han name none.
* a **language or dialect column** (``language``, ``lang``, ``dialect``,
  ``variety``, ``locale``): each value that is a known name or code
  (``LANGUAGE_NAMES``) adds its ISO 639 code — Algerian → ``arq``, Moroccan →
  ``ary`` — besides the script's macrolanguage. Values not known are reported,
  not guessed.

The mapping is documented in docs/card.md; the card says where each code came from.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.text.characters import dominant_script

# Script → (code, why): the language a team writing PIQA-style items in that script writes.
# Scripts shared by several languages map to the one our users write (the card says so).
SCRIPT_LANGUAGES: dict[str, tuple[str, str]] = {
    "Arabic": ("ar", "Arabic script (also written for Persian, Urdu…: a language column says which)"),
    "Devanagari": ("hi", "Devanagari script (also written for Marathi, Nepali…: a language column says which)"),
    "Bengali": ("bn", "Bengali script (also written for Assamese: a language column says which)"),
    "Gurmukhi": ("pa", "Gurmukhi script"),
    "Gujarati": ("gu", "Gujarati script"),
    "Oriya": ("or", "Odia script"),
    "Tamil": ("ta", "Tamil script"),
    "Telugu": ("te", "Telugu script"),
    "Kannada": ("kn", "Kannada script"),
    "Malayalam": ("ml", "Malayalam script"),
    "Sinhala": ("si", "Sinhala script"),
    "Hebrew": ("he", "Hebrew script"),
    "Greek": ("el", "Greek script"),
    "Ethiopic": ("am", "Ethiopic script (also written for Tigrinya: a language column says which)"),
    "Thai": ("th", "Thai script"),
}

# Names and codes a language/dialect column may hold (casefolded) → ISO 639 code.
LANGUAGE_NAMES: dict[str, str] = {
    # Arabic varieties (ISO 639-3), with Modern Standard Arabic as arb.
    "algerian": "arq",
    "algerian arabic": "arq",
    "algerian darija": "arq",
    "arq": "arq",
    "moroccan": "ary",
    "moroccan arabic": "ary",
    "moroccan darija": "ary",
    "ary": "ary",
    "tunisian": "aeb",
    "tunisian arabic": "aeb",
    "aeb": "aeb",
    "libyan": "ayl",
    "libyan arabic": "ayl",
    "ayl": "ayl",
    "egyptian": "arz",
    "egyptian arabic": "arz",
    "arz": "arz",
    "sudanese": "apd",
    "sudanese arabic": "apd",
    "apd": "apd",
    "levantine": "apc",
    "levantine arabic": "apc",
    "apc": "apc",
    "gulf": "afb",
    "gulf arabic": "afb",
    "afb": "afb",
    "najdi": "ars",
    "najdi arabic": "ars",
    "ars": "ars",
    "hijazi": "acw",
    "hijazi arabic": "acw",
    "acw": "acw",
    "iraqi": "acm",
    "iraqi arabic": "acm",
    "acm": "acm",
    "hassaniya": "mey",
    "mey": "mey",
    "msa": "arb",
    "modern standard arabic": "arb",
    "standard arabic": "arb",
    "arb": "arb",
    "arabic": "ar",
    "ar": "ar",
    # Other languages our users write.
    "tamil": "ta",
    "ta": "ta",
    "bengali": "bn",
    "bangla": "bn",
    "bn": "bn",
    "hindi": "hi",
    "hi": "hi",
    "kannada": "kn",
    "kn": "kn",
    "malayalam": "ml",
    "ml": "ml",
    "telugu": "te",
    "te": "te",
    "marathi": "mr",
    "mr": "mr",
    "gujarati": "gu",
    "gu": "gu",
    "punjabi": "pa",
    "pa": "pa",
    "odia": "or",
    "oriya": "or",
    "or": "or",
    "urdu": "ur",
    "ur": "ur",
    "nepali": "ne",
    "ne": "ne",
    "assamese": "as",
    "as": "as",
    "sinhala": "si",
    "si": "si",
    "persian": "fa",
    "farsi": "fa",
    "fa": "fa",
    "english": "en",
    "en": "en",
    "french": "fr",
    "fr": "fr",
    "hebrew": "he",
    "he": "he",
    "amharic": "am",
    "am": "am",
    "thai": "th",
    "th": "th",
    "greek": "el",
    "el": "el",
}
# ISO 639-3 Arabic varieties → their macrolanguage, listed with them (as Hub cards do: ar + arq).
MACROLANGUAGE = {
    code: "ar" for code in ("arq", "ary", "aeb", "ayl", "arz", "apd", "apc", "afb", "ars", "acw", "acm", "arb")
}
LANGUAGE_COLUMNS = ("language", "lang", "dialect", "variety", "language_variety", "locale")

# Short English words that almost every English sentence of a few words contains.
_ENGLISH = re.compile(r"\b(the|a|an|to|of|and|in|on|with|for|you|your|is|it|how|do|what)\b", re.IGNORECASE)
_ENGLISH_SHARE = 0.5


@dataclass
class LanguageReport:
    """The codes a card's ``language`` lists, and the evidence for each."""

    codes: list[str]
    scripts: dict[str, int]  # main script of each item → items (None: no letters, as "none")
    sources: dict[str, list[str]] = field(default_factory=dict)  # code → where it came from
    unmapped: dict[str, list[str]] = field(default_factory=dict)  # column → values naming no known language
    unnamed_scripts: list[str] = field(default_factory=list)  # main scripts that name no language


def language_columns(columns: list[str]) -> list[str]:
    """The metadata columns that say which language or dialect an item is in."""
    return [c for c in columns if c.strip().casefold().replace("-", "_") in LANGUAGE_COLUMNS]


def main_scripts(items: list[Item]) -> dict[str, int]:
    """Items per main script (most letters in the prompt and solutions), most items first."""
    counts = Counter(dominant_script(" ".join((item.prompt, *item.solutions))) or "none" for item in items)
    return dict(counts.most_common())


def _latin_language(items: list[Item]) -> str | None:
    """``en`` when most Latin-script items use English function words; else no claim."""
    latin = [i for i in items if dominant_script(" ".join((i.prompt, *i.solutions))) == "Latin"]
    english = sum(bool(_ENGLISH.search(" ".join((i.prompt, *i.solutions)))) for i in latin)
    return "en" if latin and english / len(latin) >= _ENGLISH_SHARE else None


def _add(report: LanguageReport, code: str, source: str) -> None:
    if code not in report.codes:
        report.codes.append(code)
    report.sources.setdefault(code, [])
    if source not in report.sources[code]:
        report.sources[code].append(source)


def _from_scripts(report: LanguageReport, items: list[Item], claim: bool) -> None:
    """Add the language each main script names; with ``claim`` False only as evidence for codes already found."""
    for script, n in report.scripts.items():
        if script in SCRIPT_LANGUAGES:
            code, why = SCRIPT_LANGUAGES[script]
        elif script == "Latin" and (latin := _latin_language(items)):
            code, why = latin, "Latin script with English function words"
        else:
            report.unnamed_scripts.append(script)
            continue
        if claim or code in report.codes:
            _add(report, code, f"{why}: main script of {n} items")


def _column_code(value: str) -> str | None:
    key = value.strip().casefold()
    return LANGUAGE_NAMES.get(key) or LANGUAGE_NAMES.get(re.split("[-_ ]", key)[0]) if key else None  # ar-DZ, ta_IN


def _from_columns(report: LanguageReport, items: list[Item], columns: list[str]) -> int:
    """Add the codes the language/dialect columns name; returns how many items they name a language for."""
    named: set[int] = set()
    for column in language_columns(columns):
        values = Counter(item.meta.get(column, "").strip() for item in items)
        for value, n in values.most_common():
            code = _column_code(value)
            if code is None:
                if value:
                    report.unmapped.setdefault(column, []).append(value)
                continue
            if code in MACROLANGUAGE:
                _add(report, MACROLANGUAGE[code], f"macrolanguage of {code}")
            _add(report, code, f"column '{column}' = '{value}' ({n} items)")
        named.update(i for i, item in enumerate(items) if _column_code(item.meta.get(column, "")))
    return len(named)


def detect_languages(items: list[Item], meta_columns: list[str]) -> LanguageReport:
    """The language codes the items show, from their language/dialect columns and their scripts.

    When a column names a language for every item, the scripts add no code of their own (a column
    saying Urdu outweighs the Arabic script's default); otherwise both count.
    """
    report = LanguageReport(codes=[], scripts=main_scripts(items))
    named = _from_columns(report, items, meta_columns)
    _from_scripts(report, items, claim=named < len(items))
    report.codes = [
        *[c for c in report.codes if c in MACROLANGUAGE.values()],
        *[c for c in report.codes if c not in MACROLANGUAGE.values()],
    ]
    return report
