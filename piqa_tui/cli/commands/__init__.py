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
    "templates": "prompt templates, and one rendered on an item",
    "card": "Hugging Face dataset card (README.md with YAML metadata)",
    "workspace": "check a workspace file, back it up while others work, merge another copy's work in, list conflicts",
    "round": "declare an annotation round (people, roles, routing) from a TOML file, or show it",
    "assign": "draw who validates which item under the round's rules (--top-up fills gaps)",
    "progress": "how far the round is: per annotator, per item, per group",
    "stage": "move items between draft, review, validation and done; import drafts; correction rates",
    "release": "the releases the workspace records: list them, rebuild one byte for byte, diff two",
    "sync": "share the workspace's work through the dataset's git repository: commit, fetch, merge, push",
}
