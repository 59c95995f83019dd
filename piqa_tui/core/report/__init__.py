"""Reports on a dataset: its statistics (the dataset card that shows them is ``piqa_tui.render.card``)."""
