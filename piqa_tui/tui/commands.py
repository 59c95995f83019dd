"""The command palette (ctrl+p) lists every action of the keymap, with its current keys.

It lists the actions of the screen on top (the table the screen names as its
``ACTIONS``) and the app's own, so a new screen registers its keys in one place.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from piqa_tui.tui.keymap import APP_ACTIONS, Action


class ActionCommands(Provider):
    """Every browse, edit and app action, runnable by name."""

    def _actions(self) -> list[tuple[Action, str]]:
        screen_actions: tuple[Action, ...] = getattr(self.screen, "ACTIONS", ())
        found = [(a, "screen") for a in screen_actions if a.palette]
        found += [(a, "app") for a in APP_ACTIONS if a.palette and a.id != "command_palette"]
        return found

    def _title(self, action: Action) -> str:
        return action.help.split(" (")[0]

    def _help(self, action: Action) -> str:
        keys_for = getattr(self.app, "keys_for", lambda a: a.keys)
        keys = keys_for(action)
        return f"{keys.replace(',', ' / ')}   · {action.id}" if keys else action.id

    def _run(self, action: Action, target: str) -> None:
        screen = self.screen
        if target == "screen":
            self.app.call_later(screen.run_action, action.action)
        else:
            self.app.call_later(self.app.run_action, action.action)

    async def discover(self) -> Hits:
        for action, target in self._actions():
            yield DiscoveryHit(self._title(action), partial(self._run, action, target), help=self._help(action))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for action, target in self._actions():
            title = self._title(action)
            score = max(matcher.match(title), matcher.match(action.id.replace("_", " ")) * 0.9)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(self._run, action, target),
                    text=title,
                    help=self._help(action),
                )
