"""A finished reply's view frees its renderer's spent tail state after the reply's last frame, not in it
(app/ui/messages/markdown_view.py ``MarkdownView.finish``, ``RELEASE_AFTER_MS``)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(120)


def test_a_finished_view_frees_its_renderers_spent_state_after_the_end(qtbot) -> None:
    from app.ui.messages.markdown_view import RELEASE_AFTER_MS, MarkdownView

    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    text = "| k | v |\n|---|---:|\n" + "".join(f"| {k} | {k * k} |\n" for k in range(200))
    for i in range(0, len(text), 300):
        view.append_text(text[i : i + 300])
        view.refresh()
    view.finish()
    answer = view.renderer._answer
    assert answer._spent is not None              # not freed in the reply's last frame …
    qtbot.waitUntil(lambda: answer._spent is None, timeout=RELEASE_AFTER_MS + 10_000)   # … but soon after
