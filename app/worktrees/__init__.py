"""`opencode --worktree NAME` and `opencode worktree list|remove`: git
worktrees under the data folder (repository) and the command line's side
(command_line), and the TUI's ``/worktree NAME`` (restart). See docs/worktrees.md."""
