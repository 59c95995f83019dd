"""The ``piqa-tui`` command: the TUI without a subcommand, batch subcommands otherwise.

Exit codes (``exit_codes``): 0 success, 1 the data has problems, 2 bad usage or
unreadable input, always with a one-line message and never a traceback
(set PIQA_TUI_DEBUG=1 to see one).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys
from pathlib import Path
from typing import NoReturn

from piqa_tui import __version__
from piqa_tui.cli.commands import COMMANDS
from piqa_tui.cli.exit_codes import BAD_INPUT
from piqa_tui.core.errors import PiqaError, os_error_reason
from piqa_tui.core.text.bidi_mode import BidiMode
from piqa_tui.core.text.terminal_safe import message_line


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports bad usage in one line (and exit code 2), not a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(BAD_INPUT, f"{self.prog}: error: {message_line(message)} (see {self.prog} --help)\n")


def tui_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="piqa-tui",
        description="Curate PIQA-style datasets in the terminal. Subcommands: "
        + "; ".join(f"{name} ({text})" for name, text in COMMANDS.items()),
    )
    parser.add_argument("path", nargs="?", help="dataset to open (default: the bundled Darija sample)")
    parser.add_argument("--annotator", metavar="NAME")
    parser.add_argument("--bidi", choices=[mode.value for mode in BidiMode])
    parser.add_argument("--theme", metavar="NAME")
    parser.add_argument("--workspace", metavar="FILE")
    parser.add_argument("--map", dest="mapping", metavar="SPEC")
    parser.add_argument("--reviewer", action="store_true", help="reviewer mode: show gold labels and all votes")
    parser.add_argument("--check-terminal", action="store_true", help="show reference strings to calibrate text width")
    parser.add_argument("--version", action="version", version=f"piqa-tui {__version__}")
    return parser


def command_parser(name: str) -> argparse.ArgumentParser:
    parser = OneLineParser(prog=f"piqa-tui {name}", description=COMMANDS[name])
    module = importlib.import_module(f"piqa_tui.cli.commands.{name}")
    module.add_arguments(parser)
    parser.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    finished = False
    try:
        if argv and argv[0] in COMMANDS:
            args = command_parser(argv[0]).parse_args(argv[1:])
            code = int(args.run(args))
        else:
            args = tui_parser().parse_args(argv)
            from piqa_tui.cli.open_tui import launch

            code = launch(args)
        finished = True
        return code
    except PiqaError as exc:
        print(f"piqa-tui: error: {message_line(exc)}", file=sys.stderr)
        return BAD_INPUT
    except ModuleNotFoundError as exc:
        if os.environ.get("PIQA_TUI_DEBUG"):
            raise
        print(
            f"piqa-tui: error: {message_line(exc)}; install the optional parts with: pip install -e '.[semantic,model]'",
            file=sys.stderr,
        )
        return BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except (OSError, sqlite3.Error) as exc:  # the disk filled, went read-only or failed under a command
        message = environment_fault(exc)
        if message is None or os.environ.get("PIQA_TUI_DEBUG"):
            raise
        print(f"piqa-tui: error: {message_line(message)}", file=sys.stderr)
        return BAD_INPUT
    except Exception as exc:  # the last line of defence: one line, not a traceback
        if os.environ.get("PIQA_TUI_DEBUG"):
            raise
        print(
            f"piqa-tui: internal error: {type(exc).__name__}: {message_line(exc)} (rerun with PIQA_TUI_DEBUG=1 and report it)",
            file=sys.stderr,
        )
        return BAD_INPUT
    finally:
        _end_warnings(show=finished)


def _end_warnings(show: bool) -> None:
    """Print a finished command's held warnings, or drop a failed one's so its error line stands alone on stderr.

    Only a command that warned has loaded the module that holds them; the command line starts without it.
    """
    held = sys.modules.get("piqa_tui.cli.commands.dataset_args")
    if held is not None:
        held.end_warnings(show)


# SQLite's names for a fault of the disk or of another process, not of the program.
_STORAGE_FAULTS = ("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN")


def environment_fault(exc: OSError | sqlite3.Error) -> str | None:
    """One line for a fault of the machine (full or read-only disk, I/O error, a lock held too long, a damaged
    workspace file) that reached the top without a message of its own; None for an error that is a bug and must be reported."""
    if isinstance(exc, OSError):
        where = exc.filename if exc.filename is not None else "a file"
        return f"{where}: {os_error_reason(exc)}; the command stopped before it was done"
    from piqa_tui.core.workspace.log import DAMAGED, storage_error

    name = getattr(exc, "sqlite_errorname", "") or ""
    if not name.startswith((*_STORAGE_FAULTS, *DAMAGED)):
        return None

    return str(storage_error(Path("the workspace"), exc, "the command stopped before it was done"))


if __name__ == "__main__":
    sys.exit(main())
