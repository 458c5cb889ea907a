"""The committed schema and example stay true to the models."""

import json
import shutil
from pathlib import Path

import pytest

from app.config import config_json_schema, load_config, schema_text

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / ".opencode.json.example"
SCHEMA_FILE = REPO / "opencode-schema.json"


def test_the_committed_schema_is_current() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "opencode-schema.json is stale: run `make schema` and commit the result"
    )


def test_the_schema_is_stable_and_keyed_by_json_names() -> None:
    schema = config_json_schema()

    assert schema == config_json_schema()
    assert schema_text() == json.dumps(schema, indent=2, sort_keys=True) + "\n"
    assert schema["additionalProperties"] is False
    assert {"$schema", "mcpServers", "contextPaths", "autoCompact", "permission", "tools"} <= set(schema["properties"])
    assert "maxFiles" in schema["$defs"]["DeleteToolConfig"]["properties"]


def test_the_example_loads_and_carries_spec_000_delete_rules(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / ".opencode.json")

    config = load_config(tmp_path, env={"HOME": str(tmp_path / "no-home")})

    assert config.permission.rules["delete"] == {"*": "ask", "tmp/*": "allow", "*.go": "deny"}
    assert "delete" in config.agents.coder.permission


def test_the_example_shows_every_key_of_every_section() -> None:
    schema = config_json_schema()
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    every_key = {(TOP, key) for key in schema["properties"]} | {
        (section, key) for section, definition in schema["$defs"].items() for key in definition.get("properties", {})
    }

    # The example is a project file: keys only the user's config may set cannot be in it.
    user_only = {("WebfetchToolConfig", "allowPrivate"), ("ToolsConfig", "webfetch")} | {
        ("SandboxConfig", key) for key in ("mechanism", "network", "writable")
    }
    missing = every_key - _keys_shown(schema, schema, example, TOP) - user_only

    assert not missing, f".opencode.json.example does not show: {sorted(missing)}"


def test_the_example_validates_against_the_schema() -> None:
    import jsonschema  # a dev dependency: the schema must work with a real validator
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))

    jsonschema.validate(example, config_json_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**example, "permission": {"rules": {"delete": "nope"}}}, config_json_schema())


TOP = "(top level)"


def _keys_shown(root: dict, schema: dict, value: object, section: str) -> set[tuple[str, str]]:
    """(section, key) pairs the example uses, following the schema down through $refs,
    maps, lists and optional sections (anyOf a $ref and null)."""
    refs = [branch for branch in schema.get("anyOf", []) if "$ref" in branch]
    if len(refs) == 1:
        schema = refs[0]
    if "$ref" in schema:
        section = schema["$ref"].rsplit("/", 1)[1]
        schema = root["$defs"][section]
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return {pair for item in value for pair in _keys_shown(root, schema["items"], item, section)}
    if not isinstance(value, dict):
        return set()
    shown: set[tuple[str, str]] = set()
    if "properties" in schema:
        for key, sub in value.items():
            shown.add((section, key))
            shown |= _keys_shown(root, schema["properties"].get(key, {}), sub, section)
    elif isinstance(schema.get("additionalProperties"), dict):
        for entry in value.values():
            shown |= _keys_shown(root, schema["additionalProperties"], entry, section)
    return shown
