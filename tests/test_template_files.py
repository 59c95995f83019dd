"""Prompt templates as TOML files: the shipped ones, a user's in Arabic and in Tamil, and bad files.

Every template here is parsed from real files and rendered on real items of
the shipped samples; the expected strings are written out in full.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from piqa_tui.core.dataset.reading import load_dataset
from piqa_tui.core.errors import TemplateError
from piqa_tui.core.scoring.templates import (
    Template,
    folder_templates,
    get_template,
    parse_template_text,
    shipped_templates,
    template_catalog,
)

SAMPLES = Path(__file__).resolve().parents[1] / "samples"

ARABIC_TEMPLATE = """
description = "سؤال ثقافي مع البلد والموضوع"
language = "ar"
context = "البلد: {meta:country}\\nالموضوع: {meta:topic}\\nالسؤال: {goal}\\n{options}\\nالجواب:"
continuation = " {letter}"
letters = ["أ", "ب", "ج"]
option_line = "{letter}) {solution}"

[meta.country.values]
Morocco = "المغرب"
"Saudi Arabia" = "السعودية"

[meta.topic]
values = { food = "الطعام", hospitality = "الضيافة" }
keep_unknown = true
"""

TAMIL_TEMPLATE = """
description = "தமிழ் கேள்வி: வகையுடன்"
language = "ta"
context = "வகை: {meta:category}\\nகேள்வி: {goal}\\n{options}\\nபதில்:"
continuation = " {letter}"
letters = ["அ", "ஆ"]

[meta.category.values]
cooking = "சமையல்"
cleaning = "சுத்தம்"

[meta.source]
default = "தெரியாது"
"""


def test_the_shipped_templates_keep_their_cache_keys() -> None:
    """piqa, bare and mcq moved into TOML files with their text unchanged: scores cached before stay valid."""
    shipped = shipped_templates()
    assert shipped["piqa"].key == "piqa:e3b796518b3402c1"
    assert shipped["bare"].key == "bare:a6b783e205c1918f"
    assert shipped["mcq"].key == "mcq:dfbb790547d94511"
    assert shipped["piqa"] == Template("piqa", "Question: {goal}\nAnswer:", " {solution}")
    assert shipped["mcq"] == Template("mcq", "Question: {goal}\n{options}\nAnswer:", " {letter}")
    assert shipped["piqa"].source == "(shipped) piqa.toml" and shipped["piqa"].language == "en"


def test_an_arabic_user_template_with_metadata(tmp_path: Path) -> None:
    (tmp_path / "ثقافة.toml").write_text(ARABIC_TEMPLATE, encoding="utf-8")
    template = folder_templates(tmp_path)["ثقافة"]
    items = {it.id: it for it in load_dataset(SAMPLES / "msa-culture.tsv").items}
    request = template.request(items["msa-003"])
    assert request.context == (
        "البلد: السعودية\nالموضوع: الضيافة\nالسؤال: في المجالس السعودية، تُقدَّم القهوة العربية للضيف عادةً\n"
        "أ) في فناجين كبيرة مع التمر.\nب) في فناجين صغيرة مع الخبز.\nج) في فناجين صغيرة مع التمر.\nالجواب:"
    )
    assert request.continuations == (" أ", " ب", " ج")
    assert template.norm_lengths(items["msa-003"]) == (1, 1, 1)
    assert template.language == "ar" and template.source == str(tmp_path / "ثقافة.toml")
    # keep_unknown: a topic without a translation is shown as written
    unknown_topic = next(
        it
        for it in items.values()
        if it.meta["country"] == "Morocco" and it.meta["topic"] not in ("food", "hospitality")
    )
    assert f"الموضوع: {unknown_topic.meta['topic']}\n" in template.render_context(unknown_topic)
    # no keep_unknown: Egypt is not in its table, so the item is named, never an English word in the prompt
    with pytest.raises(
        TemplateError, match=r"item msa-\d+: template 'ثقافة' cannot translate 'Egypt' in column 'country'"
    ):
        template.request(next(it for it in items.values() if it.meta["country"] == "Egypt"))


def test_a_tamil_user_template_with_metadata_and_a_default(tmp_path: Path) -> None:
    (tmp_path / "tamil-mcq.toml").write_text(TAMIL_TEMPLATE, encoding="utf-8")
    template = folder_templates(tmp_path)["tamil-mcq"]
    item = load_dataset(SAMPLES / "tamil.tsv").items[0]
    assert item.id == "ta-001"
    request = template.request(item)
    assert request.context == (
        "வகை: சமையல்\nகேள்வி: இட்லி மாவு நன்றாகப் புளிக்க என்ன செய்ய வேண்டும்?\n"
        "அ. மாவை இரவு முழுவதும் குளிர்சாதனப் பெட்டியில் மூடி வைக்கவும்.\n"
        "ஆ. மாவை இரவு முழுவதும் வெதுவெதுப்பான இடத்தில் மூடி வைக்கவும்.\nபதில்:"
    )
    assert request.continuations == (" அ", " ஆ")
    # a declared default stands in for a missing value; without one, the item and column are named
    with_source = Template("t", "{meta:source} {goal}", " {solution}", meta=template.meta)
    assert with_source.render_context(item.with_changes(meta={"category": "cooking"})).startswith("தெரியாது ")
    with pytest.raises(
        TemplateError, match="item ta-001 has no column 'region', which template 'x' shows as {meta:region}"
    ):
        Template("x", "{meta:region} {goal}", " {solution}").request(item)
    # three solutions need three letters
    with pytest.raises(TemplateError, match="item ta-001 has 3 solutions but template 'tamil-mcq' declares 2 letters"):
        template.request(item.with_changes(solutions=(*item.solutions, "மூன்றாவது")))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('context = "{goal}\n', "not valid TOML"),
        ('context = "{goal}"\ncontinuations = " {solution}"\n', "unknown key 'continuations' in template 'bad'"),
        ('context = "{goal} {country}"\n', "template 'bad': unknown placeholder {country} in its context"),
        ('context = "{meta:}"\n', "{meta:...} in its context must name a column"),
        ('context = "{meta!r:a}"\n', "{meta:...} in its context must name a column"),
        ('context = "{goal:>9999}"\n', "placeholder {goal} in its context has a format spec"),
        ('continuation = " {solution}"\n', "template 'bad' has no 'context'"),
        ('context = "{goal}"\nletters = []\n', "letters of template 'bad' must be a list of texts"),
        ('context = "{goal}"\noption_line = "{letter}. {goal}"\n', "unknown placeholder {goal} in its option_line"),
        ('context = "{goal}"\n[meta.country]\nvalue = {}\n', "[meta.country] of template 'bad': unknown key 'value'"),
        ('context = "{goal}"\n[meta.country]\nvalues = { Egypt = 1 }\n', "values must be a table of text"),
        ('context = "{goal}"\nstrip = "yes"\n', "strip of template 'bad' must be true or false"),
    ],
)
def test_a_bad_template_file_is_one_line_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "good.toml").write_text('context = "{goal}"\n', encoding="utf-8")
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TemplateError) as caught:
        template_catalog(tmp_path)
    line = str(caught.value)
    assert line.startswith(f"{path}: ") and message in line and "\n" not in line


def test_context_variants_make_one_template_each() -> None:
    templates = parse_template_text(
        'continuation = "{solution}"\n[context]\nplain = "{goal}"\n"with+topic" = "{meta:topic}: {goal}"\n',
        "f.toml",
        "f",
    )
    assert [t.name for t in templates] == ["f-plain", "f-with+topic"]
    assert templates[1].meta_columns() == ["topic"]


def test_user_files_and_config_tables_join_and_override_the_shipped(tmp_path: Path) -> None:
    (tmp_path / "piqa.toml").write_text('context = "Q: {goal}\\nA:"\n', encoding="utf-8")
    catalog = template_catalog(tmp_path, {"plain": {"context": "{goal}", "letters": ["x", "y"]}})
    assert catalog["piqa"].context == "Q: {goal}\nA:" and catalog["piqa"].source == str(tmp_path / "piqa.toml")
    assert catalog["plain"].letters == ("x", "y") and catalog["plain"].source == "config [templates.plain]"
    assert "arab-culture-mcq-ar-region" in catalog
    assert get_template("plain", catalog=catalog).key != get_template("bare").key
    with pytest.raises(TemplateError, match="unknown template 'nope'"):
        get_template("nope", catalog=catalog)


def test_more_parts_change_the_cache_key() -> None:
    plain = Template("t", "{goal}\n{options}", " {letter}")
    assert Template("t", "{goal}\n{options}", " {letter}", letters=("أ", "ب")).key != plain.key
    assert Template("t", "{goal}\n{options}", " {letter}", option_line="{letter}) {solution}").key != plain.key
    assert Template("t", "{goal}\n{options}", " {letter}", strip=True).key != plain.key
