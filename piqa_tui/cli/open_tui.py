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
from piqa_tui.core.text.bidi import BidiMode, resolve_mode
from piqa_tui.core.text.graphemes import WIDTH_MODES, WidthPolicy
from piqa_tui.core.workspace.log import user_location
from piqa_tui.settings.config import load_config
from piqa_tui.settings.locations import bundled_sample, is_bundled
from piqa_tui.tui import cell_widths
from piqa_tui.tui.keymap import ALL_ACTIONS, validate_keymap
from piqa_tui.tui.model_scores import LOW_MARGIN
from piqa_tui.tui.session import OpenRequest
from piqa_tui.tui.themes import theme_name


def width_mode(configured: str) -> str:
    """The width mode to lay text out with: the configured one, or what the terminal answers."""
    if configured == "auto":
        from piqa_tui.tui.terminal_probe import detect_width_mode

        return detect_width_mode()
    if configured not in WIDTH_MODES:
        raise PiqaError(f"config: width_policy '{configured}' is not one of auto, {', '.join(WIDTH_MODES)}")
    return configured


def settings_from(args: argparse.Namespace):  # -> AppSettings (import kept lazy for start-up time)
    from piqa_tui.tui.app import AppSettings

    config = load_config()
    warnings = validate_keymap(config.keys)
    known = {a.id for a in ALL_ACTIONS}
    keys = {k: v for k, v in config.keys.items() if k in known and isinstance(v, str) and v.strip()}
    cell_widths.install(WidthPolicy(width_mode(config.width_policy)))
    low_margin = LOW_MARGIN
    if isinstance(config.low_margin, (int, float)) and not isinstance(config.low_margin, bool) and config.low_margin > 0:
        low_margin = float(config.low_margin)
    else:
        warnings.append(f"config: low_margin {config.low_margin!r} is not a positive number of nats; using {LOW_MARGIN:g}")
    bidi = args.bidi or config.bidi
    try:
        bidi_mode = resolve_mode(BidiMode(bidi))
    except ValueError:
        raise PiqaError(f"bidi mode '{bidi}' is not one of auto, app, terminal, off") from None
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
        )
    return AppSettings(
        request=request,
        bidi_setting=bidi,
        bidi_mode=bidi_mode,
        theme=theme_name(args.theme or config.theme),
        keys=keys,
        reviewer=bool(args.reviewer),
        low_margin=low_margin,
        check_terminal=bool(args.check_terminal),
        warnings=warnings,
    )


def launch(args: argparse.Namespace) -> int:
    """Run the TUI; returns the process exit code."""
    from piqa_tui.tui.app import PiqaApp

    app = PiqaApp(settings_from(args))
    app.run()
    if app.error_message:
        print(f"piqa-tui: error: {app.error_message}", file=sys.stderr)
        return BAD_INPUT
    if app.exit_note:
        print(app.exit_note, file=sys.stderr)
    return app.return_code or OK
