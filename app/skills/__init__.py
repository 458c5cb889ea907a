"""Skills: instructions in folders that the agent loads when a task needs them
(app/skills/catalog.py, the ``skill`` tool in app/tools/skill.py, docs/skills.md)."""
