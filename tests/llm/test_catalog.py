"""The models catalog: litellm's chat models per provider with a key (context window,
prices), custom providers' configured models, a local Ollama's models, fuzzy filtering,
and the project's last used model."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app.config import Config
from app.llm.catalog import (
    CatalogEntry,
    build_catalog,
    fuzzy_filter,
    ollama_url,
    remember_model,
    remembered_model,
)
from app.llm.provider import litellm_imported

NO_OLLAMA = {"ollama": {"baseURL": "http://127.0.0.1:9"}}  # the discard port: nothing answers


class _Tags(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        body = json.dumps({"models": [{"name": "llama3.2:latest"}, {"name": "qwen2.5-coder:7b"}]}).encode()
        self.send_response(200 if self.path == "/api/tags" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return


@pytest.fixture
def fake_ollama() -> Iterator[str]:
    """A server answering Ollama's GET /api/tags; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Tags)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def model_cost() -> dict:
    return (await litellm_imported()).model_cost


async def test_a_provider_with_a_key_lists_litellms_chat_models_with_window_and_prices():
    providers = Config.model_validate({"providers": NO_OLLAMA}).providers

    catalog = build_catalog(providers, {"ANTHROPIC_API_KEY": "sk"}, await model_cost())

    by_model = {entry.model: entry for entry in catalog}
    sonnet = by_model["anthropic/claude-sonnet-4-5"]
    assert (sonnet.context_window, sonnet.input_price, sonnet.output_price) == (200_000, 3.0, 15.0)
    assert sonnet.facts() == "200k ctx · $3.00/$15.00 per M"
    assert {entry.provider for entry in catalog} == {"anthropic"}


async def test_custom_models_are_listed_with_their_configured_name_window_and_prices():
    config = Config.model_validate({"providers": {
        **NO_OLLAMA,
        "lmstudio": {"api": "openai", "baseURL": "http://127.0.0.1:1234/v1", "models": {
            "qwen3-coder": {"name": "Qwen3 Coder", "contextWindow": 32768, "cost": {"input": 0.5, "output": 1}}
        }},
    }})

    [entry] = build_catalog(config.providers, {}, await model_cost())

    assert entry == CatalogEntry("lmstudio/qwen3-coder", "Qwen3 Coder", "lmstudio", 32768, 0.5, 1.0)


def test_ollamas_local_models_are_listed_when_it_answers(fake_ollama: str):
    providers = Config.model_validate({"providers": {"ollama": {"baseURL": fake_ollama}}}).providers

    catalog = build_catalog(providers, {}, {})

    assert [entry.model for entry in catalog] == ["ollama_chat/llama3.2:latest", "ollama_chat/qwen2.5-coder:7b"]


def test_no_ollama_no_entries_and_its_address_defaults_to_its_port():
    providers = Config.model_validate({"providers": NO_OLLAMA}).providers
    assert build_catalog(providers, {}, {}) == []
    assert ollama_url({}, {}) == "http://localhost:11434"
    assert ollama_url({}, {"OLLAMA_HOST": "10.0.0.2:11434"}) == "http://10.0.0.2:11434"


def test_filtering_is_fuzzy_with_substring_matches_first():
    entries = [CatalogEntry(model, model, model.split("/")[0]) for model in (
        "anthropic/claude-opus-4-1", "anthropic/claude-sonnet-4-5", "openai/gpt-5", "gemini/gemini-2.5-pro",
    )]

    assert [e.model for e in fuzzy_filter(entries, "gpt")] == ["openai/gpt-5"]
    assert fuzzy_filter(entries, "sonet 4.5")[0].model == "anthropic/claude-sonnet-4-5"
    assert fuzzy_filter(entries, "snt45")[0].model == "anthropic/claude-sonnet-4-5"  # letters in order
    assert fuzzy_filter(entries, "") == entries
    assert fuzzy_filter(entries, "zzzz qqq") == []


def test_the_last_used_model_is_remembered_per_project(tmp_path: Path):
    data = tmp_path / ".opencode"
    assert remembered_model(data) is None
    remember_model(data, "anthropic/claude-sonnet-4-5")
    assert remembered_model(data) == "anthropic/claude-sonnet-4-5"
