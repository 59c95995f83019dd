"""piqa-tui: curate PIQA-style commonsense datasets in the terminal."""

__version__ = "0.1.0"
