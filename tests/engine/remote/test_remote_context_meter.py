"""The context meter for a remote engine: counted by the server's own tokenizer where it has one (the real
``llama_cpp.server`` on loopback, serving the bundled model), else estimated and said to be (Brook's own server on
loopback, which has no tokenizer endpoint); the context window where the server says it."""

from __future__ import annotations

import httpx
import pytest

from app.core.chat.context_meter import measure
from app.core.conversation import Conversation, Message, Role
from app.core.types import GenerationParams
from app.engine.remote.engine import RemoteConnection, RemoteEngine
from app.engine.remote.tokens import TEMPLATE_TOKENS, _model_window, _n_ctx, estimate_tokens
from tests.engine.remote.test_remote_llama_server import llama_server  # noqa: F401 - the module's real server

CHAT = [(Role.USER, "今天北京的天气怎么样？请用一句话回答。"),
        (Role.ASSISTANT, "I cannot see live weather, but spring in Beijing is usually dry and windy."),
        (Role.USER, "Then tell me a short fact about the Great Wall.")]


def _conv() -> Conversation:
    return Conversation(messages=[Message(role, text) for role, text in CHAT])


@pytest.mark.model
@pytest.mark.timeout(300)
def test_llama_cpp_server_counts_with_its_tokenizer(llama_server) -> None:  # noqa: F811
    engine = RemoteEngine(RemoteConnection(llama_server.url))
    engine.load()
    conv = _conv()
    usage = measure(engine, conv, "", GenerationParams())
    assert engine.token_source == "llama-cpp-python" and usage.source == "llama-cpp-python"
    assert usage.estimate                       # the server's template is not known here: its tokens estimated
    assert usage.window == 0                    # llama_cpp.server does not say its n_ctx
    # what the server itself prefills for these messages (the usage of a real, non-streamed reply)
    answer = httpx.post(f"{llama_server.url}/chat/completions", timeout=240,
                        json={"messages": conv.prompt_messages(), "max_tokens": 1, "stream": False})
    prefilled = answer.json()["usage"]["prompt_tokens"]
    guess = sum(estimate_tokens(text) for _r, text in CHAT) + TEMPLATE_TOKENS * (len(CHAT) + 1)
    # the contents are counted by the server's tokenizer; its chat template (here SmolLM2's, which also adds a
    # default system prompt) is not known to a client of llama_cpp.server, so the count is labelled "≈"
    assert prefilled * 0.75 <= usage.used <= prefilled, (usage.used, prefilled)
    assert abs(usage.used - prefilled) < abs(guess - prefilled)     # the tokenizer, not the length estimate
    without = measure(engine, Conversation(messages=[Message(Role.USER, CHAT[0][1])]), "", GenerationParams())
    assert without.used < usage.used                                  # it counts what is there
    engine.unload()


def test_a_server_without_a_tokenizer_gives_a_labelled_estimate() -> None:
    from app.server.api import ServerOptions
    from tests.server.test_server_api import ServerThread, scripted

    with ServerThread(scripted(script="ok"), ServerOptions()) as s:
        engine = RemoteEngine(RemoteConnection(s.url))
        engine.load()
        usage = measure(engine, _conv(), "and one more", GenerationParams())
        engine.unload()
    texts = [text for _r, text in CHAT] + ["and one more"]
    assert usage.estimate and usage.source == "estimate" and engine.token_source == "estimate"
    assert usage.used == sum(estimate_tokens(t) for t in texts) + TEMPLATE_TOKENS * (len(texts) + 1)


def test_the_context_window_from_what_servers_say() -> None:
    assert _n_ctx({"default_generation_settings": {"n_ctx": 8192}}) == 8192         # llama-server /props
    assert _n_ctx({"n_ctx": 4096}) == 4096 and _n_ctx({"n_ctx": 0}) is None and _n_ctx([]) is None
    listing = {"data": [{"id": "a", "max_model_len": 32768},                         # vLLM
                        {"id": "b", "meta": {"n_ctx_train": 131072}}]}              # llama-server
    assert _model_window(listing, "a") == 32768 and _model_window(listing, "b") == 131072
    assert _model_window(listing, "c") is None and _model_window({"data": [{"id": "x"}]}, None) is None


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    assert estimate_tokens("天气") == 2 and estimate_tokens("hi 天气") == 3


def test_a_cancelled_connect_stays_unconnected() -> None:
    from app.core.errors import LoadCancelled
    from app.server.api import ServerOptions
    from tests.server.test_server_api import ServerThread, scripted

    def cancel_at_the_end(fraction: float) -> None:
        if fraction >= 1.0:
            raise LoadCancelled("server")

    with ServerThread(scripted(script="ok"), ServerOptions()) as s:
        engine = RemoteEngine(RemoteConnection(s.url))
        with pytest.raises(LoadCancelled):
            engine.load(cancel_at_the_end)
        assert not engine.loaded
