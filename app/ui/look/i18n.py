"""The UI language: Qt's own translation tools (``pyside6-lupdate`` / ``pyside6-lrelease``, shipped by
PySide6-Essentials).

Sources are the committed ``app/translations/brook_<lang>.ts`` files (update them with ``python -m app.ui.look.i18n
update``, which runs lupdate over ``app/ui``). The compiled ``.qm`` files are not committed: ``install`` builds a
missing or outdated one at start with lrelease (~50 ms) into the data folder (or next to the ``.ts`` when that is
writable), then installs it, with Qt's own ``qt_<lang>.qm`` for the standard buttons. The language follows the
system locale unless the settings name one (``AppSettings.language``: ``"system"``, ``"en"``, ``"zh_CN"``).
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

log = logging.getLogger("brook.i18n")

TRANSLATIONS = Path(__file__).resolve().parents[2] / "translations"
#: Languages with a translation besides English (the source language).
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}

_installed: list[QTranslator] = []
_current = "en"
_copy_label = "Copy"
_RENDERER = "app.core.render.markdown.html"


def _set_copy_label(label: str) -> None:
    """A code block's Copy link in the UI language: given to the renderer now if it is imported, else when it is
    (``apply_copy_label``; the window's start-up does not import the renderer)."""
    global _copy_label
    _copy_label = label
    if _RENDERER in sys.modules:
        apply_copy_label()


def apply_copy_label() -> None:
    """Give the renderer (importing it) the Copy label of the language installed."""
    from app.core.render.markdown.code_html import set_copy_label

    set_copy_label(_copy_label)


def current() -> str:
    """The language of the installed translation (``"en"`` when none is installed)."""
    return _current


def pyside_tool(name: str) -> Path | None:
    """Path of a Qt tool shipped inside the PySide6 wheel (``lupdate``, ``lrelease``), or None."""
    import PySide6

    base = Path(PySide6.__file__).resolve().parent
    for candidate in (base / name, base / f"{name}.exe", base / "Qt" / "libexec" / name):
        if candidate.is_file():
            return candidate
    return None


def choose_language(setting: str | None, system_locale: str | None = None) -> str:
    """``"en"`` or ``"zh_CN"``: the setting when it names a language, else the system locale (any Chinese locale
    gives ``zh_CN``; every other locale English)."""
    if setting in LANGUAGES:
        return setting
    name = system_locale if system_locale is not None else QLocale.system().name()
    return "zh_CN" if name.lower().startswith("zh") else "en"


def compiled(lang: str, out_dir: Path | None = None) -> Path | None:
    """The ``.qm`` of ``lang``, built with lrelease when missing or older than its ``.ts``; None when there is no
    ``.ts`` or no lrelease (logged)."""
    ts = TRANSLATIONS / f"brook_{lang}.ts"
    if not ts.is_file():
        return None
    for folder in ([out_dir] if out_dir else []) + [TRANSLATIONS, _cache_dir()]:
        qm = folder / f"brook_{lang}.qm"
        if qm.is_file() and qm.stat().st_mtime >= ts.stat().st_mtime:
            return qm
        tool = pyside_tool("lrelease")
        if tool is None:
            log.warning("lrelease not found in PySide6; the UI stays in English")
            return None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            subprocess.run([str(tool), "-silent", str(ts), "-qm", str(qm)], check=True, capture_output=True,
                           timeout=60)
            return qm
        except (OSError, subprocess.SubprocessError) as exc:
            log.info("cannot build %s in %s (%s); trying the next folder", qm.name, folder, exc)
    return None


def _cache_dir() -> Path:
    from app.core.settings import data_dir

    return data_dir() / "translations"


def install(setting: str | None = None, system_locale: str | None = None) -> str:
    """Install the translators for the chosen language into the running QCoreApplication (replacing earlier
    ones); returns the language code. Widgets created afterwards are translated; the texts already shown change
    too, live: Qt sends ``QEvent.LanguageChange`` and the window retranslates (``app.ui.look.retranslate``)."""
    global _current
    app = QCoreApplication.instance()
    lang = choose_language(setting, system_locale)
    for t in _installed:
        if app is not None:
            app.removeTranslator(t)
    _installed.clear()
    _current = "en"
    QLocale.setDefault(QLocale.system())
    if app is None:
        return "en"
    if lang == "en":
        _install_english_plurals(app)
        _set_copy_label("Copy")
        return "en"
    qm = compiled(lang)
    ours = QTranslator()
    if qm is None or not ours.load(str(qm)):
        log.warning("translation %s could not be loaded; the UI stays in English", lang)
        return "en"
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    for catalog in ("qtbase", "qt"):     # Qt's own texts (OK, Close, Cancel…); qt_* is a meta-catalog that PySide6's
        qt = QTranslator()               # wheels cannot always load, so qtbase_* first
        if qt.load(f"{catalog}_{lang}", qt_dir):
            app.installTranslator(qt)
            _installed.append(qt)
            break
    _current = lang                        # before the LanguageChange events it posts are handled
    app.installTranslator(ours)
    _installed.append(ours)
    _set_copy_label(QCoreApplication.translate("MarkdownView", "Copy"))   # a code block's Copy link
    QLocale.setDefault(QLocale(lang))
    return lang


def _install_english_plurals(app: QCoreApplication) -> None:
    """English has no translation, but its plurals do: ``brook_en.ts`` (plural forms only) turns
    ``tr("%n chat(s)", "", n)`` into "1 chat" / "2 chats"."""
    qm = compiled("en")
    plurals = QTranslator()
    if qm is not None and plurals.load(str(qm)):
        app.installTranslator(plurals)
        _installed.append(plurals)


def source_files() -> list[str]:
    """The files lupdate reads: every UI module, and the core modules with ``QT_TRANSLATE_NOOP`` templates."""
    app_dir = Path(__file__).resolve().parents[2]
    core = ("chat/presets.py", "streaming/provenance.py", "chat/notes.py", "chat/model_loading.py")
    return [*sorted(str(p) for p in (app_dir / "ui").rglob("*.py")), *(str(app_dir / "core" / f) for f in core)]


def update_sources() -> int:
    """Run lupdate over ``app/ui`` and refresh every ``.ts`` (new strings appear as unfinished)."""
    tool = pyside_tool("lupdate")
    if tool is None:
        print("lupdate not found in PySide6", file=sys.stderr)
        return 1
    sources = source_files()
    code = 0
    for lang in LANGUAGES:
        ts = TRANSLATIONS / f"brook_{lang}.ts"
        only = ["-pluralonly", "-target-language", "en"] if lang == "en" else []    # English: its plurals only
        code |= subprocess.run([str(tool), "-no-obsolete", "-locations", "none", *only, *sources, "-ts",
                                str(ts)]).returncode
    return code


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:] == ["update"]:
        raise SystemExit(update_sources())
    print("usage: python -m app.ui.look.i18n update", file=sys.stderr)
    raise SystemExit(2)
