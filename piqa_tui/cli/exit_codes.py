"""Exit codes shared by every subcommand (listed in the README, "Command line")."""

OK = 0
DATA_PROBLEMS = 1  # the command ran and found problems in the data
BAD_INPUT = 2  # bad usage or unreadable input
