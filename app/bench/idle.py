"""An idle window sleeps: ``python -m app.bench idle [--seconds 5]``.

Counts the main thread's wake-ups while nothing streams or loads, in the same run:

- ``bare``: a bare PySide6 ``QMainWindow`` on a qasync loop (the baseline: what Qt and qasync cost by themselves);
- ``brook``: Brook's ``MainWindow`` (scripted engine, loaded, a history file on disk, the input focused) with the
  event-loop watchdog started as the launcher starts it (``app.ui.window.loop_watch.watch_loop``: it pings only
  a loop it sees running Python, never one that waits for events), measured once the caret has stopped blinking
  (``CARET_REST_S`` after the last input);
- ``brook_ungated``: the same window with a watchdog that pings all the time (how it was before).

A wake-up is one ``QAbstractEventDispatcher.awake`` (the loop came back from waiting for events); the main
thread's voluntary context switches (``/proc/thread-self/status``, Linux) are reported beside it. The
measurement is one ``asyncio.sleep`` of ``--seconds`` (its own timer adds one wake-up). Budget: ``brook`` ≤ 2
wake-ups per second (``wakeups_per_s``). Prints readable lines, then one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from app.bench._util import emit, qt_loop

BUDGET_PER_S = 2.0


def _switches() -> int | None:
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/status") as fh:
            for line in fh:
                if line.startswith("voluntary_ctxt_switches"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


async def _count(seconds: float) -> dict[str, float]:
    from PySide6.QtCore import QAbstractEventDispatcher

    dispatcher = QAbstractEventDispatcher.instance()
    n = [0]

    def woke() -> None:
        n[0] += 1

    dispatcher.awake.connect(woke)
    c0 = _switches()
    await asyncio.sleep(seconds)
    c1 = _switches()
    dispatcher.awake.disconnect(woke)
    out = {"wakeups_per_s": n[0] / seconds}
    if c0 is not None and c1 is not None:
        out["context_switches_per_s"] = (c1 - c0) / seconds
    return out


async def _bare(seconds: float) -> dict[str, float]:
    from PySide6.QtWidgets import QMainWindow

    w = QMainWindow()
    w.resize(1040, 760)
    w.show()
    await asyncio.sleep(1.0)
    out = await _count(seconds)
    w.close()
    return out


async def _brook(seconds: float, gated: bool, tmp: Path) -> dict[str, float]:
    from app.core.history.store import Store
    from app.core.streaming.watchdog import start_watchdog
    from app.engine.scripted import ScriptedEngine
    from app.ui.window.loop_watch import watch_loop
    from app.ui.window.main_window import MainWindow

    store = Store(tmp / f"history-{gated}.sqlite3")
    window = MainWindow(ScriptedEngine(), store=store)
    window.show()
    assert await window.load_model()
    wd: Any = watch_loop(100.0) if gated else start_watchdog(100.0)
    window.watchdog = wd
    from app.ui.compose.chat_input import CARET_REST_S

    await asyncio.sleep(CARET_REST_S + 1.0)     # start-up work is over, the input's caret has stopped blinking
    pings = wd.pings
    out = await _count(seconds)
    out["watchdog_pings_per_s"] = (wd.pings - pings) / seconds
    wd.stop()
    window.close()
    await window.shutdown()
    store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.bench idle", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="idle time measured per window")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, qt_loop() as loop:
        os.environ["BROOK_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ["BROOK_CONFIG_DIR"] = str(Path(tmp) / "config")
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)
        result: dict[str, Any] = {"bench": "idle", "seconds": args.seconds}
        result["bare"] = loop.run_until_complete(_bare(args.seconds))
        result["brook"] = loop.run_until_complete(_brook(args.seconds, True, Path(tmp)))
        result["brook_ungated"] = loop.run_until_complete(_brook(args.seconds, False, Path(tmp)))
    for k in ("bare", "brook", "brook_ungated"):
        r = result[k]
        print(f"{k}: {r['wakeups_per_s']:.1f} wake-ups/s, {r.get('context_switches_per_s', float('nan')):.1f} "
              f"context switches/s" + (f", {r['watchdog_pings_per_s']:.1f} watchdog pings/s"
                                       if "watchdog_pings_per_s" in r else ""))
    result["wakeups_per_s"] = result["brook"]["wakeups_per_s"]
    result["within_budget"] = result["wakeups_per_s"] <= BUDGET_PER_S
    emit(result)
    return 0 if result["within_budget"] else 1


if __name__ == "__main__":
    sys.exit(main())
