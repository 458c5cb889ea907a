"""The command palette (ctrl+p) source: every action of the app, fuzzy-matched. The app
lists its commands (``palette_commands``), so adding an action never touches this file."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider


class PaletteCommand(NamedTuple):
    """One palette entry."""

    name: str
    help: str
    run: Callable[[], object]


@runtime_checkable
class HasPaletteCommands(Protocol):
    def palette_commands(self) -> list[PaletteCommand]: ...


class AppCommands(Provider):
    def _commands(self) -> list[PaletteCommand]:
        app = self.app
        assert isinstance(app, HasPaletteCommands), "the palette's provider serves OpencodeApp"
        return app.palette_commands()

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(command.name, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(score, matcher.highlight(command.name), command.run, help=command.help)
