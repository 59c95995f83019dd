"""Every user action of the TUI, by id: its default keys, footer label and help.

The ids are the names a user remaps in the config file::

    [keys]
    next_item = "j,down,ctrl+n"
    undo = "ctrl+z"

and the ids of Textual ``Binding`` objects, so ``App.set_keymap`` applies a
remapping everywhere, the footer and the help screen included. The command
palette lists the same actions (``commands.py``).

Voting, flagging and review (issue 4) have their own table, ``VOTE_ACTIONS``:
keys 1-4 vote, 0 or s votes unsure, backspace withdraws, f flags, a shows
agreement, A adjudicates.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a user can do, bound to keys and listed in the palette."""

    id: str
    keys: str  # default keys, comma separated, in Textual's key names
    action: str  # the Textual action it runs (on the screen that owns it)
    label: str  # short footer label
    help: str  # one line for the palette and the help screen
    show: bool = False  # shown in the footer
    key_display: str | None = None
    palette: bool = True  # listed in the command palette


# Actions of the main (browse and edit) screen. Order is the footer's order.
MAIN_ACTIONS: tuple[Action, ...] = (
    Action("next_item", "j,down", "next_item", "next", "Move to the next item", key_display="j/↓"),
    Action("prev_item", "k,up", "prev_item", "prev", "Move to the previous item", key_display="k/↑"),
    Action("page_down", "pagedown,ctrl+d", "page_down", "page down", "Move one screen of items down"),
    Action("page_up", "pageup,ctrl+u", "page_up", "page up", "Move one screen of items up"),
    Action("first_item", "g,home", "first_item", "first", "Go to the first item"),
    Action("last_item", "G,end", "last_item", "last", "Go to the last item"),
    Action("jump_to_id", "colon", "jump_to_id", "id", "Jump to an item by its id", key_display=":"),
    Action("search", "slash", "search", "search", "Search prompts and solutions (substring, then fuzzy)", show=True, key_display="/"),
    Action("search_next", "n", "search_next", "next match", "Next search result"),
    Action("search_prev", "N", "search_prev", "prev match", "Previous search result"),
    Action("filter", "F", "filter", "filter", "Filter by queue (unvoted, flagged, edited, invalid) or by a column's value", show=True),
    Action("clear_filter", "escape", "clear_filter", "clear filter", "Clear the search and every filter", palette=True),
    Action("next_field", "tab", "next_field", "field", "Select the next field of the item (prompt, solutions, label, note)", key_display="tab"),
    Action("prev_field", "shift+tab", "prev_field", "prev field", "Select the previous field of the item"),
    Action("edit_field", "e,enter", "edit_field", "edit", "Edit the selected field in place", show=True),
    Action("external_editor", "E", "external_editor", "$EDITOR", "Open the selected field in $EDITOR"),
    Action("edit_label", "l", "edit_label", "label", "Set the gold label"),
    Action("edit_note", "c", "edit_note", "note", "Write a note (comment) on the item"),
    Action("swap_solutions", "x", "swap_solutions", "swap", "Swap the selected solution with the next one, and the label with them"),
    Action("copy_field", "y", "copy_field", "copy", "Copy the selected field's stored (logical) text"),
    Action("undo", "u,ctrl+z", "undo", "undo", "Undo your last edit (works after a restart)", show=True, key_display="u"),
    Action("redo", "U,ctrl+y", "redo", "redo", "Redo the edit you undid", key_display="U"),
    Action("save", "ctrl+s", "save", "save", "Save the dataset file (atomic; refuses if the file changed on disk)", show=True),
    Action("export", "X", "export", "export", "Export the current state to another file (.tsv .csv .jsonl .parquet)"),
    Action("cycle_bidi", "b", "cycle_bidi", "bidi", "Cycle the right-to-left display mode (app, terminal, off)"),
    Action("focus_list", "ctrl+l", "focus_list", "list", "Move the focus back to the item list"),
    Action("duplicates", "D", "duplicates", "duplicates", "Find near-duplicates and leakage (against another file), and resolve each cluster"),
)

# Actions that work on every screen.
APP_ACTIONS: tuple[Action, ...] = (
    Action("help", "question_mark,f1", "help", "keys", "Show every key and what it does", show=True, key_display="?"),
    Action("command_palette", "ctrl+p", "command_palette", "commands", "Open the command palette (every action by name)", key_display="^p"),
    Action("check_terminal", "", "check_terminal", "check terminal", "Show reference strings to check how this terminal draws text widths"),
    Action("quit", "q", "quit", "quit", "Quit (everything is already recorded in the workspace; ctrl+q works everywhere)", show=True),
)

# Keys of the in-place field editor (a focused editor shows these in the footer).
EDITOR_ACTIONS: tuple[Action, ...] = (
    Action("editor_commit", "enter", "commit", "keep", "Keep the edit", show=True),
    Action("editor_cancel", "escape", "cancel", "cancel", "Drop the edit", show=True),
    Action("editor_next_field", "tab", "commit_next", "keep+next", "Keep the edit and edit the next field", show=True),
    Action("editor_prev_field", "shift+tab", "commit_prev", "keep+prev", "Keep the edit and edit the previous field"),
    Action("editor_external", "ctrl+e", "external", "$EDITOR", "Continue this edit in $EDITOR", show=True),
)

# Voting and review on the main screen (issue 4): a vote moves on to the next item.
VOTE_ACTIONS: tuple[Action, ...] = (
    Action("vote_1", "1", "vote(0)", "vote", "Vote for solution 1 and move to the next item", show=True, key_display="1-4"),
    Action("vote_2", "2", "vote(1)", "vote 2", "Vote for solution 2 and move to the next item"),
    Action("vote_3", "3", "vote(2)", "vote 3", "Vote for solution 3 (items with 3 or 4 solutions)"),
    Action("vote_4", "4", "vote(3)", "vote 4", "Vote for solution 4 (items with 4 solutions)"),
    Action("vote_unsure", "0,s", "vote_unsure", "unsure", "Vote unsure (skip) and move to the next item"),
    Action("withdraw_vote", "backspace,delete", "withdraw_vote", "withdraw", "Withdraw your vote on this item (pressing another number changes it; the same one again keeps it)"),
    Action("flag", "f", "flag", "flag", "Flag the item: reason codes (ungrammatical, culturally wrong, ...) and a note"),
    Action("agreement", "a", "agreement", "agreement", "Show agreement (Fleiss' κ, Cohen's κ, Krippendorff's α), status counts and the policy"),
    Action("adjudicate", "A", "adjudicate", "adjudicate", "Adjudicate disagreements: set their final label with a reason (reviewer mode)"),
    Action("set_policy", "", "set_policy", "policy", "Set the decision policy (majority 2 of 3, unanimity of 4, ...)"),
)

# The duplicates screen (issue 5): walk the clusters, choose a member, resolve.
DUPLICATE_ACTIONS: tuple[Action, ...] = (
    Action("dup_next", "j,down", "next_cluster", "next", "Move to the next duplicate cluster", key_display="j/↓"),
    Action("dup_prev", "k,up", "prev_cluster", "prev", "Move to the previous duplicate cluster", key_display="k/↑"),
    Action("dup_next_member", "l,right,tab", "next_member", "choose", "Choose the next member (the one keep and merge act on)", show=True, key_display="←/→"),
    Action("dup_prev_member", "h,left,shift+tab", "prev_member", "choose prev", "Choose the previous member"),
    Action("dup_keep", "enter", "keep", "keep", "Keep the chosen member; flag the others as duplicates (their votes are kept)", show=True),
    Action("dup_distinct", "d", "distinct", "distinct", "Mark the cluster as distinct items (never shown again)", show=True),
    Action("dup_merge", "m", "merge_notes", "merge", "Merge the members' notes into the chosen member's note", show=True),
    Action("dup_semantic", "s", "toggle_semantic", "semantic", "Turn the semantic (sentence-embedding) signal on or off, and scan again", show=True),
    Action("dup_against", "a", "against", "leakage", "Check leakage against another file (e.g. test against train)", show=True),
    Action("dup_rescan", "r", "rescan", "rescan", "Scan for duplicates again"),
    Action("dup_show_item", "o", "show_item", "open", "Show the chosen member in the item list"),
    Action("dup_scroll_down", "pagedown,ctrl+d", "scroll_members(1)", "scroll", "Scroll the members down"),
    Action("dup_scroll_up", "pageup,ctrl+u", "scroll_members(-1)", "scroll up", "Scroll the members up"),
    Action("dup_close", "escape", "close", "back", "Cancel the running scan, or go back to the item list", show=True, key_display="esc"),
)

# Model scoring on the main screen (issue 6). Escape cancels a running run, else it clears the filters.
SCORING_ACTIONS: tuple[Action, ...] = (
    Action("score_item", "m", "score_item", "score", "Score the current item with the model (each solution's log-likelihood, its choice, the margin)"),
    Action("score_all", "M", "score_all", "score all", "Score all items with the model in the background (choose the template or the solution-only baseline; a cancelled run resumes)"),
    Action("model_results", "R", "model_results", "model results", "Show the model's acc and acc_norm, overall and by column, and the items by margin"),
    Action("cancel_scoring", "escape", "cancel_scoring", "cancel scoring", "Cancel the running model scoring (what is scored stays cached)"),
)

# The model results screen (R).
MODEL_RESULTS_ACTIONS: tuple[Action, ...] = (
    Action("results_open", "enter", "open_item", "open", "Show the chosen item in the item list", show=True),
    Action("results_order", "o", "toggle_order", "order", "Sort the items by margin the other way (lowest or highest first)", show=True),
    Action("results_column", "c", "next_column", "column", "Break the accuracy down by the next categorical column", show=True),
    Action("results_close", "escape", "close", "back", "Go back to the item list", show=True, key_display="esc"),
)

ALL_ACTIONS: tuple[Action, ...] = (
    MAIN_ACTIONS + VOTE_ACTIONS + APP_ACTIONS + EDITOR_ACTIONS + DUPLICATE_ACTIONS + SCORING_ACTIONS + MODEL_RESULTS_ACTIONS
)


def bindings(actions: tuple[Action, ...]) -> list[Binding]:
    """Textual bindings for ``actions``, each with its action id as binding id (for the keymap)."""
    return [
        Binding(a.keys, a.action, a.label, show=a.show, key_display=a.key_display, id=a.id)
        for a in actions
        if a.keys
    ]


def action_names(actions: tuple[Action, ...]) -> frozenset[str]:
    """The action names without arguments (``vote(0)`` is ``vote``), as ``check_action`` sees them."""
    return frozenset(a.action.split("(")[0] for a in actions)


def unlisted(*action_ids: str) -> list[Binding]:
    """App-wide actions bound again on a screen whose own keys fill the footer at 80 columns:
    same keys, same id (so remapping still applies), no footer entry."""
    return [
        Binding(a.keys, f"app.{a.action}", a.label, show=False, key_display=a.key_display, id=a.id)
        for a in APP_ACTIONS
        if a.id in action_ids
    ]


def validate_keymap(keys: dict[str, str]) -> list[str]:
    """Problems with a config ``[keys]`` table: unknown action ids or values that are not strings."""
    known = {a.id for a in ALL_ACTIONS}
    problems = []
    for action_id, value in keys.items():
        if action_id not in known:
            problems.append(f"[keys] {action_id}: no such action (see piqa-tui's help screen for the ids)")
        elif not isinstance(value, str) or not value.strip():
            problems.append(f"[keys] {action_id}: give the keys as a string, e.g. \"j,down\"")
    return problems
