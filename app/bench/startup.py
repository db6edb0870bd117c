"""Cold start to window shown, against a bare PySide6 window: ``python -m app.bench startup [--runs 3]``.

Both are new processes spawned by this one, alternating, ``--runs`` times each (medians; the page cache is warm:
process-cold, not disk-cold), after one start of each that is not counted. Their modules' bytecode is cached as
on any start after the first (``__pycache__``; the frozen app ships it): the children run without
``PYTHONDONTWRITEBYTECODE`` / ``PYTHONPYCACHEPREFIX``, which would otherwise have Brook's own modules compiled
at every start. From just before the spawn to the window shown:

- ``bare``: ``python -c`` that imports PySide6, makes a ``QApplication`` and a ``QMainWindow``, shows it and runs
  one turn of events, then prints the Unix time;
- ``brook``: ``python main.py --scripted --smoke-test --close-after-ms 0`` (the real launcher on the scripted
  engine, so no model load is timed), which prints ``window_shown_at``: the loop turn right after the window's
  first frame was painted (``MainWindow.first_painted_at``; the message list and the renderer come after it).

``window_shown_ratio`` = brook ÷ bare; budget ≤ 3. Prints readable lines, then one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.bench._util import emit, median

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 3.0
_BARE = ("import time\nfrom PySide6.QtWidgets import QApplication, QMainWindow\napp = QApplication([])\n"
         "w = QMainWindow()\nw.resize(1040, 760)\nw.show()\napp.processEvents()\nprint(time.time())\n")


def _spawn(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    last = proc.stdout.strip().splitlines()[-1]
    shown = json.loads(last)["window_shown_at"] if last.startswith("{") else float(last)
    return shown - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.bench startup", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="start-ups of each kind (default 3)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, BROOK_DATA_DIR=str(Path(tmp) / "data"), BROOK_CONFIG_DIR=str(Path(tmp) / "config"))
        for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"):
            env.pop(name, None)
        if sys.platform.startswith("linux") and not env.get("DISPLAY"):
            env["QT_QPA_PLATFORM"] = "offscreen"
        kinds = {"bare": [sys.executable, "-c", _BARE],
                 "brook": [sys.executable, str(ROOT / "main.py"), "--scripted", "--smoke-test",
                           "--close-after-ms", "0"]}
        samples: dict[str, list[float]] = {k: [] for k in kinds}
        for cmd in kinds.values():
            _spawn(cmd, env)                 # not counted: writes the bytecode caches, warms the page cache
        for _ in range(args.runs):
            for kind, cmd in kinds.items():
                samples[kind].append(_spawn(cmd, env))
    result: dict[str, object] = {"bench": "startup", "runs": args.runs}
    for kind, xs in samples.items():
        result[f"{kind}_shown_s"] = median(xs)
        result[f"{kind}_shown_s_all"] = xs
    ratio = (median(samples["brook"]) or 0.0) / (median(samples["bare"]) or 1.0)
    result["window_shown_ratio"] = ratio
    result["within_budget"] = ratio <= BUDGET
    print(f"bare PySide6 window shown after {result['bare_shown_s']:.2f} s, Brook's after "
          f"{result['brook_shown_s']:.2f} s: {ratio:.1f}× (budget ≤ {BUDGET:g})")
    emit(result)
    return 0 if ratio <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
