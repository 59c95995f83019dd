"""Which items the main screen's list shows: queues, a column's value, the search, and going to an item.

Keys (``keymap.MAIN_ACTIONS``): F filters by a queue or a column's value, /
searches prompts and solutions (substring, then fuzzy; off the UI thread),
n/N step through the matches, escape clears, : jumps to an id, v goes to the
next item you have not voted on. The rows come from ``state.listing``; the
host's list draws them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from piqa_tui.core.round.recorded import assigned_to
from piqa_tui.core.votes.blind import has_voted
from piqa_tui.tui.controllers.host import Background, Host
from piqa_tui.tui.dialogs.prompts import ChoiceDialog, TextPrompt
from piqa_tui.tui.state.listing import QUEUE_SECTIONS, QUEUES, Filters, filtered_positions
from piqa_tui.tui.state.search import SearchResult
from piqa_tui.tui.state.session import Session


class FilteringHost(Host, Background, Protocol):
    @property
    def rows(self) -> Sequence[int]:
        """The positions (in the project's items) the list shows, in order."""
        ...

    @property
    def cursor(self) -> int:
        """The row the cursor is on."""
        ...

    @property
    def position(self) -> int | None:
        """The position of the item under the cursor (None when the list is empty)."""
        ...

    def show_rows(self, rows: Sequence[int], keep: int | None, empty: str) -> None:
        """Show ``rows``, the cursor on position ``keep`` where it is shown; ``empty`` when there are none."""
        ...

    def go_to_row(self, index: int) -> None:
        """Move the cursor to row ``index`` (kept within the rows) and show that item."""
        ...

    def set_busy(self, text: str) -> None: ...

    def close_search(self) -> None:
        """Hide the search bar and empty it."""
        ...


class FilteringController:
    """Holds the filters and the search result, and turns them into the rows the list shows."""

    def __init__(self, session: Session, host: FilteringHost) -> None:
        self.session = session
        self.project = session.project
        self.host = host
        self.filters = Filters()
        self.search_result: SearchResult | None = None
        self._searches = 0  # the newest search: an older one finishing later is dropped

    def empty_message(self) -> str:
        """What an empty list says: a work queue left empty by the user's own votes is finished, not a filter
        that matches nothing."""
        if not self.filters.active:
            return "the dataset has no items"
        if self.filters == Filters(queue="assigned"):
            if not assigned_to(self.project):
                return "nothing is assigned to you in this round — esc shows every item"
            return (
                "queue assigned finished: every item assigned to you at validation has your vote — esc shows every item"
            )
        if self.filters == Filters(queue="unvoted"):
            return "queue unvoted finished: you voted on every item — esc shows every item"
        return f"no items match {self.filters.describe()} — esc clears"

    def set_filters(self, filters: Filters, keep: int | None = None) -> None:
        """Apply ``filters`` and redraw the list, keeping the cursor on ``keep`` (or the current item)."""
        self.filters = filters
        keep = self.host.position if keep is None else keep
        ranked = self.search_result.positions if (filters.search and self.search_result) else None
        if not filters.active:
            rows: Sequence[int] = range(len(self.project.items))
        else:
            rows = filtered_positions(self.session, filters, ranked)
        self.host.show_rows(rows, keep, self.empty_message())

    def refilter(self) -> None:
        """Recompute the rows after data changed (an item may have left or joined a queue)."""
        added = not self.filters.search and len(self.host.rows) != len(self.project.items)  # written or withdrawn
        if self.filters.queue != "all" or self.filters.column is not None or added:
            self.set_filters(self.filters)

    # --------------------------------------------------------------- going

    def go_to_position(self, position: int) -> None:
        """Put the cursor on an item, clearing filters that hide it."""
        rows = self.host.rows
        if position not in rows:
            if self.filters.active:
                self.host.notify(f"cleared the filters ({self.filters.describe()}) to show that item", timeout=4)
            self.set_filters(Filters(), keep=position)
            rows = self.host.rows
        self.host.go_to_row(rows.index(position))

    def jump_to_id(self) -> None:
        index = self.project.index

        def check(value: str) -> str | None:
            return None if value in index else f"no item with id '{value}'"

        def jump(value: str | None) -> None:
            if value:
                self.go_to_position(index[value])

        self.host.push_screen(TextPrompt("Go to id", "Type an item id exactly as in the file.", check=check), jump)

    def next_unvoted(self) -> None:
        rows, cursor = self.host.rows, self.host.cursor
        for step in range(1, len(rows) + 1):
            index = (cursor + step) % len(rows)
            if not has_voted(self.project, self.project.items[rows[index]].id):
                if index <= cursor:
                    self.host.notify("wrapped round to the top", timeout=2)
                self.host.go_to_row(index)
                return
        where = f" among {self.filters.describe()}" if self.filters.active else ""
        self.host.notify(f"you have voted on every item{where}", timeout=3)

    # -------------------------------------------------------------- search

    def search(self, query: str) -> None:
        """Search prompts and solutions off the UI thread; the list then shows the matches, best first."""
        self._searches += 1
        if not query.strip():
            self.clear_search()
            return
        self.host.set_busy("searching")
        number = self._searches
        self.host.launch(lambda: self._search(query, number), group="search", exclusive=True)

    def searched(self, query: str) -> bool:
        """Whether ``query`` is what the list shows the results of."""
        return self.search_result is not None and self.search_result.query == query

    def _search(self, query: str, number: int) -> None:
        """In a worker thread: build the index on first use, then search it."""
        result = self.session.ensure_search_index().search(query)
        self.host.deliver(self._search_finished, result, number)

    def _search_finished(self, result: SearchResult, number: int) -> None:
        if number != self._searches:
            return  # a newer search (or a clear) came meanwhile
        self.search_result = result
        self.host.set_busy("")
        filters = Filters(self.filters.queue, self.filters.column, self.filters.value, result.query)
        self.set_filters(filters, keep=result.positions[0] if result.positions else None)
        if result.positions:
            self.host.go_to_row(0)
        self.host.notify(f"“{result.query}”: {result.exact} containing it, {result.fuzzy} similar", timeout=3)

    def clear_search(self) -> None:
        self.host.close_search()
        self.search_result = None
        if self.filters.search:
            self.set_filters(Filters(self.filters.queue, self.filters.column, self.filters.value, ""))

    def to_match(self, step: int) -> None:
        """The next or previous match (the list shows only matches while a search is on); say so when none is."""
        if self.search_result is None:
            self.host.notify("no search — / searches prompts and solutions", timeout=2)
            return
        self.host.go_to_row(self.host.cursor + step)  # the list keeps the cursor on a row

    def clear(self, search_open: bool) -> None:
        """Drop the search and every filter (``search_open``: the search bar is open, maybe empty)."""
        if self.filters.active or search_open:
            self.search_result = None
            self.host.close_search()
            self.set_filters(Filters())

    # -------------------------------------------------------------- filter

    def choose_filter(self) -> None:
        """Ask for a queue (with its count) or a value of a categorical column."""
        choices: list[tuple[str | None, str, str]] = []
        for section, names in QUEUE_SECTIONS:
            choices.append((None, section, ""))
            for name in names:
                if name == "invalid" and not self.session.validation.complete:
                    count = "checking…"
                else:
                    count = str(len(filtered_positions(self.session, Filters(queue=name))))
                current = "  ← now" if self.filters.queue == name else ""
                choices.append((f"queue:{name}", f"{name} ({count})", QUEUES[name].help + current))
        for column, values in self.session.categorical_columns().items():
            choices.append((None, column, ""))
            for value, many in values:
                choices.append((f"column:{column}\x1f{value}", f"{value or '(empty)'} ({many})", ""))
        if self.filters.column is not None:
            choices.append((None, "", ""))
            choices.append(("column-clear", "any value of every column", "drop the column filter"))
        self.host.push_screen(
            ChoiceDialog(
                "Filter", "Show only items in a queue, or with one value of a column (type a name's start).", choices
            ),
            self._chosen,
        )

    def _chosen(self, key: str | None) -> None:
        if key is None:
            return
        f = self.filters
        if key.startswith("queue:"):
            self.set_filters(Filters(key[6:], f.column, f.value, f.search))
        elif key.startswith("column:"):
            column, _, value = key[7:].partition("\x1f")
            self.set_filters(Filters(f.queue, column, value, f.search))
        elif key == "column-clear":
            self.set_filters(Filters(f.queue, None, None, f.search))
