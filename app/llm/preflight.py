"""The checks a model passes before any request: litellm can serve its name, and its
provider has an API key. Both read only the environment, the config and litellm's data
files, so a wrong --model or a missing key is one line at once, never a retried request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.llm.api_keys import missing_key_problem
from app.llm.model_names import model_name_problem


def model_problem(model: str, providers_config: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """Why ``model`` cannot be used as configured (one line saying what to do), or None."""
    return model_name_problem(model, providers_config) or missing_key_problem(model, providers_config, env)
