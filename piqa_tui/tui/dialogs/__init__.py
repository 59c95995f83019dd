"""Modal dialogs any screen or controller may open: prompts, choices, flags, the column mapping, the decision policy."""
