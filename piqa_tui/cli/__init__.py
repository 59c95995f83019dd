"""The command line: argument parsing, the batch subcommands, and launching the TUI."""
