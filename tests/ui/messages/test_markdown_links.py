"""Links whose text names another address: the tooltip shows the real target, and a click asks before opening
(``[https://bank.example.com](https://evil.example)``); honest links open at once."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QUrl
from PySide6.QtGui import QDesktopServices, QHelpEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip

from app.core.render.markdown.links import misleading
from app.ui.messages.markdown_view import MarkdownView


@pytest.fixture
def clicks(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    opened: list[str] = []
    asked: list[tuple[str, str]] = []
    answer = {"open": False}
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url.toString())))

    def confirm(_parent, text: str, href: str) -> bool:  # type: ignore[no-untyped-def]
        asked.append((text, href))
        return answer["open"]

    monkeypatch.setattr(MarkdownView, "confirm_link", staticmethod(confirm))
    return opened, asked, answer


@pytest.mark.parametrize("source, href, text", [
    ("[https://bank.example.com](https://evil.example)", "https://evil.example", "https://bank.example.com"),
    ("[bank.example.com](https://evil.example/login)", "https://evil.example/login", "bank.example.com"),
    ("[www.bank.example.com/login](http://10.0.0.1/)", "http://10.0.0.1/", "www.bank.example.com/login"),
    ("[https://**bank**.example.com](https://evil.example)", "https://evil.example", "https://bank.example.com"),
    ("[support@bank.example](mailto:thief@evil.example)", "mailto:thief@evil.example", "support@bank.example"),
    ("<https://bank.example.com@evil.example/>", "https://bank.example.com@evil.example/",
     "https://bank.example.com@evil.example/"),
])
def test_a_link_whose_text_is_another_address_asks_first(qtbot, clicks, source: str, href: str, text: str) -> None:
    opened, asked, answer = clicks
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.set_text(f"Log in at {source} now.")
    v.anchorClicked.emit(QUrl(href))
    assert asked == [(text, href)] and opened == []          # refused: nothing opens
    answer["open"] = True
    v.anchorClicked.emit(QUrl(href))
    assert opened == [href]


@pytest.mark.parametrize("source, href", [
    ("[the docs](https://example.org/docs)", "https://example.org/docs"),
    ("<https://example.org/a>", "https://example.org/a"),
    ("[https://example.org/a](https://example.org/b)", "https://example.org/b"),
    ("[example.org](https://www.example.org/)", "https://www.example.org/"),
    ("[e.g.](https://example.org/eg)", "https://example.org/eg"),
    ("[mail me](mailto:me@example.org)", "mailto:me@example.org"),
])
def test_an_honest_link_opens_without_asking(qtbot, clicks, source: str, href: str) -> None:
    opened, asked, _answer = clicks
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.set_text(f"See {source}.")
    v.anchorClicked.emit(QUrl(href))
    assert asked == [] and opened == [href]


def test_the_tooltip_shows_the_real_target(qtbot) -> None:
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.resize(500, 200)
    v.show()
    qtbot.waitExposed(v)
    v.set_text("Log in at [https://bank.example.com](https://evil.example) now.")
    cur = QTextCursor(v.document())
    cur.setPosition(v.toPlainText().index("bank") + 2)
    pos = v.cursorRect(cur).center()
    assert v.anchorAt(pos) == "https://evil.example"
    QApplication.sendEvent(v.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, v.viewport().mapToGlobal(pos)))
    assert QToolTip.text() == "https://evil.example"
    QToolTip.hideText()


@pytest.mark.parametrize("text, href, expected", [
    ("https://bank.example.com", "https://evil.example", True),
    ("BANK.example.com.", "https://bank.example.com", False),
    ("http://127.0.0.1:8080", "http://127.0.0.1:9000/x", False),
    ("1.5", "https://example.org", False),
    ("click here", "https://evil.example", False),
    ("https://x.example", "https://user@x.example", True),
])
def test_misleading_compares_the_named_and_the_real_target(text: str, href: str, expected: bool) -> None:
    assert misleading(text, href) is expected


def _hrefs(v: MarkdownView) -> list[str]:
    out = []
    block = v.document().firstBlock()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            href = it.fragment().charFormat().anchorHref()
            if href:
                out.append(href)
            it += 1
        block = block.next()
    return out


@pytest.mark.parametrize("target", [
    "javascript:alert(1)", "JaVaScRiPt:alert(1)", "vbscript:msgbox(1)", "data:text/html,<script>x</script>",
    "file:///etc/passwd", "ftp://evil.example/x", "/etc/passwd", "//evil.example/x", "brook-copy:0",
    "brook-think:toggle", "java%09script:alert(1)", "about:blank", "chrome://settings", "#top",
])
def test_a_hostile_link_stays_inert_text(qtbot, clicks, target: str) -> None:
    """Regression: 14 kinds of address a reply may link to; none becomes a clickable link, none opens."""
    opened, asked, _answer = clicks
    v = MarkdownView(theme="light")
    qtbot.addWidget(v)
    v.set_text(f"[click me]({target}) and ![img]({target})")
    assert _hrefs(v) == [] and "click me" in v.toPlainText()
    if not target.startswith("brook-"):           # the view's own actions are not addresses to open
        v.anchorClicked.emit(QUrl(target))
    assert opened == [] and asked == []
