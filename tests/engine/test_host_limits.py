"""Hung is crashed, and memory has a ceiling: a chat template that loops forever ends in a clear error at its
render deadline, one that builds a huge string ends in a clear memory error at once (the engine host's memory
limit), and in both cases the next reply works (real bundled model, templates given to the engine)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.core.types import GenerationParams
from app.engine.hosted import EngineCrashed, HostedEngine, HostMemoryError

pytestmark = [pytest.mark.model, pytest.mark.timeout(240)]

CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
#: Loops "forever" (10^10 steps inside Jinja's sandbox, whose range() allows 100,000) on one message.
LOOPING = ("{% if messages[-1]['content'] == 'spin' %}{% for a in range(100000) %}{% for b in range(100000) %}"
           "{% endfor %}{% endfor %}{% endif %}" + CHATML)
#: Builds a 6 GB string on one message.
GROWING = "{% if messages[-1]['content'] == 'grow' %}{{ 'x' * 6000000000 }}{% endif %}" + CHATML
PARAMS = GenerationParams(temperature=0.0, seed=42, max_tokens=12)


def reply(engine: HostedEngine, content: str, fit: bool) -> tuple[str, BaseException | None]:
    messages = [{"role": "user", "content": content}]
    parts: list[str] = []
    try:
        if fit:                                   # as a reply in the app does: fitted first (a call to the host)
            messages = engine.fit_context(messages, PARAMS)
        for chunk in engine.stream(messages, PARAMS, threading.Event()):
            parts.append(chunk.text)
    except Exception as exc:
        return "".join(parts), exc
    return "".join(parts), None


@pytest.mark.parametrize("fit", [False, True], ids=["in-the-reply", "in-fit-context"])
def test_a_template_that_loops_forever_ends_at_its_deadline_and_the_next_reply_works(bundled_model: Path,
                                                                                     fit: bool) -> None:
    engine = HostedEngine(bundled_model, n_ctx=512, chat_template=LOOPING, render_deadline_s=2.0)
    engine.load()
    try:
        pid = engine.host_pid
        text, err = reply(engine, "spin", fit)
        assert isinstance(err, EngineCrashed) and err.hung, err
        assert err.stop_reason == "the model process stopped responding: the chat template was not rendered " \
                                  "within 2 s"
        assert text == "" and engine.crashes == 1
        text, err = reply(engine, "Hello!", fit)
        assert err is None and text
        assert engine.host_pid not in (None, pid)
    finally:
        engine.unload()


def test_a_template_that_builds_a_huge_string_fails_on_the_memory_limit_and_the_next_reply_works(
        bundled_model: Path) -> None:
    engine = HostedEngine(bundled_model, n_ctx=512, chat_template=GROWING, memory_limit_mb=1024,
                          render_deadline_s=20.0)
    engine.load()
    try:
        pid = engine.host_pid
        text, err = reply(engine, "grow", False)
        assert isinstance(err, HostMemoryError), err
        assert str(err) == ("The chat template needed more memory than the model process may use (1,024 MB); "
                            "nothing was generated.")
        assert text == "" and engine.crashes == 0 and engine.host_pid == pid     # the host itself is fine
        text, err = reply(engine, "Hello!", False)
        assert err is None and text
    finally:
        engine.unload()
