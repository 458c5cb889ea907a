"""Which model the app starts with and which the models screen offers."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input

from app.config import Config
from app.llm.scripted import DEMO_MODEL
from app.tui.model_choice import available_models, configured_providers, model_label, startup_model
from app.tui.screens.help import help_rows
from app.tui.screens.models import ModelsScreen
from app.tui.widgets.message_notice import ChatNotice
from tests.tui.conftest import wait_until


def test_with_no_provider_the_demo_is_chosen_and_the_note_says_what_to_set():
    model, note = startup_model(None, Config(), {})
    assert model == DEMO_MODEL
    assert note is not None and "ANTHROPIC_API_KEY" in note and "offline demo" in note


def test_a_key_in_the_environment_or_a_flag_chooses_the_model_without_a_note():
    assert startup_model(None, Config(), {"OPENAI_API_KEY": "sk"}) == ("openai/gpt-5", None)
    assert startup_model("groq/llama", Config(), {}) == ("groq/llama", None)


def test_the_models_screen_offers_configured_providers_and_the_demo():
    config = Config.model_validate(
        {"providers": {"openai": {"baseURL": "http://localhost:8080/v1"}, "xai": {"disabled": True},
                       "gemini": {}, "ollama": {}},
         "agents": {"coder": {"model": "openai/local-qwen"}}}
    )
    env = {"ANTHROPIC_API_KEY": "sk", "XAI_API_KEY": "sk"}
    assert configured_providers(config, env) == ["anthropic", "openai", "ollama"]
    models = [choice.model for choice in available_models(config, env, "openai/local-qwen")]
    assert models == ["openai/local-qwen", "anthropic/claude-sonnet-4-5", "openai/gpt-5", DEMO_MODEL]


def test_labels_are_short():
    assert model_label(DEMO_MODEL) == "demo (offline)"
    assert model_label("scripted//tmp/x/flow.json") == "scripted: flow.json"
    assert model_label("anthropic/claude-sonnet-4-5") == "anthropic/claude-sonnet-4-5"


def test_help_rows_join_every_key_of_a_binding_and_apply_remaps():
    bindings = [
        Binding("shift+enter,ctrl+j", "newline", "New line", id="prompt.newline"),
        Binding("enter", "submit", "Send", id="prompt.send"),
        Binding("x", "secret", show=False),  # no id, no description: not listed
    ]
    rows = help_rows(bindings, {"prompt.send": "ctrl+s,f2"})
    assert [(r.keys, r.description, r.binding_id) for r in rows] == [
        ("shift+enter / ctrl+j", "New line", "prompt.newline"),
        ("ctrl+s / f2", "Send", "prompt.send"),
    ]


async def test_a_prompt_to_a_model_without_its_key_says_which_variable_and_keeps_the_prompt(make_app):
    app = make_app(DEMO_MODEL)  # the environment holds no key
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None)
        # The model the next prompt goes to, set without use_model, whose import of
        # litellm (seconds of CPU) this test does not need: nothing may reach litellm.
        app.model = "openai/gpt-4o-mini"
        await pilot.press(*"hi there", "enter")
        await wait_until(pilot, lambda: app.query(ChatNotice))
        notice = app.query_one(ChatNotice)
        assert (
            notice.kind == "error"
            and "set OPENAI_API_KEY" in notice.text
            and "providers.openai.apiKey" in notice.text
        )
        assert app.prompt.text == "hi there" and app.session_id is None and not app.turn_running


async def test_a_typed_model_litellm_does_not_know_is_refused_with_close_matches(make_app):
    app = make_app(DEMO_MODEL)
    chosen: list[str | None] = []
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None)
        # The screen ctrl+o opens, its answer kept here rather than given to use_model,
        # whose import of litellm (seconds of CPU) this test does not need.
        app.push_screen(ModelsScreen([], DEMO_MODEL, ["mylab"]), chosen.append)
        await wait_until(pilot, lambda: isinstance(app.screen, ModelsScreen))
        await pilot.press(*"antropic/claude-sonnet-4-5", "enter")
        await wait_until(pilot, lambda: app.screen.query("Toast"))
        toast = str(app.screen.query("Toast").last().render())
        assert "no provider called 'antropic'" in toast and "anthropic" in toast
        assert isinstance(app.screen, ModelsScreen) and chosen == []
        filter_input = app.screen.query_one("#models-filter", Input)
        filter_input.value = "mylab/model-7"  # a provider the config names: taken on trust
        await pilot.press("enter")
        await wait_until(pilot, lambda: chosen == ["mylab/model-7"])
