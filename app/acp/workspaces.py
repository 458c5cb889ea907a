"""The workspaces ACP sessions live in: one Runtime and one AgentLoop per folder, built
when a session first names it and shared by every later session there. ``opencode acp``
has one set per editor; ``opencode serve`` one for all its connections, so a workspace's
store, language servers and MCP servers are started once however many clients come."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from acp import RequestError

from app.agents.files import agent_files_fingerprint
from app.config import Fingerprint, config_fingerprint
from app.core.errors import OpencodeError
from app.llm.agent import AgentLoop
from app.llm.scripted import ProviderPerModel
from app.runtime import Runtime

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Opened:
    runtime: Runtime
    loop: AgentLoop
    new: bool
    """Built by this call: its ``runtime.notices`` have not been shown to anyone yet."""
    read: Fingerprint = ()
    """The configuration and agent files as they were when the runtime read them."""


class Workspaces:
    """A workspace's configuration is read again when one of its files (the project's
    ``.opencode.json``, the global one) or its agent files (the project's and the user's
    ``agents/`` folders) have changed since: a new session then gets a runtime built on
    them, as a fresh process would, so a deny rule or an agent just added holds for it,
    and it hears the notices of the files that could not be used. Sessions already open
    keep the runtime they began on until the end."""

    def __init__(self) -> None:
        self._opened: dict[Path, Opened] = {}
        self._retired: list[Opened] = []

    def open(self, cwd: str) -> Opened:
        """The workspace at ``cwd`` (an absolute folder, as ACP requires), built on first
        use with the interactive permission policy. Raises the ACP invalid-params error."""
        if not Path(cwd).is_absolute():  # ACP: "Must be an absolute path"; it would resolve against our cwd
            raise RequestError.invalid_params(
                {"message": f"cwd {cwd} is not an absolute path: send the workspace folder's absolute path"}
            )
        try:
            root = Path(cwd).resolve()
            is_folder = root.is_dir()
        except ValueError:  # a NUL character
            raise RequestError.invalid_params(
                {"message": f"cwd {cwd!r} contains a NUL character, which no folder name can hold: open a folder first"}
            ) from None
        except OSError as err:  # a name too long, a loop of symlinks
            raise RequestError.invalid_params(
                {"message": f"cwd {cwd} cannot be opened ({err.strerror or err}): open a folder first"}
            ) from None
        if not is_folder:
            raise RequestError.invalid_params(
                {"message": f"cwd {cwd} is not a directory: open a folder first"}
            )
        opened = self._opened.get(root)
        read = config_fingerprint(root) + agent_files_fingerprint(root, os.environ)
        if opened is not None and opened.read == read:
            return Opened(opened.runtime, opened.loop, new=False)
        if opened is not None:
            log.info("the configuration or agents of %s changed: read again for new sessions", root)
            self._retired.append(self._opened.pop(root))
        try:
            runtime = Runtime.build(root, policy="interactive")
        except OpencodeError as error:
            raise RequestError.invalid_params({"message": str(error)}) from None
        for notice in [*runtime.notices, *runtime.commands.notices, *runtime.hook_notices(asking=False)]:
            log.warning("%s", notice)
        self._opened[root] = Opened(runtime, AgentLoop(runtime, ProviderPerModel()), new=False, read=read)
        log.info("workspace %s", root)
        return Opened(runtime, self._opened[root].loop, new=True)

    def __len__(self) -> int:
        return len(self._opened)

    async def close(self) -> None:
        for opened in [*self._opened.values(), *self._retired]:
            await opened.loop.aclose()
            opened.runtime.close()
        self._opened.clear()
        self._retired.clear()
