"""Cold start to window shown, against a bare PySide6 window, and to the model ready, engine host against
in-process: ``python -m app.bench startup [--runs 3] [--model-runs N]``.

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

``window_shown_ratio`` = brook ÷ bare; budget ≤ 3.

Then, with the bundled model (``--model-runs``, default ``--runs``; 0: skip), ``python main.py --smoke-test
--close-after-ms 0`` with the engine host (the default) and with ``--in-process-engine`` (the model in the window's
process, as before the host), alternating, after one start of each that is not counted: from the spawn to the
window shown (``window_shown_at``) and to the model ready (``model_loaded_at``: the load returned, the window
can send). ``model_window_shown_ratio`` and ``model_ready_ratio`` = host ÷ in-process medians; budget ≤ 1.10 each
(the engine host costs at most 10 % of either).

Prints readable lines, then one JSON object as the last line.
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
from typing import Any

from app.bench._util import emit, median

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 3.0
#: Engine host ÷ in-process, window shown and model ready (medians): at most 10 % more.
MODEL_BUDGET = 1.10
_BARE = ("import time\nfrom PySide6.QtWidgets import QApplication, QMainWindow\napp = QApplication([])\n"
         "w = QMainWindow()\nw.resize(1040, 760)\nw.show()\napp.processEvents()\nprint(time.time())\n")


def _launch(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return t0, proc.stdout.strip().splitlines()[-1]


def _spawn(cmd: list[str], env: dict[str, str]) -> float:
    t0, last = _launch(cmd, env)
    shown = json.loads(last)["window_shown_at"] if last.startswith("{") else float(last)
    return shown - t0


def model_startup(runs: int, env: dict[str, str]) -> dict[str, Any]:
    """Launch → window shown and → model ready (s) of ``main.py --smoke-test --close-after-ms 0`` on the bundled
    model, engine host vs ``--in-process-engine``, alternating (which goes first too), after one of each that is
    not counted: ``{"host": {"shown_s", "ready_s", "shown_s_all", "ready_s_all"}, "in_process": {…},
    "window_shown_ratio", "model_ready_ratio"}`` (host ÷ in-process medians)."""
    base = [sys.executable, str(ROOT / "main.py"), "--smoke-test", "--close-after-ms", "0"]
    kinds = {"host": base, "in_process": [*base, "--in-process-engine"]}
    shown: dict[str, list[float]] = {k: [] for k in kinds}
    ready: dict[str, list[float]] = {k: [] for k in kinds}
    for cmd in kinds.values():
        _launch(cmd, env)                    # not counted: the model file in the page cache, llama.cpp's bytecode
    for r in range(runs):
        for kind in (("host", "in_process") if r % 2 == 0 else ("in_process", "host")):
            t0, last = _launch(kinds[kind], env)
            out = json.loads(last)
            shown[kind].append(out["window_shown_at"] - t0)
            ready[kind].append(out["model_loaded_at"] - t0)
    result: dict[str, Any] = {}
    for kind in kinds:
        result[kind] = {"shown_s": median(shown[kind]), "ready_s": median(ready[kind]),
                        "shown_s_all": shown[kind], "ready_s_all": ready[kind]}
    result["window_shown_ratio"] = (result["host"]["shown_s"] or 0.0) / (result["in_process"]["shown_s"] or 1.0)
    result["model_ready_ratio"] = (result["host"]["ready_s"] or 0.0) / (result["in_process"]["ready_s"] or 1.0)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.bench startup", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="start-ups of each kind (default 3)")
    p.add_argument("--model-runs", type=int, default=None,
                   help="start-ups on the bundled model, engine host and in-process (default: --runs; 0: skip)")
    args = p.parse_args(argv)
    model_runs = args.runs if args.model_runs is None else args.model_runs
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
        model = model_startup(model_runs, env) if model_runs > 0 else None
    result: dict[str, object] = {"bench": "startup", "runs": args.runs}
    for kind, xs in samples.items():
        result[f"{kind}_shown_s"] = median(xs)
        result[f"{kind}_shown_s_all"] = xs
    ratio = (median(samples["brook"]) or 0.0) / (median(samples["bare"]) or 1.0)
    result["window_shown_ratio"] = ratio
    print(f"bare PySide6 window shown after {result['bare_shown_s']:.2f} s, Brook's after "
          f"{result['brook_shown_s']:.2f} s: {ratio:.1f}× (budget ≤ {BUDGET:g})")
    ok = ratio <= BUDGET
    if model is not None:
        host, local = model["host"], model["in_process"]
        result["model_runs"] = model_runs
        result["model_window_shown_ratio"] = model["window_shown_ratio"]
        result["model_ready_ratio"] = model["model_ready_ratio"]
        result["model"] = model
        result["load_average"] = os.getloadavg() if hasattr(os, "getloadavg") else None
        print(f"bundled model, engine host / in-process: window shown after {host['shown_s']:.2f} / "
              f"{local['shown_s']:.2f} s ({model['window_shown_ratio']:.2f}×), model ready after "
              f"{host['ready_s']:.2f} / {local['ready_s']:.2f} s ({model['model_ready_ratio']:.2f}×; "
              f"budget ≤ {MODEL_BUDGET:g} each)")
        ok = ok and model["window_shown_ratio"] <= MODEL_BUDGET and model["model_ready_ratio"] <= MODEL_BUDGET
    result["within_budget"] = ok
    emit(result)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
