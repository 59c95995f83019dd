"""Generation jobs as data: a prompt, the JSON schema its answer must fit, and the job it serves.

A job template is a TOML file, read like the scoring templates: shipped ones in ``prompt_templates/jobs/``,
a team's own in the ``templates/jobs/`` folder beside the config file, or any file named by its path
(kept in the dataset's repository, it travels with the team's work). The keys (docs/generation.md):

    description = "one line"      job = "draft" | "translate" | "correct" | "distractor" | "fill"
    system = "..."                prompt = "... {examples} {metadata} {meta:category} {language} ..."
    example = "Goal: {goal} ..."  examples = 3          (how each retrieved example is shown, and how many)
    max_tokens = 256              temperature = 0.7
    [schema]                      the JSON schema of the answer (an object), as a TOML table

Each job reads its answer through fixed keys the schema must require: ``draft`` and ``translate`` and
``correct`` a ``goal`` and ``solutions``; ``distractor`` one ``solution``; ``fill`` (the missing translation
column) one ``text``. A placeholder the job does not fill, or a ``{meta:COLUMN}`` the dataset lacks, is one line
before anything is generated. A ``correct`` template may also show ``{source}`` (the text a translation was made
from) and ``{examples}``: people's earlier corrections of machine text, each shown by ``example`` through
``{machine}``, ``{corrected}`` and ``{source}`` (``core.authoring.correcting``).
"""

from __future__ import annotations

import functools
import hashlib
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from piqa_tui.core.errors import TemplateError
from piqa_tui.core.scoring.templates.files import read_template_file
from piqa_tui.core.scoring.templates.template import META, check_placeholders, render_placeholders

# The placeholders each job fills, and the keys its answer must have.
JOB_FIELDS: dict[str, frozenset[str]] = {
    "draft": frozenset({"examples", "language", "metadata"}),
    "translate": frozenset({"goal", "solutions", "language"}),
    "correct": frozenset({"goal", "solutions", "language", "source", "examples"}),
    "distractor": frozenset({"goal", "solution", "solutions", "language"}),
    "fill": frozenset({"goal", "solutions", "text", "column", "language"}),
}
JOB_ANSWERS: dict[str, tuple[str, ...]] = {
    "draft": ("goal", "solutions"),
    "translate": ("goal", "solutions"),
    "correct": ("goal", "solutions"),
    "distractor": ("solution",),
    "fill": ("text",),
}
EXAMPLE_FIELDS = frozenset({"goal", "solution0", "solution1", "solutions"})
# A correction job's example is a person's correction of machine text: the machine's text, the person's, the source.
CORRECTION_EXAMPLE_FIELDS = frozenset({"machine", "corrected", "source"})
KEYS = frozenset(
    {"description", "job", "system", "prompt", "example", "examples", "max_tokens", "temperature", "schema"}
)
DEFAULT_MAX_TOKENS = 256
DEFAULT_TEMPERATURE = 0.7


@dataclass(frozen=True)
class JobTemplate:
    """One job's prompt and answer schema; ``digest`` (SHA-256 of the file's text) goes into every run's record."""

    name: str
    job: str
    prompt: str
    schema: Mapping[str, object]
    system: str = ""
    description: str = ""
    example: str = ""
    examples: int = 0
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = DEFAULT_TEMPERATURE
    source: str = ""
    digest: str = ""

    def meta_columns(self) -> list[str]:
        """The metadata columns the prompt shows (``{meta:COLUMN}``), in order of first use."""
        found = [spec for _, f, spec, _ in string.Formatter().parse(self.system + self.prompt) if f == META and spec]
        return list(dict.fromkeys(found))

    def check_columns(self, columns: list[str], dataset: str) -> None:
        """TemplateError (one line) when the prompt shows a metadata column ``dataset`` does not have."""
        missing = [column for column in self.meta_columns() if column not in columns]
        if missing:
            have = ", ".join(columns) or "none"
            raise TemplateError(
                f"template {self.name!r} asks for column {missing[0]!r}, which {dataset} lacks (its metadata "
                f"columns: {have}); add the column or choose another template"
            )

    def render(self, values: Mapping[str, str], meta: Mapping[str, str]) -> tuple[str, str]:
        """(system, user) messages with the placeholders filled; TemplateError naming a value ``meta`` lacks."""
        missing = [column for column in self.meta_columns() if column not in meta]
        if missing:
            raise TemplateError(f"template {self.name!r} needs a value for {missing[0]!r}; give --meta {missing[0]}=…")
        return (
            render_placeholders(self.system, values, meta.__getitem__),
            render_placeholders(self.prompt, values, meta.__getitem__),
        )

    def show_example(self, values: Mapping[str, str]) -> str:
        """One retrieved item as the ``example`` text shows it."""
        return render_placeholders(self.example, values, None)

    def schema_for(self, solutions: int | None) -> Mapping[str, object]:
        """The answer schema, its ``solutions`` held to exactly ``solutions`` items when given (a translation or a
        correction keeps its item's count, so the answer cannot come back with one more or one less)."""
        properties = self.schema.get("properties")
        if solutions is None or not isinstance(properties, Mapping) or "solutions" not in properties:
            return self.schema
        held = dict(properties["solutions"]) | {"minItems": solutions, "maxItems": solutions}
        return dict(self.schema) | {"properties": dict(properties) | {"solutions": held}}


def parse_job_template(text: str, source: str, name: str) -> JobTemplate:
    """The job template a TOML file's ``text`` holds; TemplateError naming ``source`` when it is not one."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TemplateError(f"{source}: not valid TOML ({exc}); fix the file") from None
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise TemplateError(f"{source}: unknown key {unknown[0]!r}; a job template has {', '.join(sorted(KEYS))}")
    job = table.get("job")
    if job not in JOB_FIELDS:
        raise TemplateError(f"{source}: job must be one of {', '.join(JOB_FIELDS)}, not {job!r}")
    texts = {key: table.get(key, "") for key in ("description", "system", "prompt", "example")}
    if not all(isinstance(value, str) for value in texts.values()) or not texts["prompt"]:
        raise TemplateError(f"{source}: description, system, prompt and example must be text, and prompt is needed")
    try:
        for part in ("system", "prompt"):
            check_placeholders(name, part, texts[part], JOB_FIELDS[job], meta=True)
        shown = CORRECTION_EXAMPLE_FIELDS if job == "correct" else EXAMPLE_FIELDS
        check_placeholders(name, "example", texts["example"], shown)
    except TemplateError as exc:
        raise TemplateError(f"{source}: {exc}") from None
    schema = _schema(table.get("schema"), job, source)
    numbers = _numbers(table, source)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return JobTemplate(
        name,
        job,
        texts["prompt"],
        schema,
        texts["system"],
        texts["description"],
        texts["example"],
        **numbers,  # type: ignore[arg-type]
        source=source,
        digest=digest,
    )


def _schema(schema: object, job: str, source: str) -> Mapping[str, object]:
    """The answer schema, checked to be an object schema requiring the keys the job reads."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise TemplateError(f'{source}: [schema] must be a JSON schema of an object (type = "object")')
    required = schema.get("required", [])
    lacking = [key for key in JOB_ANSWERS[job] if not isinstance(required, list) or key not in required]
    if lacking:
        raise TemplateError(f"{source}: a {job} job reads {lacking[0]!r} from the answer; list it in [schema] required")
    return schema


def _numbers(table: Mapping[str, object], source: str) -> dict[str, object]:
    """examples, max_tokens and temperature, checked."""
    found: dict[str, object] = {}
    for key, kind, low, high in (("examples", int, 0, 20), ("max_tokens", int, 1, 8192)):
        value = table.get(key)
        if value is not None:
            if type(value) is not kind or not low <= value <= high:
                raise TemplateError(f"{source}: {key} must be a whole number from {low} to {high}")
            found[key] = value
    temperature = table.get("temperature")
    if temperature is not None:
        if not isinstance(temperature, int | float) or isinstance(temperature, bool) or not 0 <= temperature <= 2:
            raise TemplateError(f"{source}: temperature must be a number from 0 to 2")
        found["temperature"] = float(temperature)
    return found


@functools.cache
def shipped_job_templates() -> dict[str, JobTemplate]:
    """The job templates shipped in the package (``prompt_templates/jobs/*.toml``), by name."""
    folder = _shipped_folder()
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)
    return {
        (name := f.name.removesuffix(".toml")): parse_job_template(f.read_text("utf-8"), f"(shipped) {f.name}", name)
        for f in files
    }


def _shipped_folder() -> Traversable:
    try:
        return resources.files("piqa_tui.prompt_templates").joinpath("jobs")
    except ModuleNotFoundError:  # an editable install made before the data package existed
        return Path(__file__).resolve().parents[3] / "prompt_templates" / "jobs"


def job_catalog(user_folder: Path | None = None) -> dict[str, JobTemplate]:
    """Every job template by name: shipped, then the user's folder's files (a user's file of a shipped name wins)."""
    catalog: dict[str, JobTemplate] = {}
    for listed in job_template_listing(user_folder):
        if listed.template is None:
            raise TemplateError(listed.error)
        catalog[listed.name] = listed.template
    return catalog


@dataclass(frozen=True)
class ListedJobTemplate:
    """One job template file as ``piqa-tui templates`` lists it: the template, or why it does not load."""

    name: str
    source: str
    template: JobTemplate | None = None
    error: str = ""  # one line: what is wrong with the file


def job_template_listing(user_folder: Path | None = None) -> list[ListedJobTemplate]:
    """Every job template ``job_catalog`` finds, by name (a user's file of a shipped name replaces it); a user's
    file that does not load is listed with its one-line error, where a job refuses to run with it."""
    listed = {name: ListedJobTemplate(name, t.source, t) for name, t in shipped_job_templates().items()}
    if user_folder is not None and user_folder.is_dir():
        for path in sorted(user_folder.glob("*.toml")):
            try:
                template = parse_job_template(read_template_file(path), str(path), path.stem)
            except TemplateError as exc:
                listed[path.stem] = ListedJobTemplate(path.stem, str(path), error=str(exc))
            else:
                listed[path.stem] = ListedJobTemplate(path.stem, str(path), template)
    return list(listed.values())


def find_job_template(name: str, job: str, catalog: Mapping[str, JobTemplate]) -> JobTemplate:
    """The template called ``name`` (or at path ``name``, a ``.toml`` file) for ``job``; TemplateError otherwise."""
    if name.endswith(".toml"):
        path = Path(name)
        template = parse_job_template(read_template_file(path), str(path), path.stem)
    elif name in catalog:
        template = catalog[name]
    else:
        fitting = ", ".join(sorted(n for n, t in catalog.items() if t.job == job)) or "none"
        raise TemplateError(f"unknown job template {name!r}: the {job} templates are {fitting}, or give a .toml path")
    if template.job != job:
        raise TemplateError(f"template {template.name!r} is a {template.job} job, not {job}; choose a {job} template")
    return template
