"""Who is "annotator N" in a release: one numbering for the card (``card --pseudonyms``) and the release's
person columns (``export --pseudonyms``), so a reader can match the two without learning anyone's name.

Voters come first in the order of the agreement tables (their names sorted, as the vote table codes them),
then editors who did not vote in the order they first edited, then authors who did neither in file order —
the card's order (``render.card_creation.pseudonymise``), extended to authors. The workspace keeps who is
who: the numbering is recomputed from it, the same on every copy that holds the same record.
"""

from __future__ import annotations

from collections.abc import Iterable

from piqa_tui.core.report.curation import curation_record
from piqa_tui.core.votes.decisions import vote_table
from piqa_tui.core.workspace.project import Project


def pseudonyms(project: Project, authors: Iterable[str] = ()) -> dict[str, str]:
    """Each person's pseudonym, "annotator 1", "annotator 2", … (see the module docstring)."""
    people = list(dict.fromkeys([*vote_table(project).annotators, *curation_record(project).editors]))
    people += [name for name in dict.fromkeys(authors) if name and name not in people]
    return {person: f"annotator {k}" for k, person in enumerate(people, 1)}


def person_columns(project: Project, never: Iterable[str]) -> list[str]:
    """The dataset's columns that name a person: the round's ``never`` columns (an item's author), and
    ``author`` where the dataset has one."""
    have = project.dataset.meta_columns
    return [column for column in dict.fromkeys([*never, "author"]) if column in have]
