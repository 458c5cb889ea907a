"""Command-line entry point. Imports of heavy front-ends happen inside the command that
needs them, so `opencode tool ...` and `opencode schema` stay fast (no textual, no litellm)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from app import __version__
from app.core import gc_policy
from app.core.errors import OpencodeError, shown_if_not_utf8

if TYPE_CHECKING:
    from app.headless.run_request import HeadlessRequest

USAGE_ERROR = 2


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors already; this keeps its message to one line."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _minutes(text: str) -> float:
    """A number of minutes above 0 (serve.idleTimeout's rule): not negative, nan or inf."""
    try:
        minutes = float(text)
    except ValueError:
        minutes = math.nan
    if not 0 < minutes < math.inf:
        raise argparse.ArgumentTypeError(f"{text!r} is no number of minutes above 0, e.g. 30")
    return minutes


def _add_workspace_option(parser: argparse.ArgumentParser, default: object = argparse.SUPPRESS) -> None:
    """`-C DIR` is accepted before or after the subcommand; subcommands keep the top-level
    value unless they are given their own (hence SUPPRESS as their default)."""
    parser.add_argument(
        "-C", dest="workspace", type=Path, default=default, metavar="DIR",
        help="the workspace directory (default: the current directory)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="opencode",
        description="A terminal coding assistant. Without a subcommand, starts the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"opencode {__version__}")
    _add_workspace_option(parser, default=None)
    parser.add_argument("-p", "--prompt", default=None, metavar="PROMPT",
                        help="run one prompt without the TUI and print the answer ('-' reads it from standard input)")
    parser.add_argument("-f", "--output-format", choices=("text", "json"), default="text",
                        help="with -p: text, or one JSON object {session_id, response, usage, cost, files_changed, files_deleted}")
    parser.add_argument("-q", "--quiet", action="store_true", help="with -p: no progress lines on stderr")
    parser.add_argument("--yes", action="store_true",
                        help="with -p: approve what would be asked (deny rules still apply)")
    parser.add_argument("--model", default=None, metavar="MODEL",
                        help="the model, e.g. anthropic/claude-sonnet-4-5, openai/gpt-5, scripted/PATH.json")
    parser.add_argument("--agent", default="coder", metavar="NAME",
                        help="with -p: the primary agent: coder (default), plan (reads and plans, changes nothing) or one of .opencode/agents")
    parser.add_argument("-c", "--continue", dest="continue_last", action="store_true",
                        help="continue the most recent conversation (not an 'opencode tool' call's session)")
    parser.add_argument("--session", dest="session_id", default=None, metavar="ID",
                        help="with -p: continue this session")
    parser.add_argument("--trust-project-hooks", action="store_true",
                        help="with -p: run the hooks this workspace's .opencode.json or .claude/ declare "
                        "without asking (they are skipped until trusted)")
    parser.add_argument("--worktree", default=None, metavar="NAME",
                        help="work in the git worktree NAME (made on a new branch NAME when missing; docs/worktrees.md)")
    attach = parser.add_mutually_exclusive_group()
    attach.add_argument("--attach", dest="attach", action="store_const", const="require", default="auto",
                        help="with -p: run on the 'opencode serve' server, failing when none listens "
                        "(the default is to attach when one listens)")
    attach.add_argument("--no-attach", dest="attach", action="store_const", const="never",
                        help="with -p: run in this process even when a server listens")
    commands = parser.add_subparsers(dest="command", title="subcommands", metavar="COMMAND", parser_class=_Parser)

    commands.add_parser("schema", help="print the JSON Schema of .opencode.json")

    permission = commands.add_parser("permission", help="inspect permission rules")
    permission_commands = permission.add_subparsers(dest="permission_command", metavar="ACTION", required=True)
    check = permission_commands.add_parser(
        "check", help="print the action for TOOL on SUBJECT and the rule that decided it"
    )
    check.add_argument("tool", metavar="TOOL", help="a tool key: delete, edit, bash, ...")
    check.add_argument("subject", metavar="SUBJECT", help="a path (for path tools) or a command (for bash)")
    check.add_argument("--agent", default="coder", help="the agent whose rules apply (default: coder)")
    _add_workspace_option(check)

    sandbox = commands.add_parser("sandbox", help="print the sandbox bash commands run in: mechanism and policy")
    sandbox.add_argument("--agent", default="coder", help="the agent whose rules apply (default: coder)")
    _add_workspace_option(sandbox)

    tool = commands.add_parser("tool", help="run one tool call through the agent's pipeline and print JSON")
    tool.add_argument("name", metavar="NAME", help="the tool: view, edit, patch, delete, bash, ...")
    tool.add_argument("arguments", metavar="JSON", nargs="?", default=None,
                      help="the arguments as one JSON object, or - to read them from standard input")
    tool.add_argument("--yes", action="store_true", help="approve what would be asked (deny rules still apply)")
    tool.add_argument("--session", default=None, metavar="ID", help="record in this session (default: a new one)")
    _add_workspace_option(tool)

    acp = commands.add_parser("acp", help="serve the agent to editors over the Agent Client Protocol (stdio)")
    _add_workspace_option(acp)

    serve = commands.add_parser(
        "serve", help="serve the agent over ACP on a socket only you can reach; -p attaches to it (docs/serve.md)"
    )
    control = serve.add_mutually_exclusive_group()
    control.add_argument("--status", action="store_true", help="print the running server's state as JSON")
    control.add_argument("--stop", action="store_true", help="stop the running server")
    serve.add_argument("--listen", default=None, metavar="HOST:PORT",
                       help="also listen on TCP, loopback only, for clients that send the token (serve.token)")
    serve.add_argument("--idle-timeout", type=_minutes, default=None, metavar="MINUTES",
                       help="exit after this long with no client (default: serve.idleTimeout, 15)")

    changes = commands.add_parser("changes", help="list the files a session changed")
    which = changes.add_mutually_exclusive_group()
    which.add_argument("--session", default=None, metavar="ID", help="the session to show")
    which.add_argument("--last", action="store_true", help="the most recent conversation (the default)")
    changes.add_argument("--json", action="store_true", help="print JSON instead of text")
    changes.add_argument(
        "--include-tool", action="store_true",
        help="let --last pick the session of an 'opencode tool' call too (skipped by default)",
    )
    _add_workspace_option(changes)

    worktree = commands.add_parser("worktree", help="list or remove the git worktrees --worktree made")
    worktree_commands = worktree.add_subparsers(dest="worktree_command", metavar="ACTION", required=True)
    worktree_commands.add_parser("list", help="each worktree: its branch, state, sessions and folder")
    remove = worktree_commands.add_parser("remove", help="remove a worktree's checkout (its branch stays)")
    remove.add_argument("name", metavar="NAME")
    remove.add_argument("--force", action="store_true", help="remove it even with uncommitted changes (they are lost)")
    for worktree_command in worktree_commands.choices.values():
        _add_workspace_option(worktree_command)

    export = commands.add_parser("export", help="write a session's transcript: prompts, answers, tool calls, diffs")
    chosen = export.add_mutually_exclusive_group()
    chosen.add_argument("--session", default=None, metavar="ID", help="the session to export")
    chosen.add_argument("--last", action="store_true", help="the most recent conversation (the default)")
    export.add_argument("--format", choices=("md", "json"), default="md",
                        help="markdown for people (default), or JSON as docs/export.md describes")
    export.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                        help="write to FILE (refused if it exists, unless --force) instead of standard output")
    export.add_argument("--force", action="store_true", help="with -o: replace FILE if it exists")
    _add_workspace_option(export)
    return parser


def _workspace(args: argparse.Namespace) -> Path:
    root = (args.workspace or Path.cwd()).expanduser()
    if not root.is_dir():
        raise OpencodeError(f"workspace {root} is not a directory: pass an existing directory to -C")
    return root.resolve()


def _cmd_schema(args: argparse.Namespace) -> int:
    from app.config import schema_text

    sys.stdout.write(schema_text())
    return 0


def _cmd_permission(args: argparse.Namespace) -> int:
    from app.agents.files import load_catalog
    from app.config import load_config
    from app.permission.explain import explain
    from app.tools.registry import canonical_name

    root = _workspace(args)
    config = load_config(root)
    catalog = load_catalog(root, os.environ)  # plan mode's and agent files' rules count too
    for notice in catalog.notices:
        print(f"opencode: {notice}", file=sys.stderr)
    agents, known = catalog.rules(), list(catalog.agents)
    args.tool = canonical_name(args.tool)
    if args.tool == "bash":  # judged part by part, as the bash tool judges it
        from app.permission.shell.judge import explain_command

        print(explain_command(config, root, args.subject, args.agent, agents, known))
    elif args.tool == "fetch":  # the URL as webfetch spells it for the rules
        from app.tools.web_address import web_target

        url = web_target(args.subject).url
        print(explain(config, root, args.tool, url, args.agent, agents, known))
        print(f"  fetch {url}")
    else:
        print(explain(config, root, args.tool, args.subject, args.agent, agents, known))
    return 0


def _cmd_sandbox(args: argparse.Namespace) -> int:
    from app.sandbox.report import sandbox_report

    print(sandbox_report(_workspace(args), args.agent))
    return 0


def _cmd_tool(args: argparse.Namespace) -> int:
    from app.headless.oneshot import run_tool

    return run_tool(_workspace(args), args.name, args.arguments, yes=args.yes, session_id=args.session)


def _cmd_changes(args: argparse.Namespace) -> int:
    from app.headless.oneshot import show_changes

    return show_changes(
        _workspace(args), session_id=args.session, as_json=args.json, include_tool=args.include_tool
    )


def _cmd_export(args: argparse.Namespace) -> int:
    from app.headless.oneshot import export_session

    return export_session(
        _workspace(args), session_id=args.session, fmt=args.format, output=args.output, force=args.force
    )


def _cmd_worktree(args: argparse.Namespace) -> int:
    from app.worktrees.command_line import list_worktrees, remove_worktree

    if args.worktree_command == "list":
        return list_worktrees(_workspace(args))
    return remove_worktree(_workspace(args), args.name, force=args.force)


def _cmd_serve(args: argparse.Namespace) -> int:
    from app.serve.server import control, run_serve

    if args.status or args.stop:
        return control("opencode/status" if args.status else "opencode/stop")
    return run_serve(listen=args.listen, idle_minutes=args.idle_timeout)


def _cmd_acp(args: argparse.Namespace) -> int:
    from app.acp import run_acp

    return run_acp(args.workspace)


COMMANDS: dict[str | None, Callable[[argparse.Namespace], int]] = {
    "schema": _cmd_schema,
    "permission": _cmd_permission,
    "sandbox": _cmd_sandbox,
    "tool": _cmd_tool,
    "changes": _cmd_changes,
    "export": _cmd_export,
    "acp": _cmd_acp,
    "serve": _cmd_serve,
    "worktree": _cmd_worktree,
}
def _cmd_default(args: argparse.Namespace) -> int:
    """No subcommand: a headless turn with -p, else the TUI (in a worktree with --worktree)."""
    root = _workspace(args)
    if args.worktree is not None:
        from app.worktrees.command_line import enter_worktree

        root = enter_worktree(root, args.worktree)
        args.attach = "never"  # a server keeps its data where the workspace does, not the worktree's
    if args.prompt is not None:
        from app.headless.run_request import HeadlessRequest

        request = HeadlessRequest(
            _prompt_text(args.prompt), output_format=args.output_format, quiet=args.quiet, yes=args.yes, model=args.model,
            continue_last=args.continue_last, session_id=args.session_id, agent=args.agent,
            trust_project_hooks=args.trust_project_hooks,
        )  # fmt: skip
        environment = dict(os.environ)  # as the shell gave it, before litellm's defaults join it
        attached = _run_attached(root, request, args.attach, environment)
        if attached is not None:
            return attached
        gc_policy.pause()  # start-up: the turn resumes it once litellm is imported (app/core/gc_policy.py)
        from app.headless.run import EXIT_INTERRUPTED, run_headless

        code = run_headless(root, request)
        if args.attach == "auto" and code != EXIT_INTERRUPTED:  # ctrl+c: the person wants it all gone
            from app.serve.autostart import leave_server_behind

            leave_server_behind(environment)
        return code
    if args.model:
        _check_model_name(root, args.model)
    _require_terminal()
    gc_policy.pause()  # the app resumes it once started (OpencodeApp's pause_gc, which run_tui sets)
    from app.tui.app import run_tui

    return run_tui(root, model=args.model, continue_last=args.continue_last)


def _prompt_text(prompt: str) -> str:
    """The prompt of -p: ``-`` is standard input, read to its end (`git diff | opencode -p -`)."""
    if prompt != "-":
        return prompt
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise OpencodeError("-p -: standard input is not UTF-8 text: convert it (iconv -t UTF-8) and pipe it again") from None
    if not text.strip():
        raise OpencodeError("-p -: standard input was empty: pipe the prompt in, or give it as -p TEXT")
    return text


def _run_attached(root: Path, request: HeadlessRequest, attach: str, environment: dict[str, str]) -> int | None:
    """-p on the user's `opencode serve`, when one listens (or --attach requires it); None
    to run in this process (as with --trust-project-hooks, which the server's own hooks
    do not take). The client imports neither litellm nor the agent. A slash
    command runs in this process (it acts on the store, or sends its prompt once), so its
    output is the in-process run's by construction. So does a run from an environment
    that differs from the server's in what the server reads (a provider key, a base URL,
    an OPENCODE_* setting): it must not get the server's."""
    from app.prompt.slash_commands import parse

    if attach == "never" or parse(request.prompt) is not None or request.trust_project_hooks:
        return None
    from app.serve.client import EnvironmentDiffers, run_attached, server_socket

    sock = server_socket(required=attach == "require")
    if sock is None:
        return None
    try:
        return run_attached(sock, root, request, environment=environment)
    except EnvironmentDiffers as differs:
        if attach == "require":
            raise
        if not request.quiet:
            print(f"opencode: the server was started with another {', '.join(differs.names)}: "
                  "this run uses its own process", file=sys.stderr)  # fmt: skip
        return None


def _require_terminal() -> None:
    """The TUI reads keys from a terminal and draws on one: with either stream redirected
    (< /dev/null, > file) or closed it would wait for keys that never come, or fail."""
    for name, stream in (("input", sys.stdin), ("output", sys.stdout)):
        if stream is None or not stream.isatty():
            raise OpencodeError(
                f"the TUI needs a terminal, and standard {name} is not one: run opencode in a terminal, "
                "or give a prompt with -p to run it without the TUI"
            )


def _check_model_name(root: Path, model: str) -> None:
    """A --model name litellm cannot serve fails before the TUI starts, as a usage error
    (its API key is checked when a prompt is sent: the models screen may pick another)."""
    from app.config import load_config
    from app.llm.model_names import model_name_problem

    try:
        providers = load_config(root).providers
    except OpencodeError:
        return  # the TUI shows the config's own error
    problem = model_name_problem(model, providers)
    if problem is not None:
        raise OpencodeError(problem)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: the process's) and return its exit code."""
    return _dispatch(build_parser().parse_args(argv))


def console_main() -> NoReturn:
    """The ``opencode`` command itself: ``main``, then the end of the process."""
    args = build_parser().parse_args()
    try:
        code = _dispatch(args)
        if sys.stdout is not None:
            sys.stdout.flush()  # here, so a reader gone shows now and not in the interpreter's teardown
    except BrokenPipeError:
        code = _reader_gone()
    if args.command == "acp" or (args.command is None and args.prompt is not None):
        _end_now(code)
    sys.exit(code)


BROKEN_PIPE = 141
"""128 + SIGPIPE: the exit code a shell shows for a program that SIGPIPE ended (``cat big | head -1``)."""


def _reader_gone() -> int:
    """Output piped to a reader that closed (``| head -1``) ends the command quietly, as
    SIGPIPE ends a Unix tool: what is still buffered goes nowhere instead of into a
    second error when the interpreter flushes it at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return BROKEN_PIPE


ONE_SHOT = frozenset({"schema", "permission", "sandbox", "tool", "changes"})
"""Commands that do one thing and end: the collector stays paused while they run
(see app.core.gc_policy)."""


def _dispatch(args: argparse.Namespace) -> int:
    handler = COMMANDS.get(args.command, _cmd_default)
    try:
        _refuse_undecodable(args)
        if args.command in ONE_SHOT:
            with gc_policy.paused():
                return handler(args)
        return handler(args)
    except OpencodeError as err:
        print(f"opencode: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        return 130


def _refuse_undecodable(args: argparse.Namespace) -> None:
    """Text arguments (a prompt, a session id, a tool's JSON) must be UTF-8: bytes of
    another encoding (a Latin-1 terminal) reach Python as surrogates, which no stored text
    can hold. Paths (-C, -o) may be any bytes."""
    for value in vars(args).values():
        if isinstance(value, str) and (shown := shown_if_not_utf8(value)) is not None:
            raise OpencodeError(
                f"the argument {shown} is not UTF-8 text: set the terminal (or the script) to UTF-8 and give it again"
            )


def _end_now(code: int) -> NoReturn:
    """End the process at once, its output flushed, without the interpreter's teardown:
    the ACP SDK's client terminates an agent 2 s after closing its input, which that
    teardown can outlast; and after `-p`, which has closed its store and services before
    returning, the teardown would only free litellm's objects one by one, costing more
    CPU than the turn's own work."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: that descriptor was closed when the process started
                stream.flush()
        except OSError:  # the reader has gone: nothing to lose
            pass
    os._exit(code)


if __name__ == "__main__":
    console_main()
