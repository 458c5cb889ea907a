"""opencode: a terminal coding assistant. Core services live in the sub-packages; front-ends in tui/, acp/, cli.py."""

__version__ = "0.1.0"
