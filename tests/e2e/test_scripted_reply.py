"""``python main.py --smoke-test --scripted-reply FILE``: a rendering fault is one file and one command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", BROOK_DATA_DIR=str(tmp_path / "data"),
               BROOK_CONFIG_DIR=str(tmp_path / "config"))
    return subprocess.run([sys.executable, str(ROOT / "main.py"), "--smoke-test", *extra], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_whole_file_streams_through_the_window(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "screenshots" / "replies" / "rst-backtrack.md").read_text("utf-8")
    text += "\n```python\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n```\n"
    reply = tmp_path / "reply.md"
    reply.write_text(text, "utf-8")
    proc = _run(tmp_path, "--scripted-reply", str(reply), "--slow-ms", "1")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["reply_chars"] == len(text) and out["code_blocks"] == 2
    assert "max_stall_ms" in out and out["chunks"] >= len(text) // 8


def test_a_missing_reply_file_is_a_clear_error(tmp_path: Path) -> None:
    proc = _run(tmp_path, "--scripted-reply", str(tmp_path / "nope.md"))
    assert proc.returncode == 2 and "nope.md" in proc.stderr and "Traceback" not in proc.stderr


MATH_REPLY = ("Euler: $e^{i\\pi}+1=0$.\n\n$$\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n$$\n\n"
              "Not math: $\\begin{align}x\\end{align}$\n")


def test_formulas_become_images_through_the_window(tmp_path: Path) -> None:
    reply = tmp_path / "math.md"
    reply.write_text(MATH_REPLY, "utf-8")
    proc = _run(tmp_path, "--scripted-reply", str(reply))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["formula_images"] == 2 and out["reply_chars"] == len(MATH_REPLY)   # the align stays TeX
