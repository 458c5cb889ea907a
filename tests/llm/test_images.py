"""Images: attached to a prompt (@shot.png, a pasted path) or returned by view, they
reach a vision model as image parts through the real litellm client; a model without
vision gets one line and no request; the size cap is said plainly."""

from __future__ import annotations

import base64
import io
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from app.core.images import MAX_IMAGE_BYTES, ImageError, Mention, image_mentions
from app.headless.run import run_headless
from app.headless.run_request import HeadlessRequest
from app.llm.agent import AgentLoop
from app.llm.provider import Provider
from tests.llm.fake_anthropic import FakeAnthropic
from tests.llm.fake_openai import FakeOpenAI, Text, ToolCall

REPO = Path(__file__).resolve().parents[2]


def png(width: int = 2, height: int = 2) -> bytes:
    """A real, tiny PNG (grey pixels)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def image_blocks(request: dict) -> list[dict]:
    """Anthropic image blocks anywhere in a Messages request."""
    return [
        block
        for message in request["messages"] if isinstance(message["content"], list)
        for block in message["content"] if block.get("type") == "image"
    ]


def test_mentions_are_at_paths_and_pasted_absolute_paths_only():
    prompt = r"see @shot.png, /tmp/My\ Shot.png and '/tmp/a b.webp'; rename logo.png; read @src/app.py"

    assert image_mentions(prompt) == [
        Mention("shot.png", True), Mention("/tmp/My Shot.png", False), Mention("/tmp/a b.webp", False)
    ]


async def test_an_attached_image_reaches_a_vision_model_as_an_image_part(make_runtime, fake_anthropic: FakeAnthropic, workspace: Path):
    (workspace / "shot.png").write_bytes(png())
    runtime = make_runtime(config={"providers": {"anthropic": {"baseURL": fake_anthropic.base_url}}})
    loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env={"ANTHROPIC_API_KEY": fake_anthropic.api_key})
    fake_anthropic.reply(Text("A grey square."))

    result = await loop.run(runtime.store.sessions.create(title="t").id, "what is in @shot.png?", model=fake_anthropic.model)

    assert result.reason == "stop", result.error
    [block] = image_blocks(fake_anthropic.requests[0])
    assert block["source"] == {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png()).decode()}
    await loop.aclose()


async def test_a_model_without_vision_gets_one_line_and_nothing_is_sent(make_runtime, fake_llm: FakeOpenAI, workspace: Path):
    (workspace / "shot.png").write_bytes(png())
    runtime = make_runtime()
    loop = AgentLoop(runtime, Provider(), env=fake_llm.env)
    session = runtime.store.sessions.create(title="t").id

    with pytest.raises(ImageError) as caught:
        await loop.run(session, "what is in @shot.png?", model=fake_llm.model)

    assert str(caught.value) == (
        "openai/fake-model does not take images, so shot.png was not sent: "
        "choose a vision model (--model) or leave the image out"
    )
    assert fake_llm.requests == [] and runtime.store.messages.list(session) == []
    await loop.aclose()


async def test_an_image_over_the_cap_is_refused_with_the_limit(make_runtime, fake_anthropic, workspace: Path):
    (workspace / "huge.png").write_bytes(png() + b"\0" * MAX_IMAGE_BYTES)
    runtime = make_runtime(config={"providers": {"anthropic": {"baseURL": fake_anthropic.base_url}}})
    loop = AgentLoop(runtime, Provider(), env={"ANTHROPIC_API_KEY": fake_anthropic.api_key})

    with pytest.raises(ImageError) as caught:
        await loop.run(runtime.store.sessions.create(title="t").id, "look: @huge.png", model=fake_anthropic.model)

    assert str(caught.value) == "huge.png is 5.0 MB; images are capped at 5 MB (the providers' limit): shrink or crop it"
    assert fake_anthropic.requests == []
    await loop.aclose()


def vision_gateway(fake: FakeOpenAI, vision: bool) -> dict:
    models = {"fake-model": {"vision": vision}}
    return {"providers": {"gw": {"api": "openai", "baseURL": fake.base_url, "models": models}}, "lsp": {"python": {"disabled": True}}}


async def test_view_of_an_image_shows_it_to_a_vision_model(make_runtime, fake_llm: FakeOpenAI, workspace: Path):
    (workspace / "logo.png").write_bytes(png())
    runtime = make_runtime(config=vision_gateway(fake_llm, vision=True))
    loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env={})
    fake_llm.reply(ToolCall("view", json.dumps({"filePath": "logo.png"}), id="call_v"))
    fake_llm.reply(Text("It is grey."))

    result = await loop.run(runtime.store.sessions.create(title="t").id, "describe logo.png", model="gw/fake-model")

    assert result.reason == "stop", result.error
    messages = fake_llm.requests[1]["messages"]
    assert messages[-2] == {"role": "tool", "tool_call_id": "call_v", "content": f"logo.png is an image ({len(png())} bytes): it is shown to you below."}
    text, image = messages[-1]["content"]
    assert messages[-1]["role"] == "user" and text["type"] == "text"
    assert image == {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png()).decode()}}
    await loop.aclose()


async def test_view_of_an_image_for_a_model_without_vision_is_a_one_line_refusal(make_runtime, fake_llm, workspace: Path):
    (workspace / "logo.png").write_bytes(png())
    runtime = make_runtime(config=vision_gateway(fake_llm, vision=False))
    loop = AgentLoop(runtime, Provider(retry_base_delay=0.005), env={})
    fake_llm.reply(ToolCall("view", json.dumps({"filePath": "logo.png"}), id="call_v"))
    fake_llm.reply(Text("I cannot see it."))

    await loop.run(runtime.store.sessions.create(title="t").id, "describe logo.png", model="gw/fake-model")

    [tool] = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert tool["content"].startswith(f"logo.png is an image (PNG, {len(png())} bytes): view shows text only")
    assert "base64" not in json.dumps(fake_llm.requests[1])
    await loop.aclose()


def test_headless_refuses_an_image_for_a_model_without_vision_in_one_line(workspace: Path, fake_llm: FakeOpenAI):
    (workspace / "shot.png").write_bytes(png())
    env = fake_llm.env
    out, err = io.StringIO(), io.StringIO()

    request = HeadlessRequest("what is in @shot.png", model=fake_llm.model)
    code = run_headless(workspace, request, env=env, stdout=out, stderr=err)

    assert code == 2
    assert err.getvalue().splitlines() == [
        "opencode: error: openai/fake-model does not take images, so shot.png was not sent: "
        "choose a vision model (--model) or leave the image out"
    ]
    assert fake_llm.requests == [] and out.getvalue() == ""


def test_a_scripted_turn_asks_litellm_nothing(workspace: Path, tmp_path: Path):
    """Whether the model takes images is asked every turn: a script answers it itself, so
    the offline demo still never imports litellm."""
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"steps": [{"text": "hi"}]}]}))
    code = (
        "import io, sys\n"
        "from pathlib import Path\n"
        "from app.headless.run import run_headless\n"
        "from app.headless.run_request import HeadlessRequest\n"
        f"code = run_headless(Path({str(workspace)!r}), HeadlessRequest('hello', model='scripted/{script}'), env={{}},"
        " stdout=io.StringIO(), stderr=io.StringIO())\n"
        "print(code, 'litellm' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)

    assert done.stdout.split() == ["0", "False"], done.stderr


def test_an_image_mention_is_judged_as_view_judges_it(workspace: Path, tmp_path: Path, fake_llm: FakeOpenAI):
    """An image linked to outside (with reads there denied), one under a `view` deny, and
    one a repository command's template names outside: none reaches the model, each is
    said in one line, and the prompt itself is still sent; an allowed one is attached."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.png").write_bytes(png(3, 3))
    (outside / "pic.png").write_bytes(png(4, 4))
    (workspace / "logo.png").symlink_to(outside / "private.png")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "scan.png").write_bytes(png(5, 5))
    (workspace / "ok.png").write_bytes(png())
    rules = {"external_directory": "deny", "view": {"secrets/*": "deny"}}
    config = {**vision_gateway(fake_llm, vision=True), "permission": {"rules": rules}}
    (workspace / ".opencode.json").write_text(json.dumps(config))
    (workspace / ".opencode" / "commands").mkdir(parents=True)
    (workspace / ".opencode" / "commands" / "look.md").write_text("Describe @../outside/pic.png and @ok.png")
    fake_llm.reply(Text("seen"))
    fake_llm.reply(Text("seen again"))

    typed = run(workspace, fake_llm, "what are @logo.png, @secrets/scan.png and @ok.png?")
    from_template = run(workspace, fake_llm, "/look")

    assert typed[0] == from_template[0] == 0, (typed, from_template)
    linked, denied = typed[2].splitlines()
    assert linked.startswith("opencode: @logo.png was not attached: external_directory /")
    assert linked.endswith('denied by global rule "*"')
    assert denied == 'opencode: @secrets/scan.png was not attached: view secrets/scan.png: denied by global rule "secrets/*"'
    assert from_template[2].splitlines() == [
        "opencode: @../outside/pic.png was not attached: it is outside the workspace, "
        "and a command from the repository attaches files inside it only",
    ]
    sent = json.dumps(fake_llm.requests)
    assert all(base64.b64encode(png(size, size)).decode() not in sent for size in (3, 4, 5))
    assert sent.count(base64.b64encode(png()).decode()) >= 2  # the allowed one, in each request


def run(root: Path, fake: FakeOpenAI, prompt: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    request = HeadlessRequest(prompt, model="gw/fake-model", yes=True)
    code = run_headless(root, request, env={"HOME": str(root.parent / "home")}, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()
