"""A live language switch: the texts already shown change language without a restart.

``i18n.install(lang)`` swaps the ``QTranslator``; Qt then sends ``QEvent.LanguageChange`` to every widget, and
the main window calls ``retranslate_tree``. Texts set with ``tr()`` are looked up again through the committed
``.ts`` tables (``Translations``): a text shown in the old language is mapped back to its source and forward into
the new one, exactly or through its ``%1`` / ``{0}`` pattern ("Loading %1…" keeps the model name). This reaches every
window title, label, button, placeholder, tooltip, accessible name, menu title and action of the window without
each file keeping its own list; widgets that compose texts from several pieces (the welcome state, the context
meter, the load progress) also have a ``retranslate()`` that builds them again. User content is never touched:
``skip`` names the widgets whose descendants show chats (message bubbles, search snippets, the chat list).
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from app.ui.look.i18n import TRANSLATIONS

log = logging.getLogger("brook.ui.retranslate")
#: Where a value goes into a text: Qt's ``%1`` or a Python format field ``{0}`` / ``{name}``.
_PLACEHOLDER = re.compile(r"%(\d)|\{(\w+)\}")


def _fill(values: re.Match[str], placeholder: re.Match[str]) -> str:
    """What ``placeholder`` (``%1`` / ``{0}``) stood for in the shown text ``values`` matched."""
    return values.group(_group(placeholder)) or ""


def _group(m: re.Match[str]) -> str:
    return f"p{m.group(1)}" if m.group(1) else f"f{m.group(2)}"


@functools.lru_cache(maxsize=8)
def _table(lang: str) -> tuple[tuple[str, str, str], ...]:
    """(context, source, translation) of every finished, non-plural message of ``brook_<lang>.ts``."""
    import xml.etree.ElementTree as ET  # (only for a language switch: not at start-up)

    ts = TRANSLATIONS / f"brook_{lang}.ts"
    try:
        root = ET.parse(ts).getroot()
    except (OSError, ET.ParseError) as exc:
        log.warning("cannot read %s: %s", ts, exc)
        return ()
    out = []
    for ctx in root.iter("context"):
        name = ctx.findtext("name") or ""
        for msg in ctx.iter("message"):
            tr = msg.find("translation")
            if msg.get("numerus") == "yes" or tr is None or tr.get("type") in ("unfinished", "obsolete", "vanished"):
                continue
            source, text = msg.findtext("source") or "", tr.text or ""
            if source and text:
                out.append((name, source, text))
    return tuple(out)


class Translations:
    """Maps a text shown in language ``old`` to the same text in ``new`` (``"en"`` is the source language)."""

    def __init__(self, old: str, new: str) -> None:
        self.exact: dict[str, str] = {}
        self.patterns: list[tuple[re.Pattern[str], str]] = []
        self._sources: dict[re.Pattern[str], str] = {}
        langs = {lang for lang in (old, new) if lang != "en"}
        by_lang = {lang: {(c, s): t for c, s, t in _table(lang)} for lang in langs}
        keys: dict[tuple[str, str], None] = {}
        for lang in langs:
            keys.update(dict.fromkeys(by_lang[lang]))

        def text(lang: str, key: tuple[str, str]) -> str | None:
            return key[1] if lang == "en" else by_lang[lang].get(key)

        for key in keys:
            a, b = text(old, key), text(new, key)
            if a is None or b is None or a == b:
                continue
            if _PLACEHOLDER.search(a):
                pattern = _pattern(a)
                self._sources[pattern] = a
                self.patterns.append((pattern, b))
            else:
                self.exact.setdefault(a, b)
        # the most specific template first (the most text besides its placeholders): "%1 of %2" must not take a
        # whole sentence that has " of " in it
        self.patterns.sort(key=lambda pt: -len(_PLACEHOLDER.sub("", self._sources[pt[0]])))

    def __call__(self, shown: str) -> str | None:
        """``shown`` in the new language, or None when it is not a translated text."""
        if not shown:
            return None
        found = self.exact.get(shown)
        if found is not None:
            return found
        for pattern, target in self.patterns:
            m = pattern.fullmatch(shown)
            if m is not None:
                try:
                    return _PLACEHOLDER.sub(functools.partial(_fill, m), target)
                except IndexError:          # the translation names a value the source lacks
                    continue
        return None


def _pattern(text: str) -> re.Pattern[str]:
    parts, seen = [], set()
    pos = 0
    for m in _PLACEHOLDER.finditer(text):
        parts.append(re.escape(text[pos:m.start()]))
        n = _group(m)
        parts.append(f"(?P={n})" if n in seen else f"(?P<{n}>.+?)")
        seen.add(n)
        pos = m.end()
    parts.append(re.escape(text[pos:]))
    return re.compile("".join(parts), re.DOTALL)


def retranslate_tree(root: QWidget, old: str, new: str, skip: Iterable[QWidget] = ()) -> int:
    """Translate the texts of ``root``, its child widgets, menus and actions from ``old`` to ``new``, leaving
    the descendants of ``skip`` alone. Returns how many texts changed."""
    if old == new:
        return 0
    tr = Translations(old, new)
    from_source = Translations("en", new) if new != "en" else None
    to_source = Translations(old, "en") if old != "en" else None
    skipped = [w for w in skip if w is not None]
    changed = 0

    def swap(get, set_, obj=None, prop="") -> None:
        """One text: from its remembered source when it still shows what the last switch set (two sources
        may share a translation: 模型 is both "Model" and "Models"), else looked up in the tables."""
        nonlocal changed
        shown = get()
        key = f"brookSource_{prop}"
        record = obj.property(key) if obj is not None else None
        new_text = None
        if isinstance(record, (list, tuple)) and len(record) == 2 and record[1] == shown:
            source = record[0]
            new_text = source if from_source is None else (from_source(source) or source)
        else:
            new_text = tr(shown)
            source = shown if to_source is None else to_source(shown)
        if new_text is not None and new_text != shown:
            set_(new_text)
            changed += 1
        if obj is not None and new_text is not None and source is not None:
            obj.setProperty(key, [source, new_text])

    widgets = [root, *root.findChildren(QWidget)]
    for w in widgets:
        if any(s is not w and s.isAncestorOf(w) for s in skipped):   # their own names are translated
            continue
        swap(w.windowTitle, w.setWindowTitle, w, "windowTitle")
        swap(w.toolTip, w.setToolTip, w, "toolTip")
        swap(w.accessibleName, w.setAccessibleName, w, "accessibleName")
        swap(w.accessibleDescription, w.setAccessibleDescription, w, "accessibleDescription")
        swap(w.statusTip, w.setStatusTip, w, "statusTip")
        if isinstance(w, (QLabel, QAbstractButton)):
            swap(w.text, w.setText, w, "text")
        if isinstance(w, (QLineEdit, QPlainTextEdit, QTextEdit)):
            swap(w.placeholderText, w.setPlaceholderText, w, "placeholderText")
        if isinstance(w, (QGroupBox, QMenu)):
            swap(w.title, w.setTitle, w, "title")
        if isinstance(w, QComboBox):
            for i in range(w.count()):
                swap(lambda i=i, c=w: c.itemText(i), lambda t, i=i, c=w: c.setItemText(i, t), w, f"item{i}")
    actions = {id(a): a for a in root.findChildren(QAction)}
    for menu in root.findChildren(QMenu):
        for a in menu.actions():
            actions.setdefault(id(a), a)
    for a in actions.values():
        swap(a.text, a.setText, a, "text")
        swap(a.toolTip, a.setToolTip, a, "toolTip")
        swap(a.statusTip, a.setStatusTip, a, "statusTip")
    return changed


@functools.lru_cache(maxsize=4)
def _from_english(lang: str) -> Translations:
    return Translations("en", lang)


def core_text(text: str) -> str:
    """A text the core made in English (a note at a message, a notice in the chat: ``app.core.chat.notes``,
    ``app.core.chat.session``) in the UI language, when its template is in the translations (a leading "⚠ " kept);
    else ``text`` unchanged. The core marks such templates with ``QT_TRANSLATE_NOOP`` (it never imports Qt)."""
    from app.ui.look import i18n

    lang = i18n.current()
    if lang == "en" or not text:
        return text
    prefix = "⚠ " if text.startswith("⚠ ") else ""
    found = _from_english(lang)(text[len(prefix):])
    return prefix + found if found is not None else text


class LanguageSwitch:
    """The live language switch of one window: ``apply(setting)`` installs the translator (Settings →
    Language); the window's ``LanguageChange`` then calls ``retranslate()``.

    Args:
        root: the window whose texts are translated again.
        skip: the widgets whose descendants show user content (chats, search snippets, the chat list).
        rebuilt: builds the composed texts again and lays out the shown chat (its message widgets are new).
    """

    def __init__(self, root: QWidget, skip: Iterable[QWidget], rebuilt: Callable[[], None]) -> None:
        from app.ui.look import i18n

        self.root = root
        self.skip = list(skip)
        self.rebuilt = rebuilt
        self.language = i18n.current()      # of the texts shown now

    @staticmethod
    def apply(setting: str) -> str:
        """Install the translation ``setting`` names when it differs from the one in use; Qt's LanguageChange
        then reaches ``retranslate``.

        Args:
            setting: ``AppSettings.language``: "system", "en" or "zh_CN".

        Returns:
            The language in use afterwards ("en" when the translation could not be loaded).
        """
        from app.ui.look import i18n

        if i18n.choose_language(setting) != i18n.current():
            i18n.install(setting)
        return i18n.current()

    def retranslate(self) -> int:
        """The window's texts in the language installed now: every text set with ``tr()`` through the ``.ts``
        tables (``retranslate_tree``), then ``rebuilt()``.

        Returns:
            How many texts changed (0 when the language is the one already shown).
        """
        from app.ui.look import i18n

        new = i18n.current()
        if new == self.language:
            return 0
        changed = retranslate_tree(self.root, self.language, new, skip=self.skip)
        self.language = new
        self.rebuilt()
        return changed
