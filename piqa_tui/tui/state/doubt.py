"""The labels in doubt as the TUI shows them: the label audit's, worked out again only once the workspace log moved.

Scoring every label costs about a second on 100,000 items, so the "doubt" queue asks for it
(``labels_in_doubt``) and the item view only reads what the queue last worked out, if it still holds
(``known_doubt``): voting never waits for the audit.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from piqa_tui.core.errors import PiqaError
from piqa_tui.core.quality.audit import audit_labels
from piqa_tui.core.quality.doubt import Doubt
from piqa_tui.core.votes.decisions import policy_spec
from piqa_tui.core.votes.policy import Policy
from piqa_tui.core.workspace.project import Project

_worked_out: WeakKeyDictionary[Project, tuple[object, dict[str, Doubt]]] = WeakKeyDictionary()


def _stamp(project: Project, policy: Policy) -> object:
    """Changes with every event the log records (by this process or another) and with the policy."""
    return getattr(project, "_applied", None), policy_spec(policy)


def labels_in_doubt(project: Project, policy: Policy) -> dict[str, Doubt]:
    """The labels in doubt by item id, lowest score first (worked out again when the log has moved)."""
    stamp = _stamp(project, policy)
    found = _worked_out.get(project)
    if found is None or found[0] != stamp:
        from piqa_tui.settings.template_catalog import available_templates

        try:
            known = available_templates()
        except PiqaError:  # a bad user template file: the shipped templates still read their scores
            known = None
        found = _worked_out[project] = (stamp, audit_labels(project, policy, known, annotators=False).by_id)
    return found[1]


def known_doubt(project: Project, policy: Policy, item_id: str) -> Doubt | None:
    """The item's doubt as last worked out, if that still holds; never works it out."""
    found = _worked_out.get(project)
    return found[1].get(item_id) if found is not None and found[0] == _stamp(project, policy) else None
