"""``piqa-tui [PATH] ...`` without a subcommand: resolve the settings, run the app, report how it ended.

Command-line options win over the config file, which wins over defaults.
Problems found before the screen opens raise ``PiqaError`` (the CLI prints
one line and exits 2); a dataset that cannot be read is reported the same
way after the app has given the terminal back.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from piqa_tui.cli.exit_codes import BAD_INPUT, OK
from piqa_tui.core.errors import PiqaError
from piqa_tui.core.text.bidi_mode import BidiMode, resolve_mode
from piqa_tui.core.text.graphemes import WidthPolicy
from piqa_tui.core.text.terminal_safe import message_line
from piqa_tui.core.workspace.log import user_location
from piqa_tui.settings.config import ConfigError, configured_directions, load_config
from piqa_tui.settings.locations import bundled_sample, config_path, is_bundled
from piqa_tui.tui.keymap import ALL_ACTIONS, key_conflicts
from piqa_tui.tui.state.session import OpenRequest
from piqa_tui.tui.terminal import cell_widths
from piqa_tui.tui.themes import known_theme_names, theme_name


def width_policy(configured: WidthPolicy | None) -> WidthPolicy:
    """The width policy to lay text out with: the configured one, else (``auto``) what the terminal answers."""
    if configured is None:
        from piqa_tui.tui.terminal.probe import detect_width_mode

        return WidthPolicy(detect_width_mode())
    return configured


def settings_from(args: argparse.Namespace):  # -> AppSettings (import kept lazy for start-up time)
    from piqa_tui.tui.app import AppSettings

    # Every setting is checked here, once, before anything starts (settings/config.py).
    config = load_config(action_ids=[a.id for a in ALL_ACTIONS], theme_names=known_theme_names())
    conflicts = key_conflicts(config.keys)
    if conflicts:  # two actions on one key: one of them would silently never run (or cast the wrong vote)
        raise ConfigError(f"config {config_path()}: {conflicts[0]}")
    cell_widths.install(width_policy(config.width_policy))
    bidi = BidiMode(args.bidi) if args.bidi else config.bidi  # --bidi: one of BidiMode's values (argparse checked)
    request = None
    if not args.check_terminal:
        path = Path(args.path) if args.path else bundled_sample()
        if not path.exists():
            raise PiqaError(f"{path}: no such file; check the path")
        workspace = args.workspace
        if workspace is None and is_bundled(path):
            workspace = str(user_location(path))  # never write into the install folder
        request = OpenRequest(
            path=path,
            mapping=args.mapping,
            workspace=workspace,
            annotator=args.annotator or config.annotator,
            max_differences=config.max_differences,
            directions=configured_directions(config, path.name),
        )
    return AppSettings(
        request=request,
        bidi_mode=resolve_mode(bidi),
        theme=theme_name(args.theme or config.theme),
        keys=dict(config.keys),
        reviewer=bool(args.reviewer),
        low_margin=config.low_margin,
        sync_every_minutes=config.sync_every_minutes,
        check_terminal=bool(args.check_terminal),
    )


def launch(args: argparse.Namespace) -> int:
    """Run the TUI; returns the process exit code."""
    from piqa_tui.tui.app import PiqaApp

    app = PiqaApp(settings_from(args))
    app.run()
    if app.error_message:
        print(f"piqa-tui: error: {message_line(app.error_message)}", file=sys.stderr)
        return BAD_INPUT
    if app.exit_note:
        print(message_line(app.exit_note), file=sys.stderr)
    return app.return_code or OK
