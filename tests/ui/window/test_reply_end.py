"""A reply's end in the real window (scripted engine, offscreen): what arrived after the last tick is fed and
painted together with the final render — one patch, the view's ``finish`` — not patched as the tail first and
then again as the final render (app/ui/messages/coalescer.py ``finish(…, paint_end)``, app/ui/window/replies.py)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from app.core.conversation import MessageStatus
from app.core.history.store import Store
from app.core.render.markdown import render_markdown
from app.engine.scripted import ScriptedEngine
from app.ui.messages.coalescer import Coalescer
from app.ui.messages.markdown_view import MarkdownView
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(120)

SCRIPT = "Here is a table:\n\n| n | square |\n|---|---:|\n" + "".join(f"| {k} | {k * k} |\n" for k in range(12))


async def _ended(w: MainWindow, reply: object) -> bool:
    """Wait (at most 60 s) until ``reply`` is done and ``w``'s session generates nothing; False on time-out."""
    end = time.monotonic() + 60
    while not (reply.status is MessageStatus.DONE and not w.session.generating):  # type: ignore[attr-defined]
        if time.monotonic() > end:
            return False
        await asyncio.sleep(0.005)
    return True


def test_the_rest_and_the_end_are_one_patch(qtbot, qloop, tmp_path: Path, monkeypatch) -> None:
    calls: list[tuple[str, bool, int]] = []                       # (view call, the reply had ended, view)
    real_refresh, real_finish, real_tick = MarkdownView.refresh, MarkdownView.finish, Coalescer.tick
    state = {"reply": None}

    def tick(self: Coalescer) -> None:        # no tick before the end: what follows the first chunk waits
        r = state["reply"]
        if r is not None and r.status.final:
            real_tick(self)                    # the end is the next frame's work (paced)

    monkeypatch.setattr(Coalescer, "tick", tick)

    def refresh(self: MarkdownView) -> None:
        r = state["reply"]
        calls.append(("refresh", r is not None and r.status.final, id(self)))
        real_refresh(self)

    def finish(self: MarkdownView) -> None:
        calls.append(("finish", True, id(self)))
        real_finish(self)

    monkeypatch.setattr(MarkdownView, "refresh", refresh)
    monkeypatch.setattr(MarkdownView, "finish", finish)
    w = MainWindow(ScriptedEngine(SCRIPT, tokens_per_s=200), store=Store(tmp_path / "h.db"))
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    qtbot.waitExposed(w)
    try:
        assert qloop.run_until_complete(w.load_model())
        reply = w.send("A table, please.")
        assert reply is not None
        state["reply"] = reply

        assert qloop.run_until_complete(_ended(w, reply))
        view = w.chat.widget_for(reply).view
        qtbot.waitUntil(lambda: ("finish", True, id(view)) in calls, timeout=30_000)
        mine = [c[:2] for c in calls if c[2] == id(view)]
        end = mine.index(("finish", True))
        assert mine.count(("finish", True)) == 1                   # the final render once …
        assert ("refresh", True) not in mine[:end]                 # … and the rest not patched before it
        assert mine[0] == ("refresh", False)                       # the first chunk was painted at once
        assert view.renderer.finished and view.renderer.html == render_markdown(SCRIPT)
        assert view.toPlainText().count("square") == 1 and "11" in view.toPlainText()
    finally:
        qloop.run_until_complete(w.shutdown())


def test_the_end_is_saved_behind_and_the_chat_list_only_loses_its_dot(qtbot, qloop, tmp_path: Path) -> None:
    """The reply's end is written on the history's writer thread (indexing a long reply for search took 27-83 ms
    of the loop for 1 MB), and nothing on the loop reads the history meanwhile (a read waits for the write): the
    chat list only drops the reply's dot. A reply started in an older chat still moves it to the top."""
    from app.core.conversation import Conversation, Message, Role
    from app.ui.window.chat_list import BUSY_ROLE

    path = tmp_path / "h.db"
    seed = Store(path)
    for title in ("older chat", "newer chat"):
        conv = Conversation(title=title)
        seed.save_message(conv, conv.add(Message(Role.USER, f"about the {title}")))
    seed.close()
    store = Store(path)
    reads: list[str] = []
    listed = store.list_conversations

    def counted() -> list:
        reads.append("list")
        return listed()

    store.list_conversations = counted  # type: ignore[method-assign]
    w = MainWindow(ScriptedEngine("A short answer to keep.", tokens_per_s=100), store=store)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    try:
        assert qloop.run_until_complete(w.load_model())
        assert w.history.titles() == ["newer chat", "older chat"]
        w.open_conversation(store.list_conversations()[1].id)
        reads.clear()
        reply = w.send("and again")
        assert reply is not None
        assert reads and w.history.titles() == ["older chat", "newer chat"]    # the list again: it moved up
        assert [r.data(0, BUSY_ROLE) for r in w.history.chat_rows()] == [True, False]
        assert store.behind is not None
        written = store.behind.written
        reads.clear()

        assert qloop.run_until_complete(_ended(w, reply))
        assert reads == []                                    # the end did not read the history …
        assert [r.data(0, BUSY_ROLE) for r in w.history.chat_rows()] == [False, False]   # … and dropped the dot
        assert w.history.chat_rows()[0].icon(0).isNull()
        store.behind.flush()
        assert store.behind.written > written                 # the end's save went to the writer thread
        saved = store.load_conversation(w.session.conversation.id or 0).messages[-1]
        assert (saved.text, saved.status) == ("A short answer to keep.", MessageStatus.DONE)
    finally:
        qloop.run_until_complete(w.shutdown())


def test_a_burst_is_finished_only_once_its_view_shows_all_of_it(qtbot, qloop, tmp_path: Path) -> None:
    """One chunk whose render is many patches' budget of HTML (tables, code): before, the reply was finished while
    its view showed the first patches, and the rest came one patch every ``MORE_DELAY_MS``."""
    period = ("Rows:\n\n| # | name | value |\n|---:|:---|---|\n"
              + "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(40))
              + "\n```python\n" + "".join(f"x_{i} = f({i}, 'a')  # step {i}\n" for i in range(20)) + "```\n\n")
    text = period * 12                                              # ~40 KB of markdown, ~250 KB of HTML
    w = MainWindow(ScriptedEngine([text], tokens_per_s=0), store=Store(tmp_path / "h.db"))
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    qtbot.waitExposed(w)
    seen: list[tuple[bool, str]] = []

    def finished(m: object) -> None:
        view = w.chat.widget_for(m).view
        seen.append((view.lagging(), view.toPlainText()))

    w.reply_finished.connect(finished)
    try:
        assert qloop.run_until_complete(w.load_model())
        reply = w.send("Tables, please.")
        assert qloop.run_until_complete(_ended(w, reply))
        qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
        once = MarkdownView(theme=w.chat.widget_for(reply).view.theme)
        qtbot.addWidget(once)
        once.set_text(text)
        assert len(render_markdown(text)) > 20 * 8_000                # many patches' budget
        lagging, shown = seen[0]
        assert not lagging and shown == once.toPlainText()
    finally:
        qloop.run_until_complete(w.shutdown())


def _held_window(qtbot, tmp_path: Path, monkeypatch) -> tuple[MainWindow, str, dict[str, bool]]:  # type: ignore[no-untyped-def]
    """A shown window whose render tick does nothing while ``state["hold"]`` (True at first), on a scripted
    engine whose reply (returned) ends with more than a slice still to paint."""
    state = {"hold": True}
    real_tick, real_soon = Coalescer.tick, Coalescer.paint_soon
    monkeypatch.setattr(Coalescer, "tick", lambda self: None if state["hold"] else real_tick(self))
    monkeypatch.setattr(Coalescer, "paint_soon", lambda self, r: None if state["hold"] else real_soon(self, r))
    script = SCRIPT + "".join(f"\nLine {k} of the rest, more than a slice.\n" for k in range(60))
    w = MainWindow(ScriptedEngine(script, tokens_per_s=0), store=Store(tmp_path / "h.db"))
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    qtbot.waitExposed(w)
    return w, script, state


@pytest.mark.parametrize("again", ["continue", "regenerate"])
def test_a_reply_generated_again_before_its_end_was_painted_shows_all_of_the_new_text(
        qtbot, qloop, tmp_path: Path, monkeypatch, again: str) -> None:
    """A reply that ends with more text than a slice still to paint is finished by the ticks that paint it (and,
    paced, so is one whose end comes while a frame waits for its beat). Continue or Ctrl+R meanwhile started the
    new generation on a view that had not shown the rest: the rest was lost from the screen and the first
    generation never counted as finished. Its end is finished first, then the new text streams on from it."""
    from app.core.chat import session_ops

    w, script, state = _held_window(qtbot, tmp_path, monkeypatch)
    finished: list[object] = []
    w.reply_finished.connect(finished.append)
    try:
        assert qloop.run_until_complete(w.load_model())
        reply = w.send("A table, please.")
        assert reply is not None
        assert qloop.run_until_complete(_ended(w, reply))
        assert w.coalescer.tracked(reply) and not finished          # its end waits for the ticks
        w.session.engine.script = ["\n\nAnd ", "more ", "after it."]
        start = session_ops.continue_reply if again == "continue" else session_ops.regenerate
        assert start(w.session) is reply
        assert finished == [reply]                                  # the first generation's end: finished now
        state["hold"] = False
        assert qloop.run_until_complete(_ended(w, reply))
        qtbot.waitUntil(lambda: len(finished) == 2, timeout=30_000)
        view = w.chat.widget_for(reply).view
        assert reply.text == (script if again == "continue" else "") + "\n\nAnd more after it."
        assert view.renderer.finished and view.renderer.html == render_markdown(reply.text)
    finally:
        qloop.run_until_complete(w.shutdown())


def test_a_reply_says_it_is_done_when_its_end_is_painted_not_before(qtbot, qloop, tmp_path: Path,
                                                                     monkeypatch) -> None:
    """A reply that ends with more than a slice still to paint is finished by the ticks: its status and figures
    change with the painted end (``ended``'s ``shown``), not when the end arrives — then it said "done" over a
    half-painted text, and updating the widget twice cost ~1 ms of the frame the end fell in (a late beat)."""
    w, _script, state = _held_window(qtbot, tmp_path, monkeypatch)
    try:
        assert qloop.run_until_complete(w.load_model())
        reply = w.send("A table, please.")
        assert reply is not None
        assert qloop.run_until_complete(_ended(w, reply))
        widget = w.chat.widget_for(reply)
        assert w.coalescer.tracked(reply)                           # its end waits for the ticks …
        assert widget.status.text() == "generating…" and widget.figures.isHidden()   # … and so does "done"
        state["hold"] = False
        qtbot.waitUntil(lambda: not w.coalescer.tracked(reply), timeout=30_000)
        assert widget.status.text() == "" and not widget.figures.isHidden()     # shown with the end
        assert "TTFT" in widget.figures.text()
    finally:
        qloop.run_until_complete(w.shutdown())
