"""Top-level lists as pieces: every :data:`LIST_GROUP_ITEMS` items of a long top-level list are a list of their own.

A long list streams item by item (:mod:`.lists`); if it were one ``<ul>`` the view would re-insert it whole
whenever it changes. So a top-level list of more than :data:`LIST_GROUP_ITEMS` items is cut into groups of that
many items, each its own ``<ul>`` / ``<ol start="N">`` separated by :data:`~.html.PIECE`: the first keeps the
list's top margin, the last its bottom margin, the others have none (Qt then lays them out as one list: same
indent, same markers, the numbers go on). The groups depend only on the item count, so a streamed list and the
one-shot render give the same pieces. Nested lists are never cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markdown_it.token import Token

from app.core.render.markdown.piece import PIECE

#: Items per piece of a long top-level list (only the last piece changes while the list streams).
LIST_GROUP_ITEMS = 4


@dataclass(frozen=True)
class ListSlice:
    """Render a top-level list's items from ``item_offset`` (a multiple of :data:`LIST_GROUP_ITEMS`) on: exactly
    the pieces a full render of the ``n_items``-item list gives for those items. ``start`` is the list's first
    number (ordered lists), ``task``: some item of the whole list is a task (no bullets)."""

    item_offset: int
    n_items: int
    start: int
    task: bool


@dataclass
class OpenListState:
    """The top-level list being rendered."""

    tag: str  # "ul" or "ol"
    task: bool
    start: int
    n_items: int
    items: int  # items rendered so far (including the skipped ones of a ListSlice)

    @property
    def split(self) -> bool:
        return self.n_items > LIST_GROUP_ITEMS


def count_items(tokens: Sequence[Token], idx: int) -> int:
    """Items of the list opening at ``tokens[idx]`` (its direct items only)."""
    level = tokens[idx].level + 1
    n = 0
    for j in range(idx + 1, len(tokens)):
        tok = tokens[j]
        if tok.level < level:
            break
        if tok.type == "list_item_open" and tok.level == level:
            n += 1
    return n


def list_start(tok: Token) -> int:
    """The first number of a list (1 for a bullet list or an ordered list without ``start``)."""
    start = tok.attrGet("start") if tok.type == "ordered_list_open" else None
    return int(start) if start is not None else 1


def is_task_list(tok: Token) -> bool:
    """Whether the list ``tok`` opens holds a task item (the task rule marks it)."""
    return "contains-task-list" in str(tok.attrGet("class") or "")


def list_tag(tag: str, task: bool, start: int, first: bool, last: bool) -> str:
    """The opening tag of one piece of a list (``first``/``last``: it keeps the list's top/bottom margin)."""
    styles = []
    if task:
        styles.append("list-style-type:none")  # the box is the marker: no bullet as well
    if not first:
        styles.append("margin-top:0")
    if not last:
        styles.append("margin-bottom:0")
    number = f' start="{start}"' if tag == "ol" and start != 1 else ""
    style = f' style="{";".join(styles)}"' if styles else ""
    return f"<{tag}{number}{style}>\n"


class ListPieces:
    """The renderer methods of lists (a mixin of :class:`~.html.HtmlRenderer`, which holds ``_ctx``)."""

    _ctx: Any
    items_rendered: int

    if TYPE_CHECKING:
        def renderToken(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str: ...  # RendererHTML's

    def _list_open(self, tokens: Sequence[Token], idx: int, tag: str, options: Any, env: Any) -> str:
        tok = tokens[idx]
        ctx = self._ctx
        if tok.level != 0:           # a nested list: as markdown-it writes it (but a task list has no bullets)
            if tag == "ul" and is_task_list(tok):
                return list_tag(tag, True, 1, True, True)
            return self.renderToken(tokens, idx, options, env)
        sl: ListSlice | None = ctx.list_slice
        if sl is not None:
            ctx.list_slice = None
            state = OpenListState(tag, sl.task, sl.start, sl.n_items, sl.item_offset)
        else:
            state = OpenListState(tag, is_task_list(tok), list_start(tok), count_items(tokens, idx), 0)
        ctx.top_list = state
        ctx.list_cuts.append([])
        return self._piece_tag(state)

    @staticmethod
    def _piece_tag(state: OpenListState) -> str:
        if not state.split:
            return list_tag(state.tag, state.task, state.start, True, True)
        first = state.items == 0
        last = state.items + LIST_GROUP_ITEMS >= state.n_items
        return list_tag(state.tag, state.task, state.start + state.items, first, last)

    def bullet_list_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return self._list_open(tokens, idx, "ul", options, env)

    def ordered_list_open(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return self._list_open(tokens, idx, "ol", options, env)

    def bullet_list_close(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        if tokens[idx].level == 0:
            self._ctx.top_list = None
        return "</ul>\n"

    def ordered_list_close(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        if tokens[idx].level == 0:
            self._ctx.top_list = None
        return "</ol>\n"

    def list_item_close(self, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        ctx = self._ctx
        state: OpenListState | None = ctx.top_list
        out = "</li>\n"
        if state is None or tokens[idx].level != 1:
            return out
        state.items += 1
        self.items_rendered += 1
        nxt = tokens[idx + 1] if idx + 1 < len(tokens) else None
        if state.split and state.items % LIST_GROUP_ITEMS == 0 and nxt is not None and nxt.type == "list_item_open":
            ctx.list_cuts[-1].append(len(ctx.codes))
            # no newline between the item and the list's end: Qt would end the item's text with a space
            out = f"</li></{state.tag}>\n" + PIECE + self._piece_tag(state)
        return out
