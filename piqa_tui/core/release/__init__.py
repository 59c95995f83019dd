"""A publishable release folder: its splits, files, manifest and the check that the card claims only what the files hold."""
