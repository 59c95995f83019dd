"""Every user action of the TUI, by id: its default keys, footer label and help.

The ids are the names a user remaps in the config file::

    [keys]
    next_item = "j,down,ctrl+n"
    undo = "ctrl+z"

and the ids of Textual ``Binding`` objects, so ``App.set_keymap`` applies a
remapping everywhere, the footer and the help screen included. Every screen,
dialog and widget takes its bindings from a table here (no ``Binding`` is
written anywhere else), and a screen names its table as ``ACTIONS``, which the
command palette lists (``commands.py``).

Voting, flagging and review have their own table, ``VOTE_ACTIONS``:
keys 1-4 vote, 0 or s votes unsure, backspace withdraws, f flags, a shows
agreement, A adjudicates.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType

from piqa_tui.core.votes.flags import FLAG_REASONS


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
    Action(
        "next_unvoted",
        "v",
        "next_unvoted",
        "next unvoted",
        "Go to the next item you have not voted on (after this one, wrapping round)",
    ),
    Action(
        "search",
        "slash",
        "search",
        "search",
        "Search prompts and solutions (substring, then fuzzy)",
        show=True,
        key_display="/",
    ),
    Action("search_next", "n", "search_next", "next match", "Next search result"),
    Action("search_prev", "N", "search_prev", "prev match", "Previous search result"),
    Action(
        "filter",
        "F",
        "filter",
        "filter",
        "Filter by queue (unvoted, flagged, edited, invalid) or by a column's value",
        show=True,
    ),
    Action("clear_filter", "escape", "clear_filter", "clear filter", "Clear the search and every filter", palette=True),
    Action(
        "next_field",
        "tab",
        "next_field",
        "field",
        "Select the next field of the item (prompt, solutions, label, note)",
        key_display="tab",
    ),
    Action("prev_field", "shift+tab", "prev_field", "prev field", "Select the previous field of the item"),
    Action("edit_field", "e,enter", "edit_field", "edit", "Edit the selected field in place", show=True),
    Action("external_editor", "E", "external_editor", "$EDITOR", "Open the selected field in $EDITOR"),
    Action("edit_label", "l", "edit_label", "label", "Set the gold label"),
    Action("edit_note", "c", "edit_note", "note", "Write a note (comment) on the item"),
    Action(
        "swap_solutions",
        "x",
        "swap_solutions",
        "swap",
        "Swap the selected solution with the next one, and the label with them",
    ),
    Action("copy_field", "y", "copy_field", "copy", "Copy the selected field's stored (logical) text"),
    Action(
        "undo",
        "u,ctrl+z",
        "undo",
        "undo",
        "Undo your last action: edit, vote, flag, note or adjudication (works after a restart)",
        show=True,
        key_display="u",
    ),
    Action("redo", "U,ctrl+y", "redo", "redo", "Redo the edit you undid", key_display="U"),
    Action(
        "new_item",
        "I",
        "new_item",
        "new item",
        "Write a new item (a draft): the goal, 2-4 solutions and the gold one, with the checks live",
    ),
    Action(
        "next_stage",
        "T",
        "next_stage",
        "stage",
        "Move the item to its next stage: draft, review, validation, done (u undoes)",
    ),
    Action(
        "give_item",
        "V",
        "give_item",
        "give",
        "Give the item to one validator by hand, as assign --item ID --to NAME (reviewer mode; u undoes)",
    ),
    Action(
        "keep_suggestion",
        "K",
        "keep_suggestion",
        "keep suggestion",
        "Keep the model's pending suggestion for the item's metadata column (it becomes an ordinary edit)",
    ),
    Action(
        "reject_suggestion",
        "Z",
        "reject_suggestion",
        "reject suggestion",
        "Turn down the model's pending suggestion for the item's metadata column",
    ),
    Action(
        "review_suggestions",
        "S",
        "review_suggestions",
        "review suggestions",
        "Review the model's pending suggestions for the item's text (a batch job's, a colleague's), change by change",
    ),
    Action(
        "resolve_conflict",
        "C",
        "resolve_conflict",
        "resolve",
        "Resolve a field changed on two machines before a merge: keep one version, or merge by hand",
    ),
    Action(
        "save",
        "ctrl+s",
        "save",
        "save",
        "Save the dataset file (atomic; refuses if the file changed on disk)",
        show=True,
    ),
    Action("export", "X", "export", "export", "Export the current state to another file (.tsv .csv .jsonl .parquet)"),
    Action("cycle_bidi", "b", "cycle_bidi", "bidi", "Cycle the right-to-left display mode (app, terminal, off)"),
    Action(
        "cycle_direction",
        "d",
        "cycle_direction",
        "direction",
        "Cycle the selected field's paragraph direction: auto (detected), right-to-left, left-to-right (kept in the workspace)",
    ),
    Action(
        "cycle_dataset_direction",
        "",
        "cycle_dataset_direction",
        "dataset direction",
        "Cycle the whole dataset's paragraph direction: auto, right-to-left, left-to-right (columns set with d keep theirs)",
    ),
    Action("focus_list", "ctrl+l", "focus_list", "list", "Move the focus back to the item list"),
    Action(
        "duplicates",
        "D",
        "duplicates",
        "duplicates",
        "Find near-duplicates and leakage (against another file), and resolve each cluster",
    ),
)

# Actions that work on every screen.
APP_ACTIONS: tuple[Action, ...] = (
    Action("help", "question_mark,f1", "help", "keys", "Show every key and what it does", show=True, key_display="?"),
    Action(
        "command_palette",
        "ctrl+p",
        "command_palette",
        "commands",
        "Open the command palette (every action by name)",
        key_display="^p",
    ),
    Action(
        "check_terminal",
        "",
        "check_terminal",
        "check terminal",
        "Show reference strings to check how this terminal draws text widths",
    ),
    Action(
        "health",
        "H",
        "health",
        "health",
        "Show the dataset's health before release: annotation artifacts (length, label position, cue words, the "
        "solution-only baseline) and the items a shortcut answers",
    ),
    Action(
        "guidelines",
        "W",
        "guidelines",
        "guidelines",
        "Show the round's guidelines (the version in force), and ask the lead about the item you are on",
    ),
    Action(
        "progress",
        "P",
        "progress",
        "progress",
        "Show how far the round is: a bar per annotator (yours alone unless --reviewer) and per group",
    ),
    Action(
        "sync",
        "Y",
        "sync",
        "sync",
        "Sync with the team through the dataset's git repository: send this machine's work, take theirs (as "
        "piqa-tui sync does)",
    ),
    Action(
        "quit",
        "q",
        "quit",
        "quit",
        "Quit (everything is already recorded in the workspace; ctrl+q works everywhere)",
        show=True,
    ),
)

# Keys of the in-place field editor (a focused editor shows these in the footer).
EDITOR_ACTIONS: tuple[Action, ...] = (
    Action("editor_commit", "enter", "commit", "keep", "Keep the edit", show=True),
    Action("editor_cancel", "escape", "cancel", "cancel", "Drop the edit", show=True),
    Action("editor_next_field", "tab", "commit_next", "keep+next", "Keep the edit and edit the next field", show=True),
    Action("editor_prev_field", "shift+tab", "commit_prev", "keep+prev", "Keep the edit and edit the previous field"),
    Action("editor_external", "ctrl+e", "external", "$EDITOR", "Continue this edit in $EDITOR", show=True),
    # Outside app mode the arrows follow reading order and the footer says so; in app mode the editor's
    # check_action turns these two off and the keys fall through to editor_left/right (on screen).
    Action(
        "editor_reading_left",
        "left",
        "reading_left",
        "move in reading order",
        "The arrows move in reading (logical) order: the terminal draws the line (--bidi terminal/off)",
        show=True,
        key_display="←→",
    ),
    Action(
        "editor_reading_right",
        "right",
        "reading_right",
        "move in reading order",
        "The arrows move in reading (logical) order: the terminal draws the line (--bidi terminal/off)",
    ),
    Action(
        "editor_left",
        "left",
        "cursor_left",
        "left",
        "Move the cursor one grapheme cluster left on screen (--bidi app), else back in reading order",
    ),
    Action(
        "editor_right",
        "right",
        "cursor_right",
        "right",
        "Move the cursor one grapheme cluster right on screen (--bidi app), else on in reading order",
    ),
    Action("editor_up", "up", "cursor_up", "up", "Move the cursor one line up"),
    Action("editor_down", "down", "cursor_down", "down", "Move the cursor one line down"),
    Action("editor_home", "home,ctrl+a", "home", "home", "Move the cursor to the start of the line"),
    Action("editor_end", "end", "end", "end", "Move the cursor to the end of the line"),
    Action("editor_word_left", "ctrl+left", "word_left", "word left", "Move the cursor one word back"),
    Action("editor_word_right", "ctrl+right", "word_right", "word right", "Move the cursor one word on"),
    Action(
        "editor_del_left", "backspace,ctrl+h", "delete_left", "delete left", "Delete the character before the cursor"
    ),
    Action(
        "editor_del_right", "delete,ctrl+d", "delete_right", "delete right", "Delete the character after the cursor"
    ),
    Action("editor_del_word", "ctrl+w", "delete_word_left", "delete word", "Delete the word before the cursor"),
    Action("editor_del_end", "ctrl+k", "delete_to_end", "delete to end", "Delete to the end of the line"),
    Action("editor_del_start", "ctrl+u", "delete_to_start", "delete to start", "Delete to the start of the line"),
)

# Choosing the gold label in place (l, or e on the label).
LABEL_ACTIONS: tuple[Action, ...] = (
    Action("label_prev", "left,h", "move(-1)", "←", "Choose the previous solution as the gold label"),
    Action("label_next", "right,l", "move(1)", "→", "Choose the next solution as the gold label"),
    Action("label_commit", "enter", "commit", "keep", "Keep the chosen gold label", show=True),
    Action("label_cancel", "escape", "cancel", "cancel", "Leave the gold label as it was", show=True),
    Action("label_none", "backspace,delete,0", "none", "no label", "Set no gold label", show=True),
)

# Voting and review on the main screen: a vote moves on to the next item.
VOTE_ACTIONS: tuple[Action, ...] = (
    Action(
        "vote_1", "1", "vote(0)", "vote", "Vote for solution 1 and move to the next item", show=True, key_display="1-4"
    ),
    Action("vote_2", "2", "vote(1)", "vote 2", "Vote for solution 2 and move to the next item"),
    Action("vote_3", "3", "vote(2)", "vote 3", "Vote for solution 3 (items with 3 or 4 solutions)"),
    Action("vote_4", "4", "vote(3)", "vote 4", "Vote for solution 4 (items with 4 solutions)"),
    Action("vote_unsure", "0,s", "vote_unsure", "unsure", "Vote unsure (skip) and move to the next item"),
    Action(
        "withdraw_vote",
        "backspace,delete",
        "withdraw_vote",
        "withdraw",
        "Withdraw your vote on this item (pressing another number changes it; the same one again keeps it)",
    ),
    Action(
        "flag", "f", "flag", "flag", "Flag the item: reason codes (ungrammatical, culturally wrong, ...) and a note"
    ),
    Action(
        "agreement",
        "a",
        "agreement",
        "agreement",
        "Show agreement (Fleiss' κ, Cohen's κ, Krippendorff's α), status counts and the policy",
    ),
    Action(
        "adjudicate",
        "A",
        "adjudicate",
        "adjudicate",
        "Adjudicate disagreements: set their final label with a reason (reviewer mode)",
    ),
    Action("set_policy", "", "set_policy", "policy", "Set the decision policy (majority 2 of 3, unanimity of 4, ...)"),
    Action(
        "questions",
        "Q",
        "questions",
        "questions",
        "Answer the round's extra questions on this item (y/n, an option's number, a number or short text)",
    ),
)

# The duplicates screen: walk the clusters, choose a member, resolve.
DUPLICATE_ACTIONS: tuple[Action, ...] = (
    Action("dup_next", "j,down", "next_cluster", "next", "Move to the next duplicate cluster", key_display="j/↓"),
    Action("dup_prev", "k,up", "prev_cluster", "prev", "Move to the previous duplicate cluster", key_display="k/↑"),
    Action(
        "dup_next_member",
        "l,right,tab",
        "next_member",
        "choose",
        "Choose the next member (the one keep and merge act on)",
        show=True,
        key_display="←/→",
    ),
    Action("dup_prev_member", "h,left,shift+tab", "prev_member", "choose prev", "Choose the previous member"),
    Action(
        "dup_keep",
        "enter",
        "keep",
        "keep",
        "Keep the chosen member; flag the others as duplicates (their votes are kept)",
        show=True,
    ),
    Action(
        "dup_distinct", "d", "distinct", "distinct", "Mark the cluster as distinct items (never shown again)", show=True
    ),
    Action(
        "dup_merge", "m", "merge_notes", "merge", "Merge the members' notes into the chosen member's note", show=True
    ),
    Action(
        "dup_semantic",
        "s",
        "toggle_semantic",
        "semantic",
        "Turn the semantic (sentence-embedding) signal on or off, and scan again",
        show=True,
    ),
    Action(
        "dup_against",
        "a",
        "against",
        "leakage",
        "Check leakage against another file (e.g. test against train)",
        show=True,
    ),
    Action("dup_rescan", "r", "rescan", "rescan", "Scan for duplicates again"),
    Action("dup_show_item", "o", "show_item", "open", "Show the chosen member in the item list"),
    Action("dup_scroll_down", "pagedown,ctrl+d", "scroll_members(1)", "scroll", "Scroll the members down"),
    Action("dup_scroll_up", "pageup,ctrl+u", "scroll_members(-1)", "scroll up", "Scroll the members up"),
    Action(
        "dup_close",
        "escape",
        "close",
        "back",
        "Cancel the running scan, or go back to the item list",
        show=True,
        key_display="esc",
    ),
)

# Model scoring on the main screen. Escape cancels a running run, else it clears the filters.
SCORING_ACTIONS: tuple[Action, ...] = (
    Action(
        "score_item",
        "m",
        "score_item",
        "score",
        "Score the current item with the model (each solution's log-likelihood, its choice, the margin)",
    ),
    Action(
        "score_all",
        "M",
        "score_all",
        "score all",
        "Score all items with the model in the background (choose the template or the solution-only baseline; a cancelled run resumes)",
    ),
    Action(
        "model_results",
        "R",
        "model_results",
        "model results",
        "Show the model's acc and acc_norm, overall and by column, and the items by margin",
    ),
    Action(
        "cancel_scoring",
        "escape",
        "cancel_scoring",
        "cancel scoring",
        "Cancel the running model scoring (what is scored stays cached)",
    ),
)

# The model as a writing assistant, on the current item (docs/generation.md): the suggestion opens a dialog
# where the tokens appear as they come and each word-level change is taken or left.
SUGGEST_ACTIONS: tuple[Action, ...] = (
    Action(
        "suggest_correction",
        "w",
        "suggest_correction",
        "suggest fix",
        "Ask the writing model for a language and spelling correction of the item, change by change",
    ),
    Action(
        "suggest_distractor",
        "z",
        "suggest_distractor",
        "suggest wrong",
        "Ask the writing model for a wrong solution one or two words from the right one",
    ),
    Action(
        "suggest_translation",
        "t",
        "suggest_translation",
        "suggest translation",
        "Ask the writing model for the item's empty translation column",
    ),
)

# The suggestion dialog (w, z, t): each change of the model's text is taken or left; nothing is written
# until enter.
SUGGESTION_ACTIONS: tuple[Action, ...] = (
    Action("change_accept", "a,y", "accept_change", "take", "Take the selected change", show=True),
    Action("change_reject", "r,n", "reject_change", "leave", "Leave the selected change out", show=True),
    Action("change_next", "j,down,tab", "move_change(1)", "next", "Select the next change", key_display="j/↓"),
    Action("change_prev", "k,up,shift+tab", "move_change(-1)", "prev", "Select the previous change"),
    Action("change_accept_all", "A", "accept_all", "take all", "Take every change"),
    Action("suggestion_apply", "enter", "apply", "apply", "Write the changes taken (as edits) and close", show=True),
    Action(
        "suggestion_cancel",
        "escape",
        "cancel",
        "cancel",
        "Stop the model, or close without writing anything",
        show=True,
    ),
)

# The model results screen (R).
MODEL_RESULTS_ACTIONS: tuple[Action, ...] = (
    Action("results_open", "enter", "open_item", "open", "Show the chosen item in the item list", show=True),
    Action(
        "results_order",
        "o",
        "toggle_order",
        "order",
        "Sort the items by margin the other way (lowest or highest first)",
        show=True,
    ),
    Action(
        "results_column",
        "c",
        "next_column",
        "column",
        "Break the accuracy down by the next categorical column",
        show=True,
    ),
    Action(
        "results_metric",
        "m",
        "next_metric",
        "metric",
        "Show the next accuracy (acc, acc_norm, acc_bytes) in the table of every model",
        show=True,
    ),
    Action("results_close", "escape", "close", "back", "Go back to the item list", show=True, key_display="esc"),
)

# The agreement screen (a).
AGREEMENT_ACTIONS: tuple[Action, ...] = (
    Action("agree_close", "escape,q,a", "close", "back", "Go back to the item list", show=True),
    Action("agree_recompute", "r", "recompute", "recompute", "Compute the agreement again", show=True),
    Action(
        "agree_policy",
        "p",
        "policy",
        "policy",
        "Set the decision policy (majority 2 of 3, unanimity of 4, ...)",
        show=True,
    ),
    Action("agree_copy", "y", "copy_markdown", "copy Markdown", "Copy the agreement tables as Markdown", show=True),
    Action(
        "agree_write", "w", "write_markdown", "write .md", "Write the agreement tables to a Markdown file", show=True
    ),
)

# The dataset health screen (H).
HEALTH_ACTIONS: tuple[Action, ...] = (
    Action("health_close", "escape,q,H", "close", "back", "Go back to the item list", show=True),
    Action("health_recompute", "r", "recompute", "recompute", "Measure everything again", show=True),
    Action("health_copy", "y", "copy_text", "copy", "Copy the reports as plain text", show=True),
)

# The guidelines screen (W).
GUIDELINES_ACTIONS: tuple[Action, ...] = (
    Action("guide_close", "escape,q,W", "close", "back", "Go back to the item list", show=True),
    Action("guide_ask", "a", "ask", "ask the lead", "Ask the lead a guideline question about the item", show=True),
    Action("guide_reply", "r", "reply", "answer", "Answer the open question on the item (reviewer mode)", show=True),
)

# The progress screen (P).
PROGRESS_ACTIONS: tuple[Action, ...] = (
    Action("progress_close", "escape,q,P", "close", "back", "Go back to the item list", show=True),
    Action("progress_recompute", "r", "recompute", "recompute", "Count everything again", show=True),
)

# The adjudication screen (A, reviewer mode).
ADJUDICATION_ACTIONS: tuple[Action, ...] = (
    Action("adj_close", "escape,q,A", "close", "back", "Go back to the item list", show=True),
    Action(
        "adjudicate_1",
        "1",
        "decide(0)",
        "final label",
        "Set solution 1 as the final label (asks why)",
        show=True,
        key_display="1-4",
    ),
    Action("adjudicate_2", "2", "decide(1)", "final label 2", "Set solution 2 as the final label (asks why)"),
    Action("adjudicate_3", "3", "decide(2)", "final label 3", "Set solution 3 as the final label (asks why)"),
    Action("adjudicate_4", "4", "decide(3)", "final label 4", "Set solution 4 as the final label (asks why)"),
    Action("adj_next", "j", "move(1)", "next", "Move to the next disagreement"),
    Action("adj_prev", "k", "move(-1)", "prev", "Move to the previous disagreement"),
    Action("adj_first", "g,home", "edge(0)", "first", "Go to the first item of the table"),
    Action("adj_last", "G,end", "edge(-1)", "last", "Go to the last item of the table"),
    Action(
        "adj_show_done",
        "d",
        "toggle_done",
        "show adjudicated",
        "Show or hide the items already adjudicated (with the final label, who set it and why)",
        show=True,
    ),
    Action(
        "adj_help", "question_mark,f1", "screen_help", "keys", "Show this screen's keys", show=True, key_display="?"
    ),
)

# The flag dialog (f): digits toggle the reasons in the order the dialog lists them.
FLAG_ACTIONS: tuple[Action, ...] = (
    Action("flag_cancel", "escape", "cancel", "cancel", "Close the dialog, the flags unchanged", show=True),
    Action("flag_save", "ctrl+s", "save", "save", "Save the flags and the note", show=True),
    Action(
        "flag_list_save", "enter", "screen.save", "save", "Save the flags (from the list of reasons)", palette=False
    ),
    *(
        Action(f"flag_toggle_{n}", str(n), f"toggle_reason({n - 1})", f"reason {n}", f"Toggle reason {n} of the list")
        for n in range(1, len(FLAG_REASONS) + 1)
    ),
)

# The terminal check (check_terminal in the palette, or --check-terminal).
CHECK_TERMINAL_ACTIONS: tuple[Action, ...] = (
    Action("check_mode_1", "1", "show(0)", "wcwidth", "Show the samples laid out with width mode 1 (wcwidth)"),
    Action("check_mode_2", "2", "show(1)", "codepoint", "Show the samples laid out with width mode 2 (codepoint)"),
    Action("check_mode_3", "3", "show(2)", "cluster1", "Show the samples laid out with width mode 3 (cluster1)"),
    Action("check_mode_4", "4", "show(3)", "cluster2", "Show the samples laid out with width mode 4 (cluster2)"),
    Action(
        "check_prev_mode", "left,h", "step(-1)", "prev mode", "Show the previous width mode", show=True, key_display="←"
    ),
    Action(
        "check_next_mode", "right,l", "step(1)", "next mode", "Show the next width mode", show=True, key_display="→"
    ),
    Action("check_apply", "enter", "apply", "use this mode", "Use the width mode shown for this session", show=True),
    Action(
        "check_write",
        "w",
        "write",
        "save to config",
        "Use the width mode shown and keep it in the config file",
        show=True,
    ),
    Action("check_close", "escape,q", "close", "close", "Close the terminal check", show=True),
)

# Small dialogs (choices such as the filter, text prompts) and the help screen.
DIALOG_ACTIONS: tuple[Action, ...] = (
    Action("dialog_cancel", "escape", "cancel", "cancel", "Close the dialog without choosing", show=True),
)
# The new-item form (I): its fields scroll on a short terminal, the checks below them stay in view.
NEW_ITEM_ACTIONS: tuple[Action, ...] = (
    Action("new_item_page_down", "pagedown", "page(1)", "page down", "Scroll the new-item form's fields down"),
    Action("new_item_page_up", "pageup", "page(-1)", "page up", "Scroll the new-item form's fields up"),
)
HELP_ACTIONS: tuple[Action, ...] = (
    Action("help_close", "escape,q,question_mark,f1", "close", "close", "Close this help", show=True),
)

# Every table, titled as the help screen lists it. Titles stay within 21 cells and ids within 17
# characters: the help screen's key and id columns are as wide as their widest entry.
# The column-mapping dialog (an unknown layout, or labels that look 1-based).
MAPPING_ACTIONS: tuple[Action, ...] = (
    Action(
        "mapping_save",
        "ctrl+s",
        "save",
        "save mapping",
        "Open the dataset with this mapping and keep it in the workspace",
        show=True,
    ),
    Action("mapping_cancel", "escape", "cancel", "cancel", "Close the dialog without a mapping", show=True),
)

SECTIONS: tuple[tuple[str, tuple[Action, ...]], ...] = (
    ("Browse and edit", MAIN_ACTIONS),
    ("Vote and review", VOTE_ACTIONS),
    ("Everywhere", APP_ACTIONS),
    ("While editing a field", EDITOR_ACTIONS),
    ("Choosing the label", LABEL_ACTIONS),
    ("Duplicates screen (D)", DUPLICATE_ACTIONS),
    ("Model scoring", SCORING_ACTIONS),
    ("Writing assistant", SUGGEST_ACTIONS),
    ("Suggestion dialog (w, z, t)", SUGGESTION_ACTIONS),
    ("Model results (R)", MODEL_RESULTS_ACTIONS),
    ("Agreement (a)", AGREEMENT_ACTIONS),
    ("Dataset health (H)", HEALTH_ACTIONS),
    ("Guidelines (W)", GUIDELINES_ACTIONS),
    ("Progress (P)", PROGRESS_ACTIONS),
    ("Adjudication (A)", ADJUDICATION_ACTIONS),
    ("Flag dialog (f)", FLAG_ACTIONS),
    ("Terminal check", CHECK_TERMINAL_ACTIONS),
    ("Dialogs", DIALOG_ACTIONS),
    ("New item", NEW_ITEM_ACTIONS),
    ("Column mapping", MAPPING_ACTIONS),
    ("This help", HELP_ACTIONS),
)

ALL_ACTIONS: tuple[Action, ...] = tuple(action for _, actions in SECTIONS for action in actions)


def bindings(actions: tuple[Action, ...]) -> list[BindingType]:
    """Textual bindings for ``actions``, each with its action id as binding id (for the keymap)."""
    return [
        Binding(a.keys, a.action, a.label, show=a.show, key_display=a.key_display, id=a.id) for a in actions if a.keys
    ]


def action_names(actions: tuple[Action, ...]) -> frozenset[str]:
    """The action names without arguments (``vote(0)`` is ``vote``), as ``check_action`` sees them."""
    return frozenset(a.action.split("(")[0] for a in actions)


def unlisted(*action_ids: str) -> list[BindingType]:
    """App-wide actions bound again on a screen whose own keys fill the footer at 80 columns:
    same keys, same id (so remapping still applies), no footer entry."""
    return [
        Binding(a.keys, f"app.{a.action}", a.label, show=False, key_display=a.key_display, id=a.id)
        for a in APP_ACTIONS
        if a.id in action_ids
    ]


# The tables whose keys are live at the same time: a screen's own keys and the app's.
# A focused editor or label line takes its keys before the screen does, so each is a context of its own.
CONTEXTS: tuple[tuple[str, tuple[Action, ...]], ...] = (
    ("the main screen", SCORING_ACTIONS + MAIN_ACTIONS + VOTE_ACTIONS + SUGGEST_ACTIONS + APP_ACTIONS),
    ("the suggestion dialog", SUGGESTION_ACTIONS + APP_ACTIONS),
    ("the field editor", EDITOR_ACTIONS),
    ("the label line", LABEL_ACTIONS),
    ("the duplicates screen", DUPLICATE_ACTIONS + APP_ACTIONS),
    ("the model results screen", MODEL_RESULTS_ACTIONS + APP_ACTIONS),
    ("the agreement screen", AGREEMENT_ACTIONS + APP_ACTIONS),
    ("the health screen", HEALTH_ACTIONS + APP_ACTIONS),
    ("the guidelines screen", GUIDELINES_ACTIONS + APP_ACTIONS),
    ("the progress screen", PROGRESS_ACTIONS + APP_ACTIONS),
    ("the adjudication screen", ADJUDICATION_ACTIONS + APP_ACTIONS),
    ("the flag dialog", FLAG_ACTIONS + APP_ACTIONS),
    ("the terminal check", CHECK_TERMINAL_ACTIONS + APP_ACTIONS),
    ("a dialog", DIALOG_ACTIONS + APP_ACTIONS),
    ("the column mapping dialog", MAPPING_ACTIONS + APP_ACTIONS),
    ("the help screen", HELP_ACTIONS + APP_ACTIONS),
)

# What a user may type for a key Textual names otherwise (a remapping "?" is the default "question_mark").
_KEY_NAMES = {
    "?": "question_mark",
    ":": "colon",
    "/": "slash",
    " ": "space",
    "!": "exclamation_mark",
    ",": "comma",
    ".": "full_stop",
    "-": "minus",
    "+": "plus",
    "=": "equals_sign",
    "[": "left_square_bracket",
    "]": "right_square_bracket",
    "<": "less_than_sign",
    ">": "greater_than_sign",
    "esc": "escape",
    "return": "enter",
}


@dataclass(frozen=True, slots=True)
class KeyConflict:
    """Two actions on one key where both are live: the one remapped and the one it collides with."""

    key: str
    remapped: str
    other: str
    context: str

    def __str__(self) -> str:
        return (
            f"[keys] {self.remapped} takes the key {self.key!r}, which {self.other} also has in {self.context}; "
            f"give one of them another key"
        )


def key_names(keys: str) -> frozenset[str]:
    """The keys of a comma-separated binding string, in Textual's names (``?`` is ``question_mark``)."""
    names = (k.strip() for k in keys.split(","))
    return frozenset(_KEY_NAMES.get(k, _KEY_NAMES.get(k.lower(), k)) for k in names if k)


def key_conflicts(overrides: dict[str, str]) -> list[KeyConflict]:
    """Keys the ``[keys]`` table gives to two actions live at the same time, that the defaults did not.

    The defaults share a few keys on purpose (escape closes a screen and clears the filter beneath it);
    only a collision the remapping brings is one: ``vote_2 = "1"`` would make 1 vote for solution 2.
    """
    found = []
    for context, actions in CONTEXTS:
        default = {a.id: key_names(a.keys) for a in actions}
        actual = {a.id: key_names(overrides[a.id]) if a.id in overrides else default[a.id] for a in actions}
        ids = list(dict.fromkeys(a.id for a in actions))
        for i, first in enumerate(ids):
            for second in ids[i + 1 :]:
                new = (actual[first] & actual[second]) - (default[first] & default[second])
                if new and (first in overrides or second in overrides):
                    remapped, other = (first, second) if first in overrides else (second, first)
                    found.append(KeyConflict(sorted(new)[0], remapped, other, context))
    return found
