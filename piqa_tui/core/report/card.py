"""A dataset card in Markdown, like the cards PIQA-style teams publish with a release."""

from __future__ import annotations

from piqa_tui.core.dataset.checks import check_items, summary
from piqa_tui.core.report.stats import categorical_columns, compute_stats
from piqa_tui.core.workspace.project import Project


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in rows)]


def dataset_card(project: Project) -> str:
    """Statistics, validation, annotation and agreement of the current state, as Markdown."""
    from piqa_tui.core.votes.decisions import (
        decisions,
        policy_spec,
        project_agreement,
        project_policy,
        status_counts,
    )

    dataset = project.dataset
    stats = compute_stats(project.items, dataset.meta_columns)
    problems = check_items(project.items, dataset.raw_ids)
    lines = [f"# Dataset card: {dataset.name}", ""]
    lines += ["## Summary", ""]
    lines += _table(
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
    lines += _table(["label", "items", "share"], [[k, str(v), f"{v / max(stats.items, 1):.1%}"] for k, v in stats.labels.items()])
    for column, counts in stats.categories.items():
        lines += ["", f"## {column}", ""]
        lines += _table([column, "items"], [[k or "(empty)", str(v)] for k, v in counts.items()])
    lines += ["", "## Validation", ""]
    counts = summary(problems)
    lines += _table(["rule", "items"], [[k, str(v)] for k, v in counts.items()]) if counts else ["No problems found."]
    if any(project.state.votes.values()):
        report, breakdowns = project_agreement(project, categorical_columns(project.items, dataset.meta_columns))
        lines += ["", "## Annotation", ""]
        policy = project_policy(project)
        statuses = status_counts(decisions(project, policy))
        lines += [f"Decision policy: {policy_spec(policy)}. " + ", ".join(f"{k}: {v}" for k, v in statuses.items()) + ".", ""]
        lines += [report.to_markdown()]
        for breakdown in breakdowns.values():
            lines += ["", breakdown.to_markdown()]
    return "\n".join(lines) + "\n"
