"""`opencode serve`: one warm agent process that `-p` runs and editors attach to, over a
socket only its owner can reach. See docs/serve.md."""
