"""The workspace guard: paths and the boundary, per-session file records and locks, text I/O."""

from app.workspace.file_records import FileRecord, FileRecords, Fingerprint
from app.workspace.paths import Workspace
from app.workspace.textio import TextFile, is_binary, read_text_file

__all__ = [
    "FileRecord",
    "FileRecords",
    "Fingerprint",
    "TextFile",
    "Workspace",
    "is_binary",
    "read_text_file",
]
