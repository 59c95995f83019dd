"""The release options a team made the project's default, as the workspace keeps them (meta ``release_defaults``).

Read by every ``export --decided`` (``cli.commands.export``) and checked by the gate for incoming settings
(``core.sync.gate``) with the same parser, so a merge takes over only defaults an export can read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from piqa_tui.core.errors import PiqaError

RELEASE_DEFAULTS_KEY = "release_defaults"  # workspace meta: a JSON object, e.g. {"drop_invalid": true}


@dataclass(frozen=True)
class ReleaseDefaults:
    """The release options a team made the project's default: every ``--decided`` export applies them."""

    only_decided: bool = False
    drop_invalid: bool = False

    def words(self) -> list[str]:
        """The defaults as the summary names them, e.g. ["only decided", "drop invalid"]."""
        return [words for on, words in ((self.only_decided, "only decided"), (self.drop_invalid, "drop invalid")) if on]

    def to_json(self) -> str:
        """The meta value: only the options that are on (``{}``: none, a deliberate choice that travels too)."""
        return json.dumps({name: True for name in ("only_decided", "drop_invalid") if getattr(self, name)})

    @classmethod
    def parse(cls, text: str) -> ReleaseDefaults:
        """The defaults a workspace holds; a value no version of piqa-tui wrote is refused, never guessed at."""
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        known = ("only_decided", "drop_invalid")
        if not isinstance(value, dict) or any(not isinstance(value.get(k, False), bool) for k in known):
            raise PiqaError(
                f"the workspace's release defaults are unreadable ({text[:60]!r}); set them again with "
                "`piqa-tui export PATH --to OUT --make-default` plus --only-decided and/or --drop-invalid"
            )
        return cls(**{k: value.get(k, False) for k in known})
