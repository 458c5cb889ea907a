"""Hooks: the user's own commands run at fixed points of the agent's work (docs/hooks.md).
``config`` reads where they are declared, ``events`` the JSON they read, ``runner`` runs
them, ``trust`` remembers the project hook sets the user trusts, ``service`` puts these
together for the runtime (``Runtime.hooks``)."""
