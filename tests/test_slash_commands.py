"""The slash-command registry: parsing, templates, suggestions, and custom command files
read from a real project and a real user config folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.prompt.custom_commands import load_registry
from app.prompt.slash_commands import CommandError, SlashCommand, expand_template, parse, session_handler


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home")}


def user_command(env: dict[str, str], name: str, text: str) -> Path:
    path = Path(env["HOME"]) / ".config" / "opencode" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def project_command(root: Path, name: str, text: str) -> Path:
    path = root / ".opencode" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("/undo", ("undo", "")),
        ("  /hello world  ", ("hello", "world")),
        ("/hello\nsecond line", ("hello", "second line")),
        ("/git-commit.v2 -m 'x'", ("git-commit.v2", "-m 'x'")),
        ("/usr/bin/env is broken", None),
        ("explain /undo", None),
        ("/", None),
        ("/ hello", None),
    ],
)
def test_parse(text: str, parsed: tuple[str, str] | None) -> None:
    assert parse(text) == parsed


def test_template_placeholders() -> None:
    assert expand_template("Say hello to $ARGUMENTS", "world") == "Say hello to world"
    assert expand_template("$2 then $1, all: $ARGUMENTS", '"a b" c') == 'c then a b, all: "a b" c'
    assert expand_template("missing [$3]", "one") == "missing []"
    assert expand_template("Review the diff", "carefully") == "Review the diff\n\ncarefully"
    assert expand_template("costs $5 and $ARGUMENTSX", "") == "costs  and $ARGUMENTSX"


def test_unclosed_quote_still_splits_words() -> None:
    assert expand_template("$1|$2", "it's fine") == "it's|fine"


def test_unknown_command_suggests_close_names(workspace: Path, env: dict[str, str]) -> None:
    registry = load_registry(workspace, env)
    with pytest.raises(CommandError) as raised:
        registry.resolve("/und", "tui")
    assert str(raised.value).startswith("unknown command /und: did you mean /undo")
    with pytest.raises(CommandError) as raised:
        registry.resolve("/modles", "tui")
    assert str(raised.value).startswith("unknown command /modles: did you mean /models")


def test_screen_commands_work_in_the_tui_only(workspace: Path, env: dict[str, str]) -> None:
    registry = load_registry(workspace, env)
    assert registry.resolve("/theme", "tui").command.kind == "screen"
    with pytest.raises(CommandError, match=r"^/theme works in the TUI only, not in headless runs \(-p\)$"):
        registry.resolve("/theme dark", "headless")
    headless = [command.name for command in registry.available("headless")]
    assert headless == ["undo", "redo", "rewind", "compact", "context", "jobs", "export", "init", "hooks", "skills"]
    with pytest.raises(CommandError) as raised:
        registry.resolve("/thme", "headless")  # a TUI-only name is not suggested where it cannot run
    assert "/theme" not in str(raised.value)


def test_init_sends_its_packaged_prompt(workspace: Path, env: dict[str, str]) -> None:
    invocation = load_registry(workspace, env).resolve("/init mention the Makefile", "headless")
    prompt = invocation.prompt()
    assert "AGENTS.md" in prompt and prompt.endswith("mention the Makefile")
    assert "$ARGUMENTS" not in load_registry(workspace, env).resolve("/init", "acp").prompt()


def test_every_session_command_has_its_function_and_one_without_says_so(workspace: Path, env: dict[str, str]) -> None:
    registry = load_registry(workspace, env)
    for command in registry.available("headless"):
        if command.kind == "session":
            assert callable(session_handler(command)), command.name
    with pytest.raises(CommandError, match="^/later is not available in this version of opencode$"):
        session_handler(SlashCommand("later", "Not written yet", "session"))


def test_the_users_own_command_wins_over_the_projects_of_the_same_name(workspace: Path, env: dict[str, str]) -> None:
    """A repository cannot replace a command the user wrote for themselves: theirs is
    used, and one notice names the project's file left out."""
    mine = user_command(env, "hello", "Hi from the user to $ARGUMENTS")
    user_command(env, "mine", "---\ndescription: only mine\n---\nDo my thing")
    theirs = project_command(workspace, "hello", "---\ndescription: Greet\nagent: plan\n---\nSay hello to $ARGUMENTS\n")
    project_command(workspace, "greet", "---\ndescription: Greet\nagent: plan\nmodel: openai/gpt-5\n---\nHello $1\n")
    registry = load_registry(workspace, env)
    assert registry.notices == [f"custom command {theirs} not loaded: your own /hello ({mine}) is used"]
    hello = registry.resolve("/hello world", "acp")
    assert hello.prompt() == "Hi from the user to world" and not hello.command.repository
    greet = registry.resolve("/greet you", "acp")
    assert greet.prompt() == "Hello you" and greet.command.repository
    assert (greet.command.description, greet.command.agent, greet.command.model) == ("Greet", "plan", "openai/gpt-5")
    assert registry.get("mine").description == "only mine"
    names = [command.name for command in registry.available("tui")]
    assert names[-3:] == ["greet", "hello", "mine"]  # after the built-ins


def test_description_defaults_to_the_first_line(workspace: Path, env: dict[str, str]) -> None:
    project_command(workspace, "review", "Review the staged changes\nand list risks.")
    assert load_registry(workspace, env).get("review").description == "Review the staged changes"


def test_xdg_config_home_holds_the_user_commands(workspace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "xdg" / "opencode" / "commands"
    folder.mkdir(parents=True)
    (folder / "xdg.md").write_text("From XDG")
    registry = load_registry(workspace, {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    assert registry.get("xdg").template == "From XDG"


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("open", "---\ndescription: x\n", "front matter opened with --- is never closed"),
        ("yaml", "---\ndescription: [x\n---\nbody", "front matter at line"),
        ("typo", "---\ndescripton: x\n---\nbody", "unknown front-matter key 'descripton': use description, agent, model"),
        ("kind", "---\nmodel: 3\n---\nbody", "model must be text, not int"),
        ("empty", "---\ndescription: nothing\n---\n", "the prompt template is empty"),
        ("undo", "my own undo", "/undo is a built-in command: rename the file"),
        ("bad name", "body", "'bad name' is not a command name"),
    ],
)
def test_a_bad_file_is_one_line_naming_it(workspace: Path, env: dict[str, str], name: str, text: str, problem: str) -> None:
    path = project_command(workspace, name, text)
    project_command(workspace, "good", "Still loads")
    registry = load_registry(workspace, env)
    assert len(registry.notices) == 1
    (notice,) = registry.notices
    assert "\n" not in notice and str(path) in notice and problem in notice
    assert registry.get("good") is not None


def test_a_file_where_the_commands_folder_would_be_is_no_folder_of_commands(workspace: Path, env: dict[str, str]) -> None:
    (workspace / ".opencode").write_text("a file, not the data folder\n")
    registry = load_registry(workspace, env)
    assert registry.notices == [] and registry.get("init") is not None


def test_binary_file_is_refused(workspace: Path, env: dict[str, str]) -> None:
    path = project_command(workspace, "bin", "")
    path.write_bytes(b"\xff\xfe\x00binary")
    registry = load_registry(workspace, env)
    assert registry.notices == [f"custom command not loaded: {path}: not UTF-8 text: save it as UTF-8"]
    assert registry.get("bin") is None


def test_runtime_reads_the_commands_on_first_use(runtime, workspace: Path) -> None:
    project_command(workspace, "hello", "Say hello to $ARGUMENTS")
    assert "commands" not in vars(runtime)
    assert runtime.commands.resolve("/hello world", "headless").prompt() == "Say hello to world"
