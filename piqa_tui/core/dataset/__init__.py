"""A dataset file: its items, the layout of its columns, how it spells labels, reading and
writing every format faithfully, and validate's rules over the items."""
