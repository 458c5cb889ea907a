"""Error types shared by every room. Each message is one line: what is wrong and what to do."""

import os


def shown_if_not_utf8(text: str) -> str | None:
    """None for text that is UTF-8; otherwise how an error shows it. Bytes of another
    encoding (a Latin-1 terminal, a file name) reach Python as surrogates, which no stored
    text can hold: they are shown as escapes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    return None


class OpencodeError(Exception):
    """Base of the errors we raise on purpose; ``str(err)`` is the one-line message."""


class ConfigError(OpencodeError):
    """Configuration could not be loaded; the message names the file and the key path."""


class ToolError(OpencodeError):
    """A tool call failed in a way the model should read and can fix."""


class OutsideWorkspaceError(ToolError):
    """A path resolves (after `..` and symlinks) outside the workspace."""


class StaleFileError(ToolError):
    """A file was never read in this session, or changed on disk since it was read."""


class BinaryFileError(ToolError):
    """A binary file was given to a tool that handles text only."""


class PermissionDeniedError(ToolError):
    """The permission engine or the user refused the call."""
