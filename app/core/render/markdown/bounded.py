"""A bounded parse of a streamed tail: markdown-it's costly shapes are shown as text past a budget.

Inline parsing costs about 10 µs per character on runs of emphasis and link openers (``**_* **_* …``,
``[](([](…``) — markdown-it's known slow shapes — against ~1 µs on ordinary markdown: a 40,000-character
paragraph of them took ~0.4 s to parse, and while it streams the open tail is that paragraph, parsed again every
few ticks. :func:`parse_tail` parses the block structure of the whole tail (cheap: it finds the same block
boundaries) but, when the tail's inline text holds more than :data:`TAIL_DELIMITERS` delimiter characters *and*
they are more than :data:`DELIMITER_SHARE` of it, inline-parses only up to that many and shows the rest of the
text as plain text until the stream ends (:meth:`~.incremental.MarkdownStream.finish` parses all of it, so the
final HTML is the one-shot render). Ordinary markdown — a long list or table included — is far below that share
and parses as before, token for token.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from app.core.render.markdown.parser import parser

#: Delimiter characters of a tail's inline text parsed at most, per render, in a costly shape.
TAIL_DELIMITERS = 1_000
#: … when delimiters are at least this share of the inline text (ordinary markdown: ~0.02-0.15).
DELIMITER_SHARE = 0.3
#: The characters markdown-it's inline rules scan back and forth for.
DELIMITERS = frozenset("*_[]()!`<>~\\$")


_DELIMITER = re.compile("[" + re.escape("".join(sorted(DELIMITERS))) + "]")


def _delimiters(text: str) -> int:
    """Delimiter characters in ``text`` (one regular-expression scan: ~3 ms for 500,000 characters on the shared
    machine, against 10-30 ms for a Python loop over them; it ran at each re-parse of a long open paragraph)."""
    return len(_DELIMITER.findall(text))


def _cut(text: str, budget: int) -> int:
    """Index in ``text`` after its first ``budget`` delimiter characters (``len(text)`` if it has fewer)."""
    seen = 0
    for i, c in enumerate(text):
        if c in DELIMITERS:
            seen += 1
            if seen > budget:
                return i
    return len(text)


def _as_text(content: str) -> list[Token]:
    """Inline tokens showing ``content`` as plain text (line breaks kept as soft breaks)."""
    out: list[Token] = []
    for n, line in enumerate(content.split("\n")):
        if n:
            out.append(Token("softbreak", "br", 0))
        if line:
            tok = Token("text", "", 0)
            tok.content = line
            out.append(tok)
    return out


def parse_tail(src: str, env: dict[str, Any]) -> tuple[list[Token], bool]:
    """Tokens of ``src`` (normalised) as :func:`~.parser.parse` gives them, or bounded (see the module
    docstring); the flag says whether some inline text was left as plain text."""
    md = parser()
    state = StateCore(src, md, env)
    names = [r.name for r in md.core.ruler.__rules__ if r.enabled]
    rules = md.core.ruler.getRules("")
    after_block = names.index("block") + 1
    for rule in rules[:after_block]:
        rule(state)
    inlines = [t for t in state.tokens if t.type == "inline"]
    total = sum(len(t.content) for t in inlines)
    marks = sum(_delimiters(t.content) for t in inlines) if total > TAIL_DELIMITERS else 0
    bounded = marks > TAIL_DELIMITERS and marks >= DELIMITER_SHARE * total
    rests: list[tuple[Token, str]] = []
    if bounded:
        env["brook_bounded"] = True           # (long quotes are not cut: .quote_html)
        budget = TAIL_DELIMITERS
        for tok in inlines:
            cut = _cut(tok.content, budget) if budget > 0 else 0
            budget -= _delimiters(tok.content[:cut])
            if cut < len(tok.content):
                rests.append((tok, tok.content[cut:]))
                tok.content = tok.content[:cut]
    for rule in rules[after_block:]:
        rule(state)
    for tok, rest in rests:
        tok.children = [*(tok.children or []), *_as_text(rest)]
        tok.content += rest
    return state.tokens, bounded
