"""Reports on a dataset: statistics and the dataset card."""
