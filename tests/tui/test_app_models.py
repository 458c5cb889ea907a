"""Which model the app starts with and which the models screen offers."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input, OptionList

from app.config import Config
from app.llm.provider import litellm_imported
from app.llm.scripted import DEMO_MODEL
from app.tui.model_choice import available_models, model_label, startup_model
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


async def test_the_models_screen_offers_the_catalog_of_providers_with_keys_and_the_demo():
    config = Config.model_validate(
        {"providers": {"openai": {"baseURL": "http://localhost:8080/v1"}, "xai": {"disabled": True},
                       "gemini": {}, "ollama": {"baseURL": "http://127.0.0.1:9"}},
         "agents": {"coder": {"model": "openai/local-qwen"}}}
    )
    env = {"ANTHROPIC_API_KEY": "sk", "XAI_API_KEY": "sk"}

    models = [choice.model for choice in await available_models(config, env, "openai/local-qwen")]

    assert models[0] == "openai/local-qwen" and models[-1] == DEMO_MODEL
    providers = {model.split("/", 1)[0] for model in models[1:-1]}
    assert providers == {"anthropic"}  # xai is disabled, openai and gemini have no key, no ollama answers
    assert "anthropic/claude-sonnet-4-5" in models


def test_a_remembered_model_comes_after_the_flag_and_the_config():
    configured = Config.model_validate({"agents": {"coder": {"model": "openai/gpt-4.1"}}})
    assert startup_model(None, Config(), {}, "anthropic/claude-opus-4-1") == ("anthropic/claude-opus-4-1", None)
    assert startup_model(None, configured, {}, "anthropic/claude-opus-4-1") == ("openai/gpt-4.1", None)
    assert startup_model("groq/llama", configured, {}, "anthropic/claude-opus-4-1") == ("groq/llama", None)


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


async def test_the_picker_filters_fuzzily_shows_prices_and_the_pick_is_remembered(make_app, tui_runtime):
    env = {"ANTHROPIC_API_KEY": "sk-test"}
    app = make_app(env=env)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.model == "anthropic/claude-sonnet-4-5")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelsScreen), timeout=60)
        await pilot.press(*"hiku 4.5")  # a typo, and a dot for a dash
        listing = app.screen.query_one("#models-list", OptionList)
        await wait_until(pilot, lambda: listing.option_count and listing.highlighted == 0, timeout=60)
        first = listing.get_option_at_index(0)
        assert first.id == "anthropic/claude-haiku-4-5"
        info = (await litellm_imported()).model_cost["claude-haiku-4-5"]
        prices = f"${info['input_cost_per_token'] * 1e6:.2f}/${info['output_cost_per_token'] * 1e6:.2f} per M"
        assert f"{info['max_input_tokens'] // 1000}k ctx · {prices}" in str(first.prompt)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model == "anthropic/claude-haiku-4-5")

    again = make_app(env=env)  # the same project, started without --model
    async with again.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: again.model == "anthropic/claude-haiku-4-5")
