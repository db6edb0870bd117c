"""The engine host: the bundled model runs in a child process behind the ``Engine`` protocol; what it streams,
counts and fits equals the in-process engine; backpressure and Stop cross the pipe; a crash or hang of the host
is an ``EngineCrashed`` after the chunks that came, and the next reply starts a new host (real bundled model)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.bench._util import rss_mb
from app.core.errors import LoadCancelled
from app.core.streaming.stream import StopEvent
from app.core.types import Chunk, GenerationParams
from app.engine import host_modes
from app.engine.hosted import CREDIT_WINDOW, PRESTART_NICE, EngineCrashed, HostedEngine, describe_exit, spare_core
from app.engine.llama import LlamaEngine

pytestmark = [pytest.mark.model, pytest.mark.timeout(240)]

PARAMS = GenerationParams(temperature=0.0, seed=42, max_tokens=40)
CHAT = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name three rivers."}]
STORY = [{"role": "user", "content": "Write a long story about a lighthouse keeper and the ships she guides."}]


def alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:                           # a zombie (not reaped yet) is gone too
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def collect(engine: HostedEngine, messages: list[dict[str, str]] = CHAT, params: GenerationParams = PARAMS,
            stop: threading.Event | None = None) -> tuple[list[Chunk], BaseException | None]:
    chunks: list[Chunk] = []
    try:
        for chunk in engine.stream(messages, params, stop or threading.Event()):
            chunks.append(chunk)
    except Exception as exc:
        return chunks, exc
    return chunks, None


@pytest.fixture(scope="module")
def engine(bundled_model: Path) -> Iterator[HostedEngine]:
    e = HostedEngine(bundled_model, n_ctx=1024)
    e.load()
    yield e
    e.unload()


@pytest.fixture(scope="module")
def local(bundled_model: Path) -> Iterator[LlamaEngine]:
    e = LlamaEngine(bundled_model, n_ctx=1024, n_threads=HostedEngine(bundled_model).n_threads)
    e.load()
    yield e
    e.unload()


def test_the_host_streams_counts_and_fits_what_the_in_process_engine_does(engine: HostedEngine,
                                                                         local: LlamaEngine) -> None:
    chunks, err = collect(engine)
    assert err is None
    ours = [(c.text, c.n_tokens, c.finish_reason) for c in chunks]
    theirs = [(c.text, c.n_tokens, c.finish_reason) for c in local.stream(CHAT, PARAMS, threading.Event())]
    assert ours == theirs and len(ours) > 5
    assert engine.host_pid is not None and engine.host_pid != os.getpid()
    decode = engine.decode_figures()           # the host's decode thread, first token to last
    assert decode is not None and decode["tokens"] == sum(c.n_tokens for c in chunks) > 0
    if os.path.exists("/proc/thread-self/schedstat"):
        assert decode["cpu_ms"] > 0 and decode["wait_ms"] >= 0 and decode["cpu_ms"] + decode["wait_ms"] <= \
            decode["wall_ms"] * 1.01 + 1
    assert engine.count_tokens("<|im_end|> hello") == local.count_tokens("<|im_end|> hello")
    assert engine.prompt_tokens(CHAT) == local.prompt_tokens(CHAT)
    long = [*CHAT, {"role": "assistant", "content": "Nile. " * 300}, {"role": "user", "content": "More?"}] * 3
    fitted, theirs_fit = engine.fit_context(long, PARAMS), local.fit_context(long, PARAMS)
    assert list(fitted) == list(theirs_fit) and fitted.left_out == theirs_fit.left_out > 0
    assert (fitted.prompt_tokens, fitted.n_ctx) == (theirs_fit.prompt_tokens, theirs_fit.n_ctx)
    assert engine.metadata.get("general.architecture") == "llama"
    assert engine.provenance()["chat_template"] == "GGUF tokenizer.chat_template"


def test_the_host_fits_what_it_streams_and_says_what_it_left_out(engine: HostedEngine, local: LlamaEngine) -> None:
    long = [*CHAT, {"role": "assistant", "content": "Nile. " * 300}, {"role": "user", "content": "More?"}] * 3
    found: list[tuple[int, int]] = []
    params = GenerationParams(temperature=0.0, seed=42, max_tokens=8)
    ours = [(c.text, c.n_tokens) for c in engine.stream(long, params, threading.Event(),
                                                          on_fit=lambda *facts: found.append(facts))]
    theirs_fit = local.fit_context(long, params)
    assert found == [(theirs_fit.left_out, theirs_fit.prompt_tokens)] and theirs_fit.left_out > 0
    assert ours == [(c.text, c.n_tokens) for c in local.stream(theirs_fit, params, threading.Event())]
    found.clear()
    fitted = engine.fit_context(long, params)     # fitted already: the host does not fit again, nor say so
    assert [c.text for c in engine.stream(fitted, params, threading.Event(),
                                          on_fit=lambda *facts: found.append(facts))] and found == []


@pytest.mark.skipif(os.name != "posix", reason="a plain child process on POSIX; a spawn child elsewhere")
def test_the_host_imports_only_what_the_engine_needs(engine: HostedEngine) -> None:
    assert engine._host is not None
    modules = set(engine._host.call("modules", (), 30.0))
    assert {"llama_cpp", "app.engine.llama", "app.engine.host"} <= modules
    # no multiprocessing bootstrap (nor its resource tracker), no launcher as __mp_main__, no event loop, no Qt,
    # no site (its .pth files ran in the window already): each was CPU spent before the model could load
    heavy = {"multiprocessing.spawn", "multiprocessing.resource_tracker", "multiprocessing.connection",
             "app.launcher", "asyncio", "app.core.streaming.stream", "PySide6", "site"}
    assert not heavy & modules, heavy & modules


def test_a_consumer_that_does_not_take_chunks_pauses_the_model_after_one_credit_window(engine: HostedEngine) -> None:
    params = GenerationParams(temperature=0.0, seed=42, max_tokens=CREDIT_WINDOW * 3)
    it = engine.stream(STORY, params, threading.Event())
    first = next(it)
    host = engine._host
    assert host is not None
    # the host sent at most the grant; nothing else is in the pipe however long we wait for more
    sent = 1
    while host.ctl.poll(1.0):
        msg = host.ctl.recv()
        assert msg[0] == "chunk", msg
        sent += 1
        assert sent <= CREDIT_WINDOW
    assert sent == CREDIT_WINDOW                 # it did use the whole grant, then waited for credit
    it.close()                                   # Stop: the host ends its decode, the pipe is clean again
    chunks, err = collect(engine)
    assert err is None and chunks and first.text


def test_stop_ends_the_hosts_decode_within_a_token_and_the_model_is_free_at_once(engine: HostedEngine) -> None:
    stop = StopEvent()
    got: list[Chunk] = []
    pid = engine.host_pid
    params = GenerationParams(temperature=0.0, seed=42, max_tokens=400)
    for chunk in engine.stream(STORY, params, stop):
        got.append(chunk)
        if len(got) == 5:
            stop.set()          # as the window does: the callback sends "stop" over the pipe
    assert len(got) == 5        # nothing after the Stop
    chunks, err = collect(engine)
    assert err is None and chunks and engine.host_pid == pid


def test_stop_during_prefill_aborts_it(engine: HostedEngine) -> None:
    stop = StopEvent()
    prompt = [{"role": "user", "content": "Summarise: " + "the river runs to the sea and " * 120}]
    it = engine.stream(prompt, PARAMS, stop)
    timer = threading.Timer(0.05, stop.set)
    timer.start()
    assert list(it) == []
    timer.join()
    chunks, err = collect(engine)
    assert err is None and chunks


@pytest.mark.parametrize("kind, words", [("segv", "segmentation fault (SIGSEGV)"),
                                         ("ill", "illegal instruction (SIGILL)"),
                                         ("abort", "aborted (SIGABRT)"), ("kill", "killed (SIGKILL)")])
def test_a_host_that_dies_mid_reply_is_a_crash_with_the_chunks_kept_and_the_next_reply_restarts_it(
        engine: HostedEngine, kind: str, words: str) -> None:
    pid, crashes = engine.host_pid, engine.crashes
    engine.inject_fault(kind, 100)
    chunks, err = collect(engine, STORY, GenerationParams(temperature=0.0, seed=42, max_tokens=400))
    assert isinstance(err, EngineCrashed), err
    assert err.stop_reason == f"the model process crashed: {words}"
    assert chunks and engine.crashes == crashes + 1
    assert not alive(pid)
    again, err2 = collect(engine)
    assert err2 is None and again
    assert engine.host_pid not in (None, pid)


def test_a_host_that_stops_yielding_is_ended_at_its_token_deadline(engine: HostedEngine) -> None:
    pid = engine.host_pid
    engine.token_deadline_s = 1.0
    try:
        engine.inject_fault("hang", 100)
        chunks, err = collect(engine, STORY, GenerationParams(temperature=0.0, seed=42, max_tokens=400))
    finally:
        engine.token_deadline_s = 30.0
    assert isinstance(err, EngineCrashed) and err.hung, err
    assert err.stop_reason == "the model process stopped responding: no token within 1 s"
    assert chunks and not alive(pid)
    again, err2 = collect(engine)
    assert err2 is None and again


def test_a_crash_in_the_first_reply_before_any_token_is_retried_in_safe_mode_and_remembered(
        bundled_model: Path) -> None:
    e = HostedEngine(bundled_model, n_ctx=512, n_threads=2)
    e.load()
    try:
        e.inject_fault("ill", at="prompt")
        chunks, err = collect(e)
        assert err is None and chunks                     # the reply never saw the crash …
        assert e.crashes == 1 and e.mode == "safe"        # … it ran again in safe mode
        assert host_modes.recall(bundled_model) == "safe"
        assert e._options("safe")["n_threads"] == 1 and e._options("safe")["n_gpu_layers"] == 0
    finally:
        e.unload()
    fresh = HostedEngine(bundled_model, n_ctx=512)
    fresh.load()                                          # the next start goes straight to safe mode
    try:
        assert fresh.mode == "safe" and fresh.crashes == 0
    finally:
        fresh.unload()


def test_a_crash_while_loading_is_retried_once_in_safe_mode(bundled_model: Path) -> None:
    e = HostedEngine(bundled_model, n_ctx=512)
    e.inject_fault("segv", at="load")
    e.load()
    try:
        assert e.loaded and e.mode == "safe" and e.crashes == 1
        assert host_modes.recall(bundled_model) == "safe"
        chunks, err = collect(e)
        assert err is None and chunks
    finally:
        e.unload()


def test_unload_ends_the_host_and_the_window_process_keeps_nothing(bundled_model: Path) -> None:
    before = rss_mb()
    e = HostedEngine(bundled_model, n_ctx=4096)
    e.load()
    pid = e.host_pid
    chunks, err = collect(e)
    assert err is None and chunks and alive(pid)
    e.unload()
    assert not e.loaded and e.host_pid is None and not alive(pid)
    assert rss_mb() - before < 30, (before, rss_mb())


def test_cancelling_a_load_ends_the_host_at_once(bundled_model: Path) -> None:
    e = HostedEngine(bundled_model, n_ctx=512)
    calls: list[float] = []
    pids: list[int | None] = []

    def progress(fraction: float) -> None:
        calls.append(fraction)
        if len(calls) == 2:
            pids.append(e.host_pid)
            raise LoadCancelled("test")

    with pytest.raises(LoadCancelled):
        e.load(progress)
    assert not e.loaded and e.host_pid is None and e._host is None
    assert pids[0] is not None and not alive(pids[0])


def test_a_stream_without_a_load_is_refused(bundled_model: Path) -> None:
    from app.engine.base import EngineNotLoadedError

    chunks, err = collect(HostedEngine(bundled_model))
    assert isinstance(err, EngineNotLoadedError) and not chunks


def test_exit_statuses_are_named() -> None:
    assert describe_exit(-4) == ("illegal instruction (SIGILL)", 4)
    assert describe_exit(-9) == ("killed (SIGKILL)", 9)
    assert describe_exit(3) == ("exited with status 3", None)


def test_a_reply_whose_host_crashes_keeps_its_text_and_names_the_crash(engine: HostedEngine) -> None:
    from app.core.conversation import Conversation, Message, MessageStatus, Role
    from app.core.streaming.generation import generate
    from app.core.streaming.scheduler import FairScheduler
    from tests.helpers import run

    c = Conversation()
    c.add(Message(Role.USER, STORY[0]["content"]))
    reply = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    engine.inject_fault("abort", 150)
    run(generate(engine, FairScheduler(), c, reply, GenerationParams(temperature=0.0, seed=42, max_tokens=400)))
    assert reply.status is MessageStatus.ERROR and reply.text and reply.chunks > 0
    assert reply.stop_reason == "the model process crashed: aborted (SIGABRT)"
    assert "crashed (aborted (SIGABRT))" in (reply.error or "")
    again = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    run(generate(engine, FairScheduler(), c, again, PARAMS))
    assert again.status is MessageStatus.DONE and again.text


def test_load_reports_llama_cpps_progress_from_the_host(bundled_model: Path) -> None:
    seen: list[float] = []
    e = HostedEngine(bundled_model, n_ctx=512)
    e.load(seen.append)
    try:
        inside = [f for f in seen if 0.0 < f < 1.0]
        assert inside, seen     # llama.cpp's loader, reported across the pipe (reports that waited: the newest)
        assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0
    finally:
        e.unload()


def test_a_prestarted_host_loads_while_the_caller_does_other_work(bundled_model: Path) -> None:
    e = HostedEngine(bundled_model, n_ctx=512)
    e.prestart()
    pid = e._prestarted[1].pid if e._prestarted else None
    seen: list[float] = []
    e.load(seen.append)
    try:
        assert e.host_pid == pid is not None                # the same process, not a second one
        assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
        chunks, err = collect(e)
        assert err is None and chunks
        if sys.platform.startswith("linux"):                # nice is per thread: the load yielded, decode does not
            ours = os.getpriority(os.PRIO_PROCESS, 0)
            assert e.load_nice == min(19, ours + PRESTART_NICE)
            figures = e.decode_figures()
            assert figures is not None and figures["nice"] == ours
    finally:
        e.unload()
    assert not alive(pid)



class _FakeProcess:
    """A host process that is alive and ends when told (the messages come from the test)."""

    pid = None
    exitcode = None

    def is_alive(self) -> bool:
        return True

    def kill(self) -> None:
        pass

    def join(self, _timeout: float | None = None) -> None:
        pass


def test_a_load_whose_reports_all_waited_still_reports_its_progress(tmp_path: Path) -> None:
    import multiprocessing

    from app.engine.host_link import HostLink

    ctl, child = multiprocessing.Pipe()
    rpc, _rpc_child = multiprocessing.Pipe()
    for msg in (("progress", 0.2), ("progress", 0.6), ("progress", 1.0),
                ("loaded", {"metadata": {}, "template_source": None, "runtime": {}})):
        child.send(msg)                  # a prestarted host that loaded before anyone looked (a busy machine)
    link = HostLink(_FakeProcess(), ctl, rpc)
    link.load_sent = True
    e = HostedEngine(tmp_path / "model.gguf")
    e._prestarted = ("normal", link)
    seen: list[float] = []
    e._start_and_load("normal", seen.append)
    assert seen == [0.6] and e._host is link and link.loaded       # the newest report under 1.0, once


def test_the_host_is_prestarted_only_where_a_core_is_free(monkeypatch: pytest.MonkeyPatch) -> None:
    assert spare_core(0.4, 2) and spare_core(1.0, 2) and spare_core(6.5, 8)
    assert not spare_core(1.2, 2) and not spare_core(4.0, 2) and not spare_core(0.5, 1)

    def no_load_average() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", no_load_average)
    assert spare_core(cpus=1)                       # where the OS cannot say: prestart, as before
