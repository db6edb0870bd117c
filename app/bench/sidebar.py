"""Opening a chat with a long history in the sidebar: ``python -m app.bench sidebar``.

A history file of ``--chats`` chats (default 1,000; each a short question and answer), ``--folders`` folders
(default 20, the chats spread over them and ungrouped) and ``--pinned`` pinned chats (default 5) is shown in the real
window offscreen. Then ``--opens`` chats (default 60), each a different one, are opened from the window
(``MainWindow.open_conversation``, until the window has painted: a synchronous ``repaint``) in two ways that
alternate, open by open, so both see the same machine load:

- ``rebuild``: the sidebar fills its whole list again from the history on every open (what Brook did before: the
  baseline; the sidebar's ``select_shown`` is replaced by its ``refresh`` for these opens);
- ``select``: opening a chat only moves the list's selection (``ChatSidebar.select_shown``).

Keys: ``open_ms_p50_rebuild`` / ``open_ms_p50_select`` (and p90), ``open_ratio_p50`` (select over rebuild), and
the sidebar's share alone, timed around the call after each open: ``sidebar_ms_p50_rebuild`` /
``sidebar_ms_p50_select``. Prints readable lines, then one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.bench._util import emit, percentile, qt_loop


def fill(store: Any, chats: int, folders: int, pinned: int) -> list[int]:
    """Save ``chats`` two-message chats in ``store``, ``folders`` folders holding every third chat in turn, and
    pin ``pinned`` of them; returns the chats' ids."""
    from app.core.conversation import Conversation, Message, MessageStatus, Role

    ids: list[int] = []
    store.db.execute("BEGIN")
    for i in range(chats):
        conv = Conversation(title=f"Chat {i}: a question about topic {i % 37}")
        store.save_message(conv, conv.add(Message(Role.USER, f"Question {i}: how does this work?")))
        store.save_message(conv, conv.add(Message(Role.ASSISTANT, f"Answer {i}: like **this**.",
                                                  status=MessageStatus.DONE)))
        assert conv.id is not None
        ids.append(conv.id)
    store.db.execute("COMMIT")
    made = [store.create_folder(f"Folder {k}") for k in range(folders)]
    for n, conv_id in enumerate(ids[::3]):
        if made:
            store.move_to_folder(conv_id, made[n % len(made)])
    for conv_id in ids[1::max(1, chats // max(1, pinned))][:pinned]:
        store.set_pinned(conv_id, True)
    return ids


def measure(chats: int, folders: int, pinned: int, opens: int, folder: Path) -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from app.core.history.store import Store
    from app.engine.scripted import ScriptedEngine
    from app.ui.window.main_window import MainWindow

    app = QApplication.instance()
    assert app is not None
    store = Store(folder / "history.sqlite3")
    ids = fill(store, chats, folders, pinned)
    window = MainWindow(ScriptedEngine(), store=store)
    window.resize(1040, 760)
    window.show()
    window.finish_start()
    for _ in range(5):
        app.processEvents()
    side = window.side
    select = side.select_shown
    order = random.Random(7).sample(ids, min(opens + 2, len(ids)))
    for conv_id in order[:2]:                      # warm: the message list made, the first chats drawn
        window.open_conversation(conv_id)
        app.processEvents()
        window.repaint()
    open_ms: dict[str, list[float]] = {"rebuild": [], "select": []}
    side_ms: dict[str, list[float]] = {"rebuild": [], "select": []}
    for n, conv_id in enumerate(order[2:]):
        mode = ("rebuild", "select")[(n + n // 2) % 2]      # rebuild, select, select, rebuild, …
        step = side.refresh if mode == "rebuild" else select
        side.select_shown = step                            # type: ignore[method-assign]
        gc.collect()
        t0 = time.perf_counter()
        window.open_conversation(conv_id)
        app.processEvents()
        window.repaint()
        open_ms[mode].append((time.perf_counter() - t0) * 1000.0)
        t1 = time.perf_counter()
        step()
        side_ms[mode].append((time.perf_counter() - t1) * 1000.0)
    side.select_shown = select                              # type: ignore[method-assign]
    rows = len(side.chats.chat_rows())
    window.close()
    window.deleteLater()
    app.processEvents()
    store.close()
    out: dict[str, float] = {"chats": float(chats), "rows": float(rows)}
    for mode in ("rebuild", "select"):
        out[f"open_ms_p50_{mode}"] = percentile(open_ms[mode], 50) or 0.0
        out[f"open_ms_p90_{mode}"] = percentile(open_ms[mode], 90) or 0.0
        out[f"sidebar_ms_p50_{mode}"] = percentile(side_ms[mode], 50) or 0.0
    out["open_ratio_p50"] = out["open_ms_p50_select"] / out["open_ms_p50_rebuild"]
    out["sidebar_ratio_p50"] = out["sidebar_ms_p50_select"] / out["sidebar_ms_p50_rebuild"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.bench sidebar", description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=1000)
    parser.add_argument("--folders", type=int, default=20)
    parser.add_argument("--pinned", type=int, default=5)
    parser.add_argument("--opens", type=int, default=60)
    args = parser.parse_args(argv)
    with qt_loop(), tempfile.TemporaryDirectory(prefix="brook-bench-sidebar-") as tmp:
        result = measure(args.chats, args.folders, args.pinned, args.opens, Path(tmp))
    for key, value in result.items():
        print(f"{key:24} {value:10.2f}", file=sys.stderr)
    emit(result)
    return 0
