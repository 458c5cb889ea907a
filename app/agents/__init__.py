"""The agents: the built-in ones and the catalog (catalog), and the user's
agent files in `.opencode/agents/` (files)."""
