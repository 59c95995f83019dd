"""The Arab-culture protocols render exactly lm-evaluation-harness's prompts.

The reference below is lm-evaluation-harness's own text, copied verbatim from
lm_eval/tasks/arab_culture/prompts.py and lm_eval/tasks/arab_culture_completion/prompts.py
at commit 4e7e0d47f33bc71070c1d38394bafbb52b117163 (only the constant names got a
MCQ_/COMPLETION_ prefix), and ``lm_eval_doc_to_text`` follows utils_mcq.py /
utils_completion.py's doc_to_text, doc_to_choice and their en_ar_countries_regions
table line by line. piqa-tui's shipped TOML templates must give the same strings
for every item of the MSA culture sample, every context and both languages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piqa_tui.core.dataset.item import Item
from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.dataset.writing import write_dataset
from piqa_tui.core.errors import TemplateError
from piqa_tui.core.scoring.templates import (
    CONTEXTS,
    LANGUAGES,
    PROTOCOLS,
    protocol_template,
)

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "msa-culture.tsv"

# ---------------------------------------------------------------- lm-eval's published text (commit 4e7e0d47f)

# lm_eval/tasks/arab_culture/prompts.py
MCQ_REGION_COUNTRY_PROMPT_AR = """
مهمتك هي اختيار الخيار الأنسب ثقافياً بناءً على السياق المقدم أدناه.

الموقع: {country}, {region}
الجملة: {first_statement}

يرجى مراعاة الفروق الثقافية للموقع المحدد واختيار الإجابة الأكثر ملاءمة من الخيارات المتاحة.

الخيارات:
{choices}
"""

MCQ_REGION_PROMPT_AR = """
مهمتك هي اختيار الخيار الأنسب ثقافياً بناءً على السياق المقدم أدناه.

الموقع: {region}
الجملة: {first_statement}

يرجى مراعاة الفروق الثقافية للموقع المحدد واختيار الإجابة الأكثر ملاءمة من الخيارات المتاحة.

الخيارات:
{choices}
"""

MCQ_BASE_PROMPT_AR = """
مهمتك هي اختيار الخيار الأنسب ثقافياً بناءً على السياق المقدم أدناه.

الجملة: {first_statement}

يرجى مراعاة الفروق الثقافية واختيار الإجابة الأكثر ملاءمة من الخيارات المتاحة.

الخيارات:
{choices}
"""

MCQ_REGION_COUNTRY_PROMPT = """
You are tasked with selecting the most culturally appropriate option based on the context provided below.

Location: {country}, {region}
Statement: {first_statement}

Consider the cultural nuances of the specified location and choose the most suitable response from the options provided.

Options:
{choices}
"""
MCQ_REGION_PROMPT = """
You are tasked with selecting the most culturally appropriate option based on the context provided below.

Location: {region}
Statement: {first_statement}

Consider the cultural nuances of the specified location and choose the most suitable response from the options provided.

Options:
{choices}
"""
MCQ_BASE_PROMPT = """
You are tasked with selecting the most culturally appropriate option based on the context provided below.

Statement: {first_statement}

Consider the cultural nuances and choose the most suitable response from the options provided.

Options:
{choices}
"""

# lm_eval/tasks/arab_culture_completion/prompts.py
COMPLETION_REGION_COUNTRY_PROMPT_AR = """
مهمتك هي اختيار الخيار الأنسب ثقافياً بناءً على السياق المقدم أدناه.

الموقع: {country}, {region}
الجملة: {first_statement}

يرجى مراعاة الفروق الثقافية للموقع المحدد واختيار الإجابة الأكثر ملاءمة من الخيارات المتاحة.
"""

COMPLETION_REGION_PROMPT_AR = """
مهمتك هي اختيار الخيار الأنسب ثقافياً بناءً على السياق المقدم أدناه.

الموقع: {region}
الجملة: {first_statement}

يرجى مراعاة الفروق الثقافية للموقع المحدد واختيار الإجابة الأكثر ملاءمة من الخيارات المتاحة.
"""

COMPLETION_BASE_PROMPT_AR = """
مهمتك هي اختيار الخيار الأنسب ثقافياً بناءً على السياق المقدم أدناه.

الجملة: {first_statement}

يرجى مراعاة الفروق الثقافية واختيار الإجابة الأكثر ملاءمة من الخيارات المتاحة.
"""


COMPLETION_REGION_COUNTRY_PROMPT = """
You are tasked with selecting the most culturally appropriate option based on the context provided below.

Location: {country}, {region}
Statement: {first_statement}

Consider the cultural nuances of the specified location and choose the most suitable response from the options provided.
"""
COMPLETION_REGION_PROMPT = """
You are tasked with selecting the most culturally appropriate option based on the context provided below.

Location: {region}
Statement: {first_statement}

Consider the cultural nuances of the specified location and choose the most suitable response from the options provided.
"""
COMPLETION_BASE_PROMPT = """
You are tasked with selecting the most culturally appropriate option based on the context provided below.

Statement: {first_statement}

Consider the cultural nuances and choose the most suitable response from the options provided.
"""

# utils_mcq.py and utils_completion.py (identical tables)
en_ar_countries_regions = {
    "Egypt": "مصر",
    "Morocco": "المغرب",
    "Algeria": "الجزائر",
    "Libya": "ليبيا",
    "Sudan": "السودان",
    "Tunisia": "تونس",
    "Jordan": "الأردن",
    "Lebanon": "لبنان",
    "Syria": "سوريا",
    "Palestine": "فلسطين",
    "Yemen": "اليمن",
    "UAE": "الإمارات",
    "KSA": "السعودية",
    "Gulf": "الخليج",
    "Levant": "الشام",
    "North Africa": "شمال أفريقيا",
    "Nile Valley": "وادي النيل",
}

PROMPTS = {
    "mcq": {(True, True): "REGION_COUNTRY_PROMPT", (False, True): "REGION_PROMPT", (False, False): "BASE_PROMPT"},
    "completion": {
        (True, True): "REGION_COUNTRY_PROMPT",
        (False, True): "REGION_PROMPT",
        (False, False): "BASE_PROMPT",
    },
}
FLAGS = {"none": (False, False), "region": (False, True), "region+country": (True, True)}  # (COUNTRY, REGION)


def lm_eval_doc_to_text(doc: dict, protocol: str, country_flag: bool, region_flag: bool, arabic: bool) -> str:
    """utils_mcq.doc_to_text / utils_completion.doc_to_text with COUNTRY, REGION and ARABIC as arguments."""
    country = "" if not doc["country"] else doc["country"]
    region = "" if not doc["region"] else doc["region"]
    first_statement = doc["first_statement"].strip()
    if arabic:
        country = en_ar_countries_regions[country]
        region = en_ar_countries_regions[region]
    name = PROMPTS[protocol][(country_flag, region_flag)] + ("_AR" if arabic else "")
    prompt = globals()[("MCQ_" if protocol == "mcq" else "COMPLETION_") + name]
    fields = {"country": country, "region": region, "first_statement": first_statement}
    if protocol == "mcq":
        choices = doc["options"]
        choices_str = ""
        for i in range(3):
            key = choices["arabic_keys"][i] if arabic else choices["english_keys"][i]
            choice_str = key + ". " + choices["text"][i].strip() + "\n"
            choices_str += choice_str
        fields["choices"] = choices_str
    return prompt.format(**{k: v for k, v in fields.items() if "{" + k + "}" in prompt})


def lm_eval_doc_to_choice(doc: dict, protocol: str, arabic: bool) -> list[str]:
    if protocol == "mcq":
        return doc["options"]["arabic_keys"] if arabic else doc["options"]["english_keys"]
    return doc["options"]["text"]


# ---------------------------------------------------------------- the sample's items as ArabCulture docs

# The culture sample names two places differently from ArabCulture; lm-eval's table knows only
# ArabCulture's names, so its Arabic rendering is computed with them (piqa-tui accepts both).
ARABCULTURE_NAMES = {"Saudi Arabia": "KSA", "Maghreb": "North Africa"}


def as_doc(item: Item, arabic: bool) -> dict:
    rename = ARABCULTURE_NAMES.get if arabic else (lambda value, default: default)
    return {
        "first_statement": item.prompt,
        "options": {"text": list(item.solutions), "arabic_keys": ["أ", "ب", "ج"], "english_keys": ["A", "B", "C"]},
        "country": rename(item.meta["country"], item.meta["country"]),
        "region": rename(item.meta["region"], item.meta["region"]),
    }


@pytest.fixture(scope="module")
def items() -> list[Item]:
    return load_dataset(SAMPLE).items


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_culture_prompts_equal_lm_eval(items: list[Item], protocol: str, context: str, language: str) -> None:
    template = protocol_template(protocol, context, language)
    arabic = language == "ar"
    assert len(items) == 30
    for item in items:
        doc = as_doc(item, arabic)
        request = template.request(item)
        assert request.context == lm_eval_doc_to_text(doc, protocol, *FLAGS[context], arabic), item.id
        # target_delimiter is "": lm-eval scores (context, "" + choice)
        assert request.continuations == tuple(lm_eval_doc_to_choice(doc, protocol, arabic)), item.id
        # acc_norm divides by the choice's own length, as lm-eval's len(choice)
        assert template.norm_lengths(item) == tuple(len(c) for c in lm_eval_doc_to_choice(doc, protocol, arabic))


def test_the_reference_is_not_trivially_equal(items: list[Item]) -> None:
    """The contexts differ where lm-eval's do: the location line, the language, the options."""
    item = items[2]  # msa-003, Saudi Arabia, Gulf
    rendered = {
        (p, c, l): protocol_template(p, c, l).request(item).context
        for p in PROTOCOLS
        for c in CONTEXTS
        for l in LANGUAGES
    }
    assert len(set(rendered.values())) == 12
    assert "الموقع: السعودية, الخليج\n" in rendered["mcq", "region+country", "ar"]
    assert "Location: Saudi Arabia, Gulf\n" in rendered["completion", "region+country", "en"]
    assert rendered["mcq", "none", "ar"].endswith(
        "أ. في فناجين كبيرة مع التمر.\nب. في فناجين صغيرة مع الخبز.\nج. في فناجين صغيرة مع التمر.\n\n"
    )
    assert rendered["completion", "region", "ar"].startswith("\nمهمتك")


def test_whitespace_is_stripped_where_lm_eval_strips_it(items: list[Item]) -> None:
    item = items[0].with_changes(
        prompt="  " + items[0].prompt + " \n", solutions=tuple(" " + s + "  " for s in items[0].solutions)
    )
    arabic_doc = as_doc(item, True)
    for protocol in PROTOCOLS:
        request = protocol_template(protocol, "region", "ar").request(item)
        assert request.context == lm_eval_doc_to_text(arabic_doc, protocol, False, True, True)
        assert request.continuations == tuple(lm_eval_doc_to_choice(arabic_doc, protocol, True))
    # completion scores the option texts unstripped, as doc_to_choice returns them
    assert protocol_template("completion", "none", "ar").request(item).continuations[0].startswith(" ")


def test_a_place_an_arabic_prompt_cannot_name_is_one_clear_error(items: list[Item]) -> None:
    item = items[0].with_changes(id="msa-x", meta={**items[0].meta, "country": "Atlantis"})
    with pytest.raises(TemplateError) as caught:
        protocol_template("mcq", "region+country", "ar").request(item)
    message = str(caught.value)
    assert "msa-x" in message and "'Atlantis'" in message and "country" in message and "\n" not in message
    # the English prompt shows the value as lm-eval does, and the region-only prompt does not need it
    assert "Location: Atlantis, Maghreb" in protocol_template("mcq", "region+country", "en").request(item).context
    protocol_template("mcq", "region", "ar").request(item)


def test_a_missing_place_is_an_error_not_an_empty_slot(items: list[Item]) -> None:
    item = items[0].with_changes(id="msa-y", meta={**items[0].meta, "region": ""})
    for language in LANGUAGES:
        with pytest.raises(TemplateError, match="item msa-y has an empty value in column 'region'"):
            protocol_template("completion", "region", language).request(item)
    protocol_template("completion", "none", "en").request(item)


def test_unknown_protocol_context_or_language() -> None:
    with pytest.raises(TemplateError, match="unknown protocol 'cloze': choose one of mcq, completion"):
        protocol_template("cloze", "none", "ar")
    with pytest.raises(TemplateError, match="unknown context 'country'"):
        protocol_template("mcq", "country", "ar")
    with pytest.raises(TemplateError, match="unknown language 'fr'"):
        protocol_template("mcq", "none", "fr")


# ---------------------------------------------------------------- ArabCulture's own JSONL layout

ARABCULTURE = Path(__file__).resolve().parent / "data" / "arabculture" / "test.jsonl"


def test_arabculture_jsonl_is_read_as_published() -> None:
    """Nested options and answer key become solutions and a label; the other fields stay metadata columns."""
    dataset = load_dataset(ARABCULTURE)
    docs = [json.loads(line) for line in ARABCULTURE.read_text(encoding="utf-8").splitlines()]
    assert dataset.layout.prompt == "first_statement" and dataset.layout.id == "sample_id"
    for item, doc in zip(dataset.items, docs, strict=True):
        assert item.id == doc["sample_id"] and item.prompt == doc["first_statement"]
        assert item.solutions == tuple(doc["options"]["text"])
        assert item.label == doc["options"]["english_keys"].index(doc["answer_key"]["english_answer_key"])
        for column in (
            "relevant_to_this_country",
            "relevant_to_other_countries",
            "should_discard",
            "country",
            "region",
            "sub_topic",
        ):
            assert item.meta[column] == doc[column]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_arabculture_rows_render_as_lm_eval_renders_them(protocol: str, context: str, language: str) -> None:
    """lm-eval's doc_to_text on the raw JSON rows, and piqa-tui's template on the items read from them."""
    items = load_dataset(ARABCULTURE).items
    docs = [json.loads(line) for line in ARABCULTURE.read_text(encoding="utf-8").splitlines()]
    template = protocol_template(protocol, context, language)
    arabic = language == "ar"
    for item, doc in zip(items, docs, strict=True):
        request = template.request(item)
        assert request.context == lm_eval_doc_to_text(doc, protocol, *FLAGS[context], arabic)
        assert request.continuations == tuple(lm_eval_doc_to_choice(doc, protocol, arabic))


def test_arabculture_jsonl_is_written_back_nested(tmp_path: Path) -> None:
    dataset = load_dataset(ARABCULTURE)
    same = tmp_path / "same.jsonl"
    write_dataset(dataset, dataset.items, same)
    assert same.read_bytes() == ARABCULTURE.read_bytes()
    edited = [
        it.with_changes(solutions=(it.solutions[0], "نصّ معدّل", it.solutions[2])) if it.row == 1 else it
        for it in dataset.items
    ]
    out = tmp_path / "edited.jsonl"
    write_dataset(dataset, edited, out)
    before = [json.loads(line) for line in ARABCULTURE.read_text(encoding="utf-8").splitlines()]
    after = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert after[0] == before[0] and after[2:] == before[2:]
    assert list(after[1]) == list(before[1]) and list(after[1]["options"]) == list(before[1]["options"])
    assert after[1]["options"]["text"] == [before[1]["options"]["text"][0], "نصّ معدّل", before[1]["options"]["text"][2]]
    assert {k: v for k, v in after[1].items() if k != "options"} == {
        k: v for k, v in before[1].items() if k != "options"
    }
