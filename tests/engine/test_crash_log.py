"""A fatal signal's report in the log: the signal, the faulting module, the last native frames, then
faulthandler's Python stacks — in a process of its own for each fault kind, and in a real engine host whose
reply crashes or hangs (bundled model)."""

from __future__ import annotations

import logging
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.types import GenerationParams
from app.engine import crash_log
from app.engine.hosted import EngineCrashed, HostedEngine

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's backtrace: Linux only")

CRASH = """
import faulthandler, sys, threading
from app.engine import crash_log
from app.engine.host import inject_fault
log = open(sys.argv[2], "a", encoding="utf-8")
faulthandler.enable(file=log, all_threads=True)
assert crash_log.install(log.fileno())
t = threading.Thread(target=inject_fault, args=(sys.argv[1],), name="brook-host-decode")
t.start()
t.join()
"""


@pytest.mark.parametrize("kind, sig, detail", [
    ("segv", signal.SIGSEGV, r"SEGV_MAPERR\) in thread \d+ \(brook-host-decode\): address 0x0;\npc 0x[0-9a-f]+ in "
                             r"\S*libc\.so\.6 \("),
    ("ill", signal.SIGILL, r"ILL_ILLOPN\) in thread \d+ \(brook-host-decode\): address 0x[0-9a-f]+;\npc 0x[0-9a-f]+ "
                           r"in no loaded module \(anonymous memory\)"),
    ("abort", signal.SIGABRT, r"sent by a process\) in thread \d+ \(brook-host-decode\): sent by itself;\npc "
                              r"0x[0-9a-f]+ in \S*libc\.so\.6 ")])
def test_a_fatal_signal_writes_its_module_and_native_frames_then_the_python_stacks(
        tmp_path: Path, kind: str, sig: signal.Signals, detail: str) -> None:
    log = tmp_path / "brook.log"
    proc = subprocess.run([sys.executable, "-c", CRASH, kind, str(log)], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == -sig, (proc.returncode, proc.stderr)       # the signal still ends the process
    text = log.read_text(encoding="utf-8")
    assert re.search(rf"Fatal signal {sig.name} \(.*{detail}", text), text
    native = text.split("Native frames (most recent call first):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert native and all(re.fullmatch(r"\S*(\(\S*\))? ?\[0x[0-9a-f]+\]", line) for line in native), native
    pc = re.search(r"\npc (0x[0-9a-f]+) in ", text)
    assert pc and native[0].endswith(f"[{pc.group(1)}]")               # starting at the interrupted code
    if kind == "abort":
        assert any("(abort+0x" in line for line in native[:3])
    elif kind == "segv":
        assert "libc.so.6" in native[0] and "libffi" in native[1]    # memset, called through ctypes
    # ill: the undefined instruction sits in a page with no unwind information: the walk ends there
    python = text.split("Fatal Python error: ", 1)[1]                 # faulthandler's part comes after
    assert "Current thread" in python and "in inject_fault" in python and "Thread 0x" in python


def test_describe_names_the_sender_of_a_signal_sent_by_kill() -> None:
    text = crash_log.describe(int(signal.SIGILL), 0, 4242, None)
    assert text.startswith("Fatal signal SIGILL (illegal instruction, sent by a process) in thread ")
    assert text.rstrip().endswith("sent by process 4242")


@pytest.fixture
def logged_engine(bundled_model: Path, tmp_path: Path) -> Iterator[tuple[HostedEngine, Path]]:
    log_file = tmp_path / "brook.log"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    root = logging.getLogger()
    root.addHandler(handler)
    e = HostedEngine(bundled_model, n_ctx=1024)
    try:
        e.load()                     # the host appends to the app's log file (found on the root logger)
        yield e, log_file
    finally:
        e.unload()
        root.removeHandler(handler)
        handler.close()


STORY = [{"role": "user", "content": "Write a long story about a lighthouse keeper and the ships she guides."}]
LONG = GenerationParams(temperature=0.0, seed=42, max_tokens=400)


def _reply(engine: HostedEngine) -> BaseException | None:
    try:
        for _chunk in engine.stream(STORY, LONG, threading.Event()):
            pass
    except Exception as exc:
        return exc
    return None


@pytest.mark.model
@pytest.mark.timeout(240)
def test_a_host_that_crashes_in_decode_leaves_the_signal_native_frames_and_stacks_in_the_log(
        logged_engine: tuple[HostedEngine, Path]) -> None:
    engine, log_file = logged_engine
    pid = engine.host_pid
    engine.inject_fault("segv", 50)
    err = _reply(engine)
    assert isinstance(err, EngineCrashed) and err.signal == signal.SIGSEGV
    text = log_file.read_text(encoding="utf-8")
    report = text.split("Fatal signal SIGSEGV (segmentation fault, SEGV_MAPERR) in thread ", 1)[1]
    assert re.match(r"\d+ \([^)]+\): address 0x0;\npc 0x[0-9a-f]+ in \S*libc\.so\.6 ", report), report[:300]
    assert "Native frames (most recent call first):\n" in report
    python = report.split("Fatal Python error: Segmentation fault", 1)[1]
    assert "in _run_decode" in python                                # the decode thread's Python stack
    assert f"engine host {pid}: the model process crashed: segmentation fault (SIGSEGV)" in python


@pytest.mark.model
@pytest.mark.timeout(240)
def test_a_host_killed_for_a_deadline_leaves_its_stacks_in_the_log(logged_engine: tuple[HostedEngine, Path]) -> None:
    engine, log_file = logged_engine
    engine.token_deadline_s = 1.0
    engine.inject_fault("hang", 50)
    err = _reply(engine)
    assert isinstance(err, EngineCrashed) and err.hung
    text = log_file.read_text(encoding="utf-8")
    after = text.split("killed: no token within 1 s (its threads' stacks follow in the log)", 1)[1]
    assert "Thread 0x" in after and "in _run_decode" in after         # faulthandler's stacks of the hung host

