"""After a reply, the status bar shows that reply's TTFT and tokens/s (the one shared tokens/s function), and the
reply's footer counts the tokens it shows (a token the engine made as Stop came is dropped and not counted)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence

import pytest

from app.core.conversation import MessageStatus
from app.core.types import Chunk, GenerationParams
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.helpers import run_on, until

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def window(qtbot, qloop):
    made: list[MainWindow] = []

    def make(engine) -> MainWindow:  # type: ignore[no-untyped-def]
        w = MainWindow(engine)
        qtbot.addWidget(w)
        w.show()
        assert run_on(qloop, w.load_model())
        made.append(w)
        return w

    yield make
    for w in made:
        qloop.run_until_complete(w.shutdown())


def _settled(reply) -> bool:  # type: ignore[no-untyped-def]
    m = reply.metrics or {}
    return reply.status.final and m.get("chunks_painted") == m.get("chunks") and m.get("ttft_ms") is not None


@pytest.mark.parametrize("tokens_per_s", [0, 80])     # 0: the reply ends before its first paint
def test_the_status_bar_shows_the_last_replys_ttft_and_tokens_per_s(window, qloop, tokens_per_s: int) -> None:
    w = window(ScriptedEngine(tokens_per_s=tokens_per_s))
    reply = w.send("hello")
    assert reply is not None
    gen = w.session.generation_of(reply)
    assert gen is not None
    run_on(qloop, until(lambda: _settled(reply)))
    assert w.status.ttft_label.text() == f"TTFT {reply.metrics['ttft_ms']:.0f} ms"
    rate = gen.metrics.tokens_per_s()                 # the one shared tokens/s function
    assert rate is not None and w.status.rate_label.text() == f"{rate:.1f} tok/s"
    assert "Last reply" in w.status.ttft_label.toolTip()
    # a later reply's figures replace them; the earlier reply's late news does not bring its own back
    second = w.send("again")
    assert second is not None
    run_on(qloop, until(lambda: _settled(second)))
    w.status.update_reply(reply)
    assert w.status.ttft_label.text() == f"TTFT {second.metrics['ttft_ms']:.0f} ms"


class LateTokenEngine(ScriptedEngine):
    """Like llama.cpp mid-decode: after ``before_stop`` chunks it is busy with one more token when Stop comes,
    and yields it anyway."""

    def __init__(self, before_stop: int) -> None:
        super().__init__(tokens_per_s=0)
        self.before_stop = before_stop

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterator[Chunk]:
        for i in range(self.before_stop):
            yield Chunk(f"w{i} ")
        stop.wait(60)                 # decoding the next token when Stop is pressed
        yield Chunk("late ")


def test_a_stopped_replys_footer_counts_the_tokens_it_shows(window, qloop) -> None:
    w = window(LateTokenEngine(before_stop=7))
    reply = w.send("hello")
    assert reply is not None
    gen = w.session.generation_of(reply)
    assert gen is not None
    run_on(qloop, until(lambda: len(gen.metrics.painted) == 7))      # every chunk before Stop is on screen
    w.stop()
    run_on(qloop, until(lambda: reply.status is MessageStatus.STOPPED and _settled(reply)
                        and reply.metrics.get("stop_latency_ms") is not None))
    assert reply.text == "".join(f"w{i} " for i in range(7)) and reply.chunks == 7
    assert reply.metrics["decode_tokens"] == 7 and reply.metrics["chunks"] == 7
    footer = w.chat.widget_for(reply).figures.text()
    assert footer.endswith("· 7 tokens"), footer


class _VulkanScripted(ScriptedEngine):
    """What ``LlamaEngine.runtime`` reports with every layer on Mesa's lavapipe (the real one:
    ``tests/engine/test_backends.py``)."""

    def runtime(self) -> dict:
        return {"backend": "Vulkan0", "device": "llvmpipe (LLVM 15.0.6, 256 bits)", "gpu_layers": 31,
                "n_layers": 30, "cpu_variant": "haswell"} if self.loaded else {}


@pytest.mark.model
def test_the_status_bar_names_the_device_the_model_runs_on(window, bundled_model) -> None:
    from app.engine.llama import LlamaEngine

    local = window(LlamaEngine(bundled_model, n_ctx=512))
    label = local.status.device_label
    assert label.isVisibleTo(local) and label.text() == "on CPU"          # the installed llama.cpp: CPU only
    assert label.toolTip() == "The device the model runs on: CPU"
    gpu = window(_VulkanScripted("Hi.", tokens_per_s=0))
    label = gpu.status.device_label
    assert label.isVisibleTo(gpu) and label.text() == "on llvmpipe (LLVM 15.0.6, 256 bits)"
    assert label.toolTip().endswith("llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan0), 31 of 31 layers")
    remote_like = window(ScriptedEngine("Hi.", tokens_per_s=0))           # no runtime facts: no device shown
    assert not remote_like.status.device_label.isVisibleTo(remote_like)
