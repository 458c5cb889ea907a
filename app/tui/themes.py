"""Themes are data: ``themes/*.json`` (and the user's own folder) in OpenCode's theme format,
turned into Textual themes at start.

A file is ``{"$schema"?, "defs": {name: "#hex"}, "theme": {key: value}}`` where a value is
"#hex", a name from ``defs``, or ``{"dark": v, "light": v}``. A file using dark/light pairs
gives two Textual themes, ``name`` (dark values) and ``name-light``. The OpenCode keys
become Textual's base colours plus CSS variables (``diffAddedBg`` -> ``$diff-added-bg``),
which the panels' .tcss files use, so diff and syntax colours follow the theme.

A broken file never stops the app: it is skipped with a one-line warning naming the file
and the key, and the app keeps (or falls back to) another theme.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

from app.core.config_paths import CONFIG_FILE, global_config_path, user_config_dir
from app.core.errors import ConfigError


def shipped_themes_dir() -> Path:
    """The themes that ship with opencode: inside the installed package (the wheel carries
    the top-level themes/ folder as app/themes), else the source tree's themes/."""
    packaged = resources.files("app") / "themes"
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "themes"


THEMES_DIR = shipped_themes_dir()
DEFAULT_THEME = "opencode"
"""app.config's file name: the project's, and the user's global one."""

REQUIRED_KEYS = (
    "primary", "secondary", "accent", "text", "textMuted", "background", "backgroundPanel",
    "border", "success", "warning", "error", "info",
    "diffAdded", "diffRemoved", "diffContext", "diffAddedBg", "diffRemovedBg",
    "markdownText", "markdownHeading", "markdownLink", "markdownLinkText", "markdownCode",
    "markdownBlockQuote", "markdownEmph", "markdownStrong", "markdownHorizontalRule",
    "markdownListItem", "markdownListEnumeration", "markdownImage", "markdownImageText",
    "markdownCodeBlock",
    "syntaxComment", "syntaxKeyword", "syntaxFunction", "syntaxVariable", "syntaxString",
    "syntaxNumber", "syntaxType", "syntaxOperator", "syntaxPunctuation",
)
OPTIONAL_KEYS = {
    "backgroundElement": "backgroundPanel",
    "borderActive": "primary",
    "borderSubtle": "border",
    "diffHunkHeader": "diffContext",
    "diffHighlightAdded": "diffAdded",
    "diffHighlightRemoved": "diffRemoved",
    "diffContextBg": "background",
    "diffLineNumber": "textMuted",
    "diffAddedLineNumberBg": "diffAddedBg",
    "diffRemovedLineNumberBg": "diffRemovedBg",
}
"""Optional key -> the key whose colour it takes when a file leaves it out."""

# Keys that are Textual base colours (Theme fields), not extra CSS variables.
_BASE_FIELDS = {
    "primary": "primary", "secondary": "secondary", "accent": "accent", "warning": "warning",
    "error": "error", "success": "success", "text": "foreground", "background": "background",
    "backgroundPanel": "surface", "backgroundElement": "panel",
}
# OpenCode's "border" is the resting border; Textual's $border is the focused one.
_RENAMED_VARIABLES = {"border": "border-blurred", "borderActive": "border"}
# Textual's own Markdown widget reads these; give them the theme's markdown colours.
_TEXTUAL_MARKDOWN = {f"markdown-h{level}-color": "markdownHeading" for level in range(1, 7)}

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class ThemeLoad(NamedTuple):
    """What loading found: the themes (later folders override earlier names) and one
    warning per file that was skipped."""

    themes: dict[str, Theme]
    warnings: list[str]


def user_themes_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """The ``themes`` folder of ``user_config_dir``."""
    folder = user_config_dir(os.environ if env is None else env)
    return folder / "themes" if folder is not None else None


def load_themes(*folders: Path | None, pattern: str = "*.json") -> ThemeLoad:
    """Every theme file of the folders matching ``pattern``, in order; a missing folder is
    simply empty."""
    load = ThemeLoad({}, [])
    for folder in folders:
        if folder is None or not folder.is_dir():
            continue
        for path in sorted(folder.glob(pattern)):
            try:
                load.themes.update((theme.name, theme) for theme in load_theme_file(path))
            except ConfigError as err:
                load.warnings.append(str(err))
    return load


def load_theme_file(path: Path) -> list[Theme]:
    """The Textual theme(s) of one file: ``[dark]``, or ``[dark, light]`` when the file has
    dark/light pairs. Raises ConfigError naming the file and the key."""
    name = path.stem.lower()
    if not _NAME.match(name):
        raise ConfigError(f"{path}: theme names are lowercase letters, digits, '-' and '_'; rename the file")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read the theme ({err}); the theme was skipped") from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"{path}: invalid JSON at line {err.lineno} ({err.msg}); the theme was skipped") from None
    defs, colors = _sections(path, document)
    has_modes = any(isinstance(value, dict) for value in colors.values())
    themes = [to_textual_theme(name, _palette(path, defs, colors, "dark"))]
    if has_modes:
        themes.append(to_textual_theme(f"{name}-light", _palette(path, defs, colors, "light")))
    return themes


def _sections(path: Path, document: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    if not isinstance(document, dict) or not isinstance(document.get("theme"), dict):
        raise ConfigError(f'{path}: a theme file is an object with a "theme" object; the theme was skipped')
    defs = document.get("defs", {})
    if not isinstance(defs, dict):
        raise ConfigError(f'{path}: "defs" must be an object of name -> "#hex"; the theme was skipped')
    colors = document["theme"]
    missing = [key for key in REQUIRED_KEYS if key not in colors]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise ConfigError(f'{path}: theme.{missing[0]} is missing{more}; the theme was skipped')
    return defs, colors


def _palette(path: Path, defs: dict[str, Any], colors: dict[str, Any], mode: str) -> dict[str, str]:
    """Every key (optional ones filled from their fallback) resolved to a colour."""
    palette = {key: _resolve(path, defs, key, value, mode) for key, value in colors.items()
               if key in REQUIRED_KEYS or key in OPTIONAL_KEYS}
    for key, fallback in OPTIONAL_KEYS.items():
        palette.setdefault(key, palette[fallback])
    return palette


def _resolve(path: Path, defs: dict[str, Any], key: str, value: Any, mode: str) -> str:
    if isinstance(value, dict):
        if mode not in value:
            raise ConfigError(f'{path}: theme.{key} has no "{mode}" value; give both "dark" and "light"')
        value = value[mode]
    seen: set[str] = set()
    while isinstance(value, str) and value in defs and value not in seen:
        seen.add(value)
        value = defs[value]
    try:
        if not isinstance(value, str):
            raise ColorParseError("not a string")
        Color.parse(value)
    except ColorParseError:
        raise ConfigError(
            f'{path}: theme.{key} is {value!r}, neither a colour like "#1a1b26" nor a name in "defs"'
        ) from None
    return value


def to_textual_theme(name: str, palette: dict[str, str]) -> Theme:
    """A Textual theme from resolved OpenCode keys: base colours plus CSS variables."""
    variables = {_RENAMED_VARIABLES.get(key) or _kebab(key): color for key, color in palette.items()
                 if key not in _BASE_FIELDS}
    variables.update({var: palette[key] for var, key in _TEXTUAL_MARKDOWN.items()})
    variables["footer-key-foreground"] = palette["primary"]
    base: dict[str, Any] = {field_name: palette[key] for key, field_name in _BASE_FIELDS.items()}
    return Theme(name=name, dark=Color.parse(palette["background"]).brightness < 0.5,
                 variables=variables, **base)


@cache  # a dozen themes share the same forty keys
def _kebab(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", key).lower()


@cache
def theme_variable_defaults() -> dict[str, str]:
    """Values for our CSS variables under a theme that lacks them (Textual's built-ins):
    the shipped opencode theme's. Return it from ``App.get_theme_variable_defaults``."""
    try:
        return dict(load_theme_file(THEMES_DIR / f"{DEFAULT_THEME}.json")[0].variables)
    except ConfigError:
        return {_RENAMED_VARIABLES.get(key) or _kebab(key): "ansi_default"
                for key in (*REQUIRED_KEYS, *OPTIONAL_KEYS) if key not in _BASE_FIELDS}


def register_themes(app: App, user_dir: Path | None = None, *, only: str | None = None) -> list[str]:
    """Register the shipped themes and the user's (theirs win on a name clash); returns
    the warnings for broken files, for the app to notify. ``only`` registers just the
    theme of that name (its file, and for ``name-light`` the file ``name`` too, which
    holds it): what a first frame needs, at a sixth of the cost."""
    folders = (THEMES_DIR, user_dir if user_dir is not None else user_themes_dir())
    stems = dict.fromkeys((only.removesuffix("-light"), only)) if only else ("*",)
    warnings = []
    for stem in stems:
        load = load_themes(*folders, pattern=f"{stem}.json")
        for theme in load.themes.values():
            app.register_theme(theme)
        warnings += load.warnings
    return warnings


def saved_theme(root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """``tui.theme`` from the project's config file, else from the user's global one (the
    file ``global_config_path`` finds), read without the config package
    (and pydantic), so the first frame already has the theme the user picked. Anything
    odd gives None: the full configuration, loaded with the runtime, reports the problem
    and has the last word (OPENCODE_* variables included)."""
    if (theme := project_theme(root)) is not None:
        return theme
    env = os.environ if env is None else env
    path = global_config_path(env)
    return file_theme(path) if path is not None and path.is_file() else None


def project_theme(root: Path) -> str | None:
    """``tui.theme`` from the project's config file (None when it sets none)."""
    return file_theme(root / CONFIG_FILE)


def file_theme(path: Path) -> str | None:
    """``tui.theme`` from one config file; None when missing or anything is odd."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing, unreadable, not UTF-8, not JSON
        return None
    tui = document.get("tui") if isinstance(document, dict) else None
    theme = tui.get("theme") if isinstance(tui, dict) else None
    return theme if isinstance(theme, str) and _NAME.match(theme) else None


def available_themes(app: App) -> list[str]:
    """Names of the registered OpenCode-format themes (those carrying our diff colours)."""
    return sorted(name for name, theme in app.available_themes.items() if "diff-added-bg" in theme.variables)


def apply_theme(app: App, name: str) -> bool:
    """Switch to ``name``; False (theme unchanged) when no such theme is registered."""
    if name not in app.available_themes:
        return False
    app.theme = name
    return True


def start_with_theme(app: App, name: str) -> bool:
    """``apply_theme`` for an app that is not running yet: its stylesheet, not parsed yet,
    takes the theme's variables now. Setting ``app.theme`` would have Textual's watcher
    parse every stylesheet again once the app runs (the one ``App.__init__`` made holds
    the default theme's variables), before the first frame. A light theme still goes
    through the watcher, which also turns Textual's ANSI colour mapping to its light
    palette (there is no public switch for that)."""
    theme = app.available_themes.get(name)
    if theme is None:
        return False
    if not theme.dark:
        app.theme = name
        return True
    app.set_reactive(App.theme, name)
    app.set_class(True, f"-theme-{name}", "-dark-mode", update=False)
    app.set_class(False, "-light-mode", update=False)
    app.stylesheet.set_variables(app.get_css_variables())
    return True
