"""Batch subcommands: one module each, with ``add_arguments(parser)`` and ``run(args) -> int``."""

COMMANDS: dict[str, str] = {
    "validate": "minimal-pair and schema rules, per item",
    "stats": "counts, lengths, label balance, breakdowns",
    "edit": "set metadata columns on many items at once (--where, --set COLUMN=VALUE), as one undoable action",
    "export": "write the dataset with the workspace's edits applied",
    "dedup": "exact, lexical and semantic near-duplicates; --against for leakage",
    "votes": "import or export votes as long-format files",
    "agree": "inter-annotator agreement from recorded votes",
    "audit": "annotator reliability and the labels most likely wrong, with reasons",
    "score": "score items with a local GGUF model",
    "classify": "the model suggests each item's value of a metadata column from a closed set (by log-likelihood)",
    "templates": "prompt templates, and one rendered on an item",
    "card": "Hugging Face dataset card (README.md with YAML metadata)",
    "workspace": "check a workspace file, back it up while others work, merge another copy's work in, list conflicts",
    "round": "declare an annotation round (people, roles, routing) from a TOML file, or show it",
    "assign": "draw who validates which item under the round's rules (--top-up fills gaps)",
    "progress": "how far the round is: per annotator, per item, per group",
    "stage": "move items between draft, review, validation and done; import drafts; correction rates",
    "draft": "a model drafts new items for given metadata into stage draft (resumable, near copies rejected)",
    "translate": "a model translates another file's items into drafts, the source kept beside each",
    "sync": "share the workspace's work through the dataset's git repository: commit, fetch, merge, push",
}
