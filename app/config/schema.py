"""The JSON Schema of `.opencode.json`, for editors (``"$schema"``) and `opencode schema`."""

from __future__ import annotations

import json
from typing import Any

from pydantic.json_schema import GenerateJsonSchema

from app.config.models import Config

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _WithoutFieldTitles(GenerateJsonSchema):
    """pydantic titles fields from their Python names ("Maxtokens"); the keys say it better."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def config_json_schema() -> dict[str, Any]:
    """The schema of the file format (camelCase keys), the same on every call."""
    schema = Config.model_json_schema(by_alias=True, schema_generator=_WithoutFieldTitles)
    schema.update(
        {
            "$schema": SCHEMA_DIALECT,
            "title": "opencode configuration (.opencode.json)",
            "description": "Global ($XDG_CONFIG_HOME/opencode/.opencode.json or ~/.opencode.json) "
            "and project (.opencode.json at the workspace root) settings; see docs/configuration.md.",
        }
    )
    return schema


def schema_text() -> str:
    """The exact text of opencode-schema.json (what `opencode schema` prints)."""
    return json.dumps(config_json_schema(), indent=2, sort_keys=True) + "\n"
