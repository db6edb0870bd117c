"""``--smoke-test --engine-fault KIND``: the model's process does KIND to itself during the first reply in the
real window; the window stays, the reply keeps its text with a stop reason naming the fault, the log names the
signal, and the second prompt is answered by a new engine host (real bundled model, one app run per KIND)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = [pytest.mark.model, pytest.mark.slow, pytest.mark.timeout(240)]

WORDS = {"segv": "segmentation fault (SIGSEGV)", "ill": "illegal instruction (SIGILL)", "abort": "aborted (SIGABRT)",
         "kill": "killed (SIGKILL)", "hang": "stopped responding: no token within 2 s"}


@pytest.mark.parametrize("kind", list(WORDS))
def test_smoke_test_survives_the_fault_and_the_second_reply_works(kind: str, tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, str(ROOT / "main.py"), "--smoke-test", "--engine-fault", kind,
                           "--engine-fault-after-ms", "150"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=200)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["engine_crashed"] is True and out["engine_restarted"] is True
    assert out["first_reply_chars"] > 0 and out["second_reply_chars"] > 0
    assert WORDS[kind] in out["first_stop_reason"], out["first_stop_reason"]
    assert out["status"] == "error" and out["second_status"] == "done"
    log = (Path(env["BROOK_DATA_DIR"]) / "logs" / "brook.log").read_text(encoding="utf-8")
    assert f"injecting the fault '{kind}'" in log
    if kind in ("segv", "ill", "abort"):                 # faulthandler in the host wrote its stacks
        name = {"segv": "Segmentation fault", "ill": "Illegal instruction", "abort": "Aborted"}[kind]
        assert f"Fatal Python error: {name}" in log, log[-3000:]
        sig = {"segv": "SIGSEGV", "ill": "SIGILL", "abort": "SIGABRT"}[kind]
        native = log.split(f"Fatal signal {sig} (", 1)[1]           # before faulthandler's stacks, the native side
        assert "\npc 0x" in native and "Native frames (most recent call first):\n" in native
        assert native.index("Native frames") < native.index(f"Fatal Python error: {name}")
    assert WORDS[kind] in log
