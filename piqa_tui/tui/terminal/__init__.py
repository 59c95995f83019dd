"""What the app knows about the terminal: cell widths, the width probe, the control-character guard, keys typed ahead."""
