"""The markdown-it parser Brook uses, input normalisation and grouping tokens into top-level blocks.

Parsing: markdown-it-py's ``commonmark`` preset with ``html=False`` (raw HTML in model output is shown as
escaped text, never interpreted) plus tables, strikethrough, task lists and dollar math (``$…$`` inline,
``$$…$$`` blocks; ``allow_space=False, allow_digits=False`` so "Prices like $5 and $10" stays text;
``allow_blank_lines=False`` so a ``$$`` block cannot cross a blank line, which :mod:`.boundaries` relies on;
``double_inline`` so ``$$…$$`` in the middle of a sentence is one display formula set in the line, not ``$``,
formula, ``$``) and LaTeX's bracket delimiters ``\\( … \\)`` / ``\\[ … \\]`` (:mod:`.brackets`).
Single line breaks are rendered as line breaks (``breaks=True``), as GitHub comments and chat apps do: models
write poems, addresses and informal lists with single newlines. The parser is only used to make tokens;
:mod:`.html` turns them into HTML (with the parser's options).
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from app.core.render.markdown.brackets import brackets_plugin
from app.core.render.markdown.quote_html import quote_pieces_rule
from app.core.render.markdown.thinking import think_block

#: Block nesting level (a list level counts 2: list + item; a quote 1) from which the rest of a nested block
#: is shown as literal text. markdown-it's own guard (``maxNesting`` = 20 in the CommonMark preset) silently
#: DROPS everything past it — the rest of the nested block and, for lists, what follows the list.
DEEP_LEVEL = 16
#: Quotes nested this deep and deeper show the rest of their lines as literal text too. A quote is drawn as a
#: table (the bar is a cell) and Qt lays nested tables out in time exponential in their depth (measured in the
#: reply view: depth 4 2 ms, 6 2.5 ms, 8 6 ms, 10 41 ms, 12 199 ms; a line of 5,000 ``>`` froze the window for
#: minutes; streamed at depth 4 its slowest refresh took 38 ms, at 6 128 ms).
QUOTE_DEEP_LEVEL = 4


def _quote_depth(state: Any) -> int:
    """Quotes open around the block being parsed (counted back to the last top-level block; at most
    ``QUOTE_DEEP_LEVEL``)."""
    depth = closes = 0
    for tok in reversed(state.tokens):
        if tok.type == "blockquote_close":
            closes += 1
        elif tok.type == "blockquote_open":
            if closes:
                closes -= 1
            else:
                depth += 1
                if depth >= QUOTE_DEEP_LEVEL:
                    break
        if tok.level == 0 and tok.nesting == 1:
            break
    return depth


def _too_deep(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule: at ``DEEP_LEVEL`` and deeper (or inside ``QUOTE_DEEP_LEVEL`` quotes), keep the remaining lines
    of this nested range as a literal code block instead of parsing (and, past ``maxNesting``, losing) them."""
    if silent or state.level < QUOTE_DEEP_LEVEL:
        return False
    if state.level < DEEP_LEVEL and _quote_depth(state) < QUOTE_DEEP_LEVEL:
        return False
    lines = []
    for n in range(start_line, end_line):
        first = state.bMarks[n] + min(state.tShift[n], state.blkIndent)
        lines.append(state.src[first:state.eMarks[n]])
    token = state.push("code_block", "code", 0)
    token.content = "\n".join(lines) + "\n"
    token.map = [start_line, end_line]
    state.line = end_line
    return True


#: A ``$`` that opens an amount of money: digits, an optional scale word, then a blank, punctuation or the end
#: (``$4bn;``, ``$1.50 ``, ``$12,``), not a formula such as ``$2x+1$``.
_PRICE = re.compile(r"\$\d[\d.,]*(?:[kKmMbBtT]n?|bn|million|billion|trillion)?(?=[\s,.;:!?)*_~]|$)")


def _not_a_price(rule: Any) -> Any:
    """dollarmath's inline rule, except at a ``$`` that starts an amount of money (:data:`_PRICE`): "from $2bn to
    $4bn; a coffee costs R$ 12,29" is two prices, not the formula ``4bn; a coffee costs R``."""

    def math_inline(state: Any, silent: bool) -> bool:
        if state.src.startswith("$", state.pos) and _PRICE.match(state.src, state.pos):
            return False
        return bool(rule(state, silent))

    return math_inline


_TODO = re.compile(r"\[[ xX]][ \t\n\v\f\r]+")
_CHECKBOX = {
    " ": '<input class="task-list-item-checkbox" disabled="disabled" type="checkbox">',
    "x": '<input class="task-list-item-checkbox" checked="checked" disabled="disabled" type="checkbox">',
}


def _tasklists(state: Any) -> None:
    """Core rule: ``mdit_py_plugins.tasklists`` (disabled boxes, no labels), token for token, in O(tokens).

    The plugin finds each task item's list by scanning back from the item (quadratic: 2,000 task items took
    ~250 ms of a ~380 ms parse here); this keeps the last token index seen at each nesting level instead."""
    tokens = state.tokens
    last_at: dict[int, int] = {}   # level → index of the last token before the one looked at
    for i, tok in enumerate(tokens):
        if (
            2 <= i < len(tokens) - 1
            and tok.type == "inline"
            and tokens[i - 1].type == "paragraph_open"
            and tokens[i - 2].type == "list_item_open"
            and _TODO.match(tok.content)
        ):
            assert tok.children is not None
            box = Token("html_inline", "", 0)
            if tok.content.startswith("[ ] "):     # (a box after "[ ]" and a tab is empty, as the plugin's)
                box.content = _CHECKBOX[" "]
            elif tok.content.startswith(("[x] ", "[X] ")):
                box.content = _CHECKBOX["x"]
            tok.children.insert(0, box)
            tok.children[1].content = tok.children[1].content[3:]
            tok.content = tok.content[3:]
            item = tokens[i - 2]
            item.attrSet("class", "task-list-item")
            tokens[last_at.get(item.level - 1, -1)].attrSet("class", "contains-task-list")
        last_at[tok.level] = i


#: markdown-it's inline post-processing rules (``ruler2``) that leave a lone ``text`` token as it is: they act on
#: delimiters (``*``, ``_``, ``~``) and join adjacent text tokens, and a plain text has neither.
_PLAIN_SAFE_POST_RULES = frozenset({"balance_pairs", "strikethrough", "emphasis", "fragments_join"})
#: The characters at which each inline rule can match (its source: markdown-it-py's ``rules_inline``, mdit-py-
#: plugins' ``dollarmath``, :mod:`.brackets`). At a terminator where none of the enabled rules matches, markdown-it
#: adds the character to the pending text and ``text`` goes on: a content without any of these characters is one
#: text token, whatever terminators (``-``, ``:``, ``#``, ``=``, ``%``…) it holds.
_RULE_STARTS = {
    "text": "", "linkify": ":", "newline": "\n", "escape": "\\", "backticks": "`", "strikethrough": "~",
    "emphasis": "*_", "link": "[", "image": "!", "autolink": "<", "html_inline": "<", "entity": "&",
    "math_inline": "$", "math_inline_bracket": "\\",
}


def _plain_inline(md: MarkdownIt) -> Any:
    """markdown-it's core ``inline`` rule, with a fast path for *plain* inline content — text holding none of the
    characters at which an enabled inline rule can match (:data:`_RULE_STARTS`): its first rule, ``text``, takes
    the text up to the next terminator, no rule matches there, the character joins the pending text and ``text``
    goes on, so the whole content becomes one text token. An ``_`` right after an ASCII letter or digit
    (``Q4_K_M``, ``x_``) is right-flanking and not after punctuation, so it cannot open emphasis (CommonMark
    0.31, 6.2); with no ``_`` that can open, none closes, and the emphasis rule leaves each as a text token that
    ``fragments_join`` joins to its neighbours. The token is made
    directly (``Token("text", "", 0)`` with the content, as ``StateInline.pushPending`` makes it; nothing for
    empty content). With an inline rule not in that table, plain is stricter: none of the characters the inline
    parser stops at (``md.inline.terminator_re``, which plugins extend). 95 % of the inline tokens of the render
    bench's 1 MB reply are plain (cells such as ``model-05`` or ``Q4_K_M``, list items, headings; 68 % by the
    terminators alone).

    Returns None (keep markdown-it's rule) where that reasoning does not hold: a markdown-it without
    ``terminator_re`` (before 4.0), another first inline rule, or post-processing rules not known to leave a
    lone text token as it is."""
    from markdown_it.rules_inline import text as text_rule

    terminators = getattr(md.inline, "terminator_re", None)
    rules = md.inline.ruler.getRules("")
    post = {r.name for r in md.inline.ruler2.__rules__ if r.enabled}
    if terminators is None or not rules or rules[0] is not text_rule or not post <= _PLAIN_SAFE_POST_RULES:
        return None
    names = [r.name for r in md.inline.ruler.__rules__ if r.enabled]
    if all(name in _RULE_STARTS for name in names):
        starts = set("".join(_RULE_STARTS[name] for name in names))
        pattern = "[" + re.escape("".join(sorted(starts - {"_"}))) + "]"
        if "_" in starts:   # but not an ``_`` right after an ASCII letter or digit: it never opens emphasis
            pattern += "|(?<![A-Za-z0-9])_"
        special = re.compile(pattern).search
    else:
        special = terminators.search

    def inline(state: Any) -> None:
        parse_inline, env = state.md.inline.parse, state.env
        for token in state.tokens:
            if token.type != "inline":
                continue
            if token.children is None:
                token.children = []
            content = token.content
            if special(content) is None:
                if content:
                    text = Token("text", "", 0)
                    text.content = content
                    token.children.append(text)
                continue
            parse_inline(content, state.md, env, token.children)

    return inline


def build_parser() -> MarkdownIt:
    """A new parser with Brook's syntax (see the module docstring)."""
    md = MarkdownIt("commonmark", {"html": False, "breaks": True})
    md.core.ruler.at("normalize", _normalize)   # the same, without two regex passes over text that has no CR
    md.enable(["table", "strikethrough"])
    md.use(tasklists_plugin)
    md.core.ruler.at("github-tasklists", _tasklists)   # the plugin's own rule, in linear time
    md.core.ruler.after("inline", "brook_quote_pieces", quote_pieces_rule)   # long quotes as pieces
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, allow_blank_lines=False, double_inline=True)
    md.use(brackets_plugin)
    dollars = next(r.fn for r in md.inline.ruler.__rules__ if r.name == "math_inline")
    md.inline.ruler.at("math_inline", _not_a_price(dollars))
    md.block.ruler.before("table", "brook_too_deep", _too_deep, {"alt": []})
    md.block.ruler.before("fence", "think_block", think_block, {"alt": ["paragraph", "reference"]})
    fast = _plain_inline(md)              # after every inline rule is in place: it checks their order
    if fast is not None:
        md.core.ruler.at("inline", fast)
    return md


_PARSER: MarkdownIt | None = None


def parser() -> MarkdownIt:
    """The shared parser (built on first use)."""
    global _PARSER
    if _PARSER is None:
        _PARSER = build_parser()
    return _PARSER


def parse(src: str, env: dict[str, Any]) -> list[Token]:
    """Tokens of ``src`` (already :func:`normalize`-d). ``env["references"]`` collects link reference
    definitions and resolves references against the ones already in it."""
    return parser().parse(src, env)


class ParseMemo:
    """The last parse of an open block's fast path (:mod:`.lists`, :mod:`.quotes`, :mod:`.tables`), kept for one
    more use on the same source.

    An open list, quote or table parses the tail's new lines in ``advance``; when its block ended among them,
    ``advance`` gives up and the caller asks ``close``, which parses the very same source again (a catch-up slice
    is cut at a line end, so there is no partial line to tell the two apart). A parse of a 2-4 KB slice is
    3-8 ms: twice, it made the slowest render ticks of a 1 MB reply in one chunk (``python -m app.bench render
    --shapes one_mb_chunk``). :meth:`keep` marks the last parse as reusable (call it only before handing no
    token to a renderer: a render may change them); :meth:`parse` gives it back once for the same ``src`` and the
    same ``references`` object (never changed in place: each parse copies it), else parses."""

    __slots__ = ("_env_refs", "_kept", "_n_refs", "_refs", "_src", "_tokens")

    def __init__(self) -> None:
        self._src: str | None = None
        self._refs: dict[str, Any] | None = None
        self._n_refs = 0
        self._tokens: list[Token] = []
        self._env_refs: dict[str, Any] = {}
        self._kept = False

    def parse(self, src: str, references: dict[str, Any]) -> tuple[list[Token], dict[str, Any]]:
        """``(tokens, references after the parse)`` of ``src`` parsed with a copy of ``references``."""
        if self._kept and references is self._refs and len(references) == self._n_refs and src == self._src:
            self._kept = False
            tokens, env_refs = self._tokens, self._env_refs
            self._src, self._refs, self._tokens, self._env_refs = None, None, [], {}
            return tokens, env_refs
        env = {"references": dict(references)}
        tokens = parse(src, env)
        self._src, self._refs, self._n_refs, self._tokens, self._env_refs = (src, references, len(references),
                                                                             tokens, env["references"])
        self._kept = False
        return tokens, env["references"]

    def keep(self) -> None:
        """The last parse's tokens went to no renderer: the next :meth:`parse` of the same source may have them."""
        self._kept = self._src is not None


def normalize(text: str) -> str:
    """The input normalisation markdown-it applies (CR LF / CR → LF, NUL → U+FFFD), done up front."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in text:
        text = text.replace("\0", "\ufffd")
    return text


def _normalize(state: StateCore) -> None:
    """markdown-it's ``normalize`` core rule (CR LF / CR → LF, NUL → U+FFFD) as :func:`normalize`: a text with
    neither (every tail the renderer parses: it is fed normalised) is not copied. markdown-it's two regex passes
    over each parsed text took 0.8 of the 2.8 ms of the final render of a reply ending in a 200 KB code line
    (renderer alone, median of 5, same run)."""
    state.src = normalize(state.src)


def group_blocks(tokens: list[Token]) -> list[list[Token]]:
    """Split a token stream into top-level blocks (each group starts at a level-0 opening/standalone token)."""
    groups: list[list[Token]] = []
    for tok in tokens:
        if (tok.level == 0 and tok.nesting >= 0) or not groups:
            groups.append([tok])
        else:
            groups[-1].append(tok)
    return groups


def fence_lang(info: str) -> str:
    """The language name of a fence's (unescaped) info string: its first word, or ""."""
    return info.strip().split(maxsplit=1)[0] if info.strip() else ""
