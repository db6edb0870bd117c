"""A long list in the view: its pieces (``list_html``) look exactly like one list, and while it streams each refresh
inserts its last pieces only, the earlier ones sealed into segments."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from app.core.render.markdown import list_html
from app.ui.messages.markdown_view import MarkdownView

LISTS = {
    "bullets": "Intro.\n\n" + "".join(f"- item {i} with **bold** text\n" for i in range(11)) + "\nAfter.\n",
    "ordered from 3": "Intro:\n\n" + "".join(f"{i + 3}. item {i}\n" for i in range(11)) + "\nAfter.\n",
    "tasks": "".join(f"- [{'x' if i % 2 else ' '}] task {i}\n" for i in range(11)) + "\nAfter.\n",
    "loose": "".join(f"- item {i}\n\n" for i in range(11)) + "After.\n",
    "nested": "".join(f"- item {i}\n  - sub a\n  - sub b\n" for i in range(9)) + "\nAfter.\n",
    "code in items": "".join(f"- item {i}\n\n  ```\n  code {i}\n  ```\n" for i in range(9)) + "\nAfter.\n",
}


def _shot(qtbot, text: str) -> tuple[object, str, list[tuple[str, float, float, bool]]]:
    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.set_text(text)
    view.show()
    view.resize(500, view.heightForWidth(500))
    QApplication.processEvents()
    blocks = []
    b = view.document().begin()
    while b.isValid():
        f = b.blockFormat()
        blocks.append((b.text(), f.topMargin(), f.bottomMargin(), b.textList() is not None))
        b = b.next()
    return view.grab().toImage(), view.toPlainText(), blocks


@pytest.mark.parametrize("name", list(LISTS))
def test_a_list_cut_into_pieces_looks_exactly_like_one_list(qtbot, monkeypatch, name: str) -> None:
    text = LISTS[name]
    split = _shot(qtbot, text)
    monkeypatch.setattr(list_html, "LIST_GROUP_ITEMS", 10**9)      # the same list as one piece
    whole = _shot(qtbot, text)
    assert split[1] == whole[1]
    assert split[2] == whole[2]          # the same blocks, margins and list membership: no empty block between
    assert split[0] == whole[0]          # pixel for pixel


def test_a_streamed_long_list_inserts_its_last_pieces_per_refresh_and_is_sealed_as_it_goes(qtbot) -> None:
    text = "".join(f"- [{'x' if i % 3 == 0 else ' '}] task number {i}, with **bold** text\n" for i in range(600))
    view = MarkdownView(theme="light")
    qtbot.addWidget(view)
    view.resize(600, 400)
    per_refresh = []
    for i in range(0, len(text), 120):
        view.append_text(text[i:i + 120])
        before = view.pieces_inserted
        view.refresh()
        per_refresh.append(view.pieces_inserted - before)
    assert len(view.segments) >= 2                   # the list's finished pieces were sealed while it streamed
    assert max(per_refresh[10:]) <= 3                # the last group or two, not the list
    view.append_text("\nAfter the list.\n")
    view.finish()
    fresh = MarkdownView(theme="light")
    qtbot.addWidget(fresh)
    fresh.resize(600, 400)
    fresh.set_text(view.renderer.text)
    assert view.toPlainText() == fresh.toPlainText()
