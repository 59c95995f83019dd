"""A dataset card in Markdown, like the cards PIQA-style teams publish with a release."""

from __future__ import annotations

from piqa_tui.core.dataset.checks import check_items, summary
from piqa_tui.core.report.stats import categorical_columns, compute_stats
from piqa_tui.core.votes.decisions import agreement_summary, policy_spec
from piqa_tui.core.workspace.project import Project
from piqa_tui.render.agreement import breakdown_markdown, report_markdown
from piqa_tui.render.markdown import markdown_table


def dataset_card(project: Project) -> str:
    """Statistics, validation, annotation and agreement of the current state, as Markdown."""
    dataset = project.dataset
    stats = compute_stats(project.items, dataset.meta_columns)
    problems = check_items(project.items, dataset.raw_ids)
    lines = [f"# Dataset card: {dataset.name}", ""]
    lines += ["## Summary", ""]
    lines += markdown_table(
        ["field", "value"],
        [
            ["items", str(stats.items)],
            ["layout", f"{dataset.layout.name} ({dataset.format})"],
            ["solutions per item", ", ".join(f"{k}: {v}" for k, v in stats.solutions_per_item.items())],
            ["scripts", ", ".join(f"{k} ({v})" for k, v in stats.scripts.items()) or "—"],
            ["mean words: prompt / solution", f"{stats.mean_prompt_words:.1f} / {stats.mean_solution_words:.1f}"],
            ["items of 25+ words", f"{stats.share_over_25_words:.1%}"],
            ["edited in this workspace", str(len(project.state.edited))],
        ],
    )
    lines += ["", "## Labels", ""]
    lines += markdown_table(["gold", "items", "share"], [[k, str(v), f"{v / max(stats.items, 1):.1%}"] for k, v in stats.gold_counts().items()])
    for column, counts in stats.categories.items():
        lines += ["", f"## {column}", ""]
        lines += markdown_table([column, "items"], [[k or "(empty)", str(v)] for k, v in counts.items()])
    lines += ["", "## Validation", ""]
    counts = summary(problems)
    lines += markdown_table(["rule", "items"], [[k, str(v)] for k, v in counts.items()]) if counts else ["No problems found."]
    if any(project.state.votes.values()):
        lines += ["", "## Annotation", ""] + _annotation(project, categorical_columns(project.items, dataset.meta_columns))
    return "\n".join(lines) + "\n"


def _annotation(project: Project, by: list[str]) -> list[str]:
    """The decision policy, items per status, and the agreement tables."""
    found = agreement_summary(project, by)
    statuses = ", ".join(f"{k}: {v}" for k, v in found.statuses.items())
    lines = [f"Decision policy: {policy_spec(found.policy)}. {statuses}.", "", report_markdown(found.report)]
    for breakdown in found.breakdowns.values():
        lines += ["", breakdown_markdown(breakdown)]
    return lines
