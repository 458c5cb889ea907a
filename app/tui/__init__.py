"""The Textual front-end. It only listens to the bus and calls core services; nothing in
core imports it. The entry point is ``app.tui.app.run_tui``."""

from pathlib import Path


def css_beside(module_file: str) -> str:
    """The stylesheet kept next to a widget's module (``chat_log.py`` -> ``chat_log.tcss``),
    read once at import as the widget's DEFAULT_CSS: widgets stay self-contained while their
    CSS lives in a real .tcss file (Textual's CSS_PATH works for apps and screens only)."""
    return Path(module_file).with_suffix(".tcss").read_text(encoding="utf-8")
