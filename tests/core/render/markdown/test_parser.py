"""Brook's linear task-list rule gives the tokens ``mdit_py_plugins.tasklists`` gives, token for token; its
normalize rule gives markdown-it's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.tasklists import tasklists_plugin

from app.core.render.markdown.parser import build_parser

_LINES = ["- [ ] a\n", "- [x] b\n", "* [X] c\n", "1. [ ] d\n", "3) [x] e\n", "  - [ ] nested\n",
          "    - [x] deep\n", "\n", "> - [ ] quoted\n", "para\n", "- [ ]\ttab\n", "- plain\n", "   [ ] x\n",
          "- [ ]\n", "- [y] no\n", "  text under\n"]


def _plugin_parser() -> MarkdownIt:
    """Brook's parser with the plugin's own (quadratic) task-list rule put back."""
    ref = MarkdownIt()
    tasklists_plugin(ref)
    rule = next(r.fn for r in ref.core.ruler.__rules__ if r.name == "github-tasklists")
    md = build_parser()
    md.core.ruler.at("github-tasklists", rule)
    return md


_REF = _plugin_parser()
_NEW = build_parser()


def _dump(tokens: list[Token]) -> list[tuple[object, ...]]:
    return [(t.type, t.level, t.attrs, t.content, [(c.type, c.content) for c in t.children or []])
            for t in tokens]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_LINES), min_size=1, max_size=14))
def test_task_lists_parse_as_the_plugin_does(lines: list[str]) -> None:
    text = "".join(lines)
    assert _dump(_NEW.parse(text, {})) == _dump(_REF.parse(text, {}))


def test_long_task_list_marks_every_item_and_its_list() -> None:
    text = "".join(f"- [{'x' if i % 3 == 0 else ' '}] task {i}\n" for i in range(300)) + "\n1. [ ] one\n"
    tokens = _NEW.parse(text, {})
    assert _dump(tokens) == _dump(_REF.parse(text, {}))
    assert sum(t.attrGet("class") == "task-list-item" for t in tokens) == 301
    assert sum(t.attrGet("class") == "contains-task-list" for t in tokens) == 2


@pytest.mark.parametrize("src", ["a\r\nb\rc\0d\n", "# Title\r\n\r\n- x\r- y\n\n```py\r\ncode\r\n```\r\n", "plain\n", "",
                                 "| a |\r\n|---|\r\n| \0 |\r\n"])
def test_the_parser_normalises_line_ends_and_nul_as_markdown_it_does(src: str) -> None:
    """Brook's normalize rule (no copy of a text without CR or NUL) gives markdown-it's own tokens."""
    from markdown_it.rules_core.normalize import normalize as markdown_it_normalize

    from app.core.render.markdown.parser import build_parser, parser

    theirs = build_parser()
    theirs.core.ruler.at("normalize", markdown_it_normalize)

    def shape(md: Any) -> list[tuple[str, str, Any]]:
        return [(t.type, t.content, t.map) for t in md.parse(src, {"references": {}})]
    assert shape(parser()) == shape(theirs)
