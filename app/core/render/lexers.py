"""Pygments in one place: the code themes, lexers by fence language (built-in lexers only), and the formatter
that turns one segment into Qt-compatible HTML (inline styles, ``noclasses=True``).

Used in the loop's process by :mod:`app.core.render.highlight` and in the lexer worker by
:mod:`app.core.render.lexer_pool`; imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import StringIO

from pygments import lex
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.util import ClassNotFound


@dataclass(frozen=True)
class CodeTheme:
    """Colours of code and math blocks for one UI theme.

    ``pygments_style`` names a style that ships with pygments ≥ 2.17; the colours are ``#rrggbb`` strings.
    """

    name: str
    pygments_style: str
    background: str
    header_background: str
    header_color: str
    border: str
    plain_color: str
    math_background: str
    math_color: str
    muted: str
    link: str
    button_background: str
    quote_bar: str


THEMES: dict[str, CodeTheme] = {
    "light": CodeTheme(
        name="light",
        pygments_style="default",
        background="#f6f8fa",
        header_background="#eaeef2",
        header_color="#57606a",
        border="#afb8c1",
        plain_color="#1f2328",
        math_background="#eef3fb",
        math_color="#0b3d91",
        muted="#6e7781",
        link="#0969da",
        button_background="#d0d7de",
        quote_bar="#d0d7de",
    ),
    "dark": CodeTheme(
        name="dark",
        pygments_style="github-dark",
        background="#0d1117",
        header_background="#161b22",
        header_color="#8b949e",
        border="#30363d",
        plain_color="#e6edf3",
        math_background="#1c2433",
        math_color="#a5d6ff",
        muted="#8b949e",
        link="#58a6ff",
        button_background="#30363d",
        quote_bar="#3d444d",
    ),
}


def get_theme(theme: str) -> CodeTheme:
    """Return the :class:`CodeTheme` for ``"light"`` or ``"dark"``; raises ``ValueError`` for anything else."""
    try:
        return THEMES[theme]
    except KeyError:
        raise ValueError(f"unknown theme {theme!r}: expected 'light' or 'dark'") from None


_LEXER_CACHE: dict[str, Lexer | None] = {}
_FORMATTERS: dict[str, HtmlFormatter] = {}


_ALIASES: frozenset[str] | None = None


def _builtin_aliases() -> frozenset[str]:
    """Lower-case aliases of the lexers that ship with pygments (its static table: nothing is imported)."""
    global _ALIASES
    if _ALIASES is None:
        from pygments.lexers._mapping import LEXERS

        _ALIASES = frozenset(a.lower() for _mod, _name, aliases, _fn, _mt in LEXERS.values() for a in aliases)
    return _ALIASES


def get_lexer(lang: str) -> Lexer | None:
    """Return a pygments lexer for a fence's language name (``"python"``, ``"js"`` …), or None if unknown/empty.

    Lexers are created with ``stripnl=False`` so the lines keep their exact count; cached per name. Only
    lexers that ship with pygments are used (third-party lexer plugins are never looked up).
    """
    key = lang.strip().lower()
    if not key:
        return None
    if key not in _LEXER_CACHE:
        if key not in _builtin_aliases():
            # Not a lexer that ships with pygments: get_lexer_by_name would go on to import every installed
            # lexer plugin (entry points; IPython's alone takes ~0.5 s), a freeze in the middle of a stream.
            _LEXER_CACHE[key] = None
            return None
        try:
            _LEXER_CACHE[key] = get_lexer_by_name(key, stripnl=False, stripall=False, ensurenl=True)
        except ClassNotFound:
            _LEXER_CACHE[key] = None
    return _LEXER_CACHE[key]


def known_language(lang: str) -> bool:
    """Whether a fence's language name is one of pygments' built-in lexers (no lexer is imported or built)."""
    key = lang.strip().lower()
    return bool(key) and key in _builtin_aliases()


def _formatter(theme: str) -> HtmlFormatter:
    fmt = _FORMATTERS.get(theme)
    if fmt is None:
        fmt = HtmlFormatter(noclasses=True, nowrap=True, style=get_style_by_name(get_theme(theme).pygments_style))
        _FORMATTERS[theme] = fmt
    return fmt


def format_segment(code: str, lexer: Lexer, theme: str) -> str:
    """HTML of ``code`` lexed by ``lexer`` in ``theme`` (runs the lexer: may take long, see the module doc)."""
    fmt = _formatter(theme)
    buf = StringIO()
    fmt.format(lex(code, lexer), buf)
    out = buf.getvalue()
    # ensurenl=True adds a final newline when the code lacks one; keep the count of newlines exact.
    if not code.endswith("\n") and out.endswith("\n"):
        out = out[:-1]
    return out
