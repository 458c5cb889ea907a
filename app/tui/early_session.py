"""The session ``opencode --continue`` resumes, read straight from the store before the
runtime exists, so its end is on screen while the configuration and the core load.

It is read only where the runtime will surely open the same store: the workspace's
default data folder, when no config file (the project's, the user's global one, found as
app.config finds them) sets ``data``; when that folder can be written (else the store
moves to the user's own folder, see app.store.location); and when a model is known (else
the offline demo starts, in a workspace of its own). The config files are read as plain
JSON, without the config package and pydantic: a file that does not read as a JSON
object means no early view. The ``OPENCODE_*`` variables are not read for their values:
one that sets a key under ``data`` (by the config's rules for names: any case, keys
separated by ``__``, a whole section as JSON) means no early view, and so does one under
``providers`` or ``agents`` unless ``--model`` chose the model (they decide which model
starts, or whether the demo does).
The database is opened read-only: nothing is created or migrated, and a missing,
unreadable or other-schema database means no early view either.

Once the runtime is adopted the app checks that it resumes the same session from the
same file (``EarlySession.matches``); if not, it draws the runtime's session instead.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from app.bus import Bus
from app.core.config_paths import CONFIG_FILE, DEFAULT_DATA_FOLDER, ENV_PREFIX, global_config_path, top_key_of
from app.llm.models import choose_model
from app.store.datadir import DATABASE_FILE
from app.store.db import Database
from app.store.errors import StoreError
from app.store.messages import MessageStore
from app.store.sessions import SessionStore
from app.tui.message_pages import MessagePages, SessionEnd
from app.tui.widgets.chat_log import FIRST_PAGE

if TYPE_CHECKING:
    from app.runtime import Runtime
    from app.store.models import Message

PLACES_THE_STORE = frozenset({"data"})
CHOOSES_THE_MODEL = frozenset({"providers", "agents"})
"""The top-level settings that decide what ``--continue`` shows, besides the session
itself: where the store is, and which model starts (the offline demo starts elsewhere).
No other setting moves the store, chooses the model or the session."""
MESSAGE_WIDGETS = ("app.tui.widgets.message_user", "app.tui.widgets.message_assistant")


class EarlySession(NamedTuple):
    """The latest session as the store holds it, for the chat and the status bar."""

    session_id: str
    title: str
    cost: float
    """Its sub-agents' included, as the status bar shows it."""
    pages: MessagePages
    database: Database
    """The read-only connection ``pages`` reads through: closed once the runtime's store
    takes over."""

    def matches(self, runtime: Runtime, session_id: str) -> bool:
        """The runtime resumes this session (``session_id``) from this same database."""
        try:
            return session_id == self.session_id and runtime.store.db.path.samefile(self.database.path)
        except OSError:
            return False


def read_latest(root: Path, cli_model: str | None, env: Mapping[str, str]) -> EarlySession | None:
    """The session ``--continue`` resumes in ``root``, or None where that cannot be known
    without the configuration (see the module's docstring). ``env``: the app's
    environment, which chooses the model; the configuration is found from the process's
    own, as app.config.load_config finds it. Blocking: run it in a thread. The message
    widgets are imported here too, off the UI thread."""
    folder = _data_folder(root, cli_model, env)
    if folder is None:
        return None
    try:
        database = Database(folder / DATABASE_FILE, read_only=True)
    except StoreError:
        return None
    try:
        early = _latest(database)
    except (sqlite3.Error, ValueError):  # locked past the busy timeout, a damaged row
        early = None
    if early is None:
        database.close()
    return early


def _latest(database: Database) -> EarlySession | None:
    bus = Bus()  # nothing is published: these stores are only read
    sessions = SessionStore(database, bus)
    latest = sessions.latest()
    if latest is None:
        return None
    messages = MessageStore(database, bus)
    total = messages.count(latest.id)
    start = max(total - FIRST_PAGE - 1, 0)  # the chat's first page, and the message before it
    end = SessionEnd(total, start, messages.page(latest.id, start, total))
    _prepare_widgets(end.messages)
    cost = sessions.tree_usage(latest.id).cost
    return EarlySession(latest.id, latest.title, cost, MessagePages(messages, latest.id, end=end), database)


def _prepare_widgets(last_page: list[Message]) -> None:
    """Import the message widgets, nothing for an empty session. The lexers of the code
    blocks are not loaded here: a block is drawn plain until its lexer is built."""
    if last_page:
        for module in MESSAGE_WIDGETS:
            import_module(module)


def _data_folder(root: Path, cli_model: str | None, env: Mapping[str, str]) -> Path | None:
    """The workspace's default data folder, when that is surely where the store will be."""
    deciding = PLACES_THE_STORE if cli_model else PLACES_THE_STORE | CHOOSES_THE_MODEL
    if any(name.upper().startswith(ENV_PREFIX) and top_key_of(name) in deciding for name in os.environ):
        return None
    documents = []
    for path in (global_config_path(os.environ), root / CONFIG_FILE):
        if path is None or not os.path.lexists(path):
            continue
        document = _json_object(path)
        if document is None or any(key.lower() == "data" for key in document):
            return None
        documents.append(document)
    if _model(cli_model, documents, env) is None:
        return None
    folder = root / DEFAULT_DATA_FOLDER
    return folder if os.access(folder, os.W_OK | os.X_OK) else None


def _json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object a regular file holds; None for anything else."""
    if not path.is_file():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def _model(cli_model: str | None, documents: list[dict[str, Any]], env: Mapping[str, str]) -> str | None:
    """The model the app would start on by what the files (global first) and ``env``
    say; None means the offline demo."""
    coder_model: str | None = None
    providers: dict[str, Any] = {}
    for document in documents:
        agents = document.get("agents")
        coder = agents.get("coder") if isinstance(agents, dict) else None
        model = coder.get("model") if isinstance(coder, dict) else None
        if isinstance(model, str) and model:
            coder_model = model
        if isinstance(document.get("providers"), dict):
            providers.update(document["providers"])
    return choose_model(cli_model, coder_model, env, providers)
