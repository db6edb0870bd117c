"""The parser's fast path for plain inline content gives the tokens markdown-it's own inline rule gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.rules_core import inline as markdown_it_inline
from markdown_it.token import Token

from app.core.render.markdown.parser import _plain_inline, build_parser
from tests.helpers import CORPUS


def _reference() -> MarkdownIt:
    """Brook's parser with markdown-it's own core ``inline`` rule put back."""
    md = build_parser()
    md.core.ruler.at("inline", markdown_it_inline)
    return md


_REF = _reference()
_NEW = build_parser()


def _dump(tokens: list[Token]) -> list[object]:
    return [t.as_dict() for t in tokens]


# plain words and characters, every terminator, line breaks, and the starts of blocks (tables, lists, quotes)
_PIECES = ["word", "Name 12", "3.5", "中文", "😊", " ", "\n", "\n\n", "| a | b |\n|---|---|\n", "| 1 | x |\n",
           "- ", "1. ", "> ", "# ", "*", "_", "`", "~~", "$", "$$", "\\(", "\\[", "[", "]", "(", ")", "<", ">", "&",
           "!", ":", "-", "+", "=", "@", "%", "^", "{", "}", "#", "\\", "http://x.org", "&amp;", "    ", "\t",
           "Q4_K_M", "a_", "_b", "__", "x_y_z", "é_1", "1_é", "_*", "*_", "a_ b", "(_", "_)", ".", ","]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=0, max_size=30))
def test_any_text_parses_as_markdown_it_parses_it(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert _dump(_NEW.parse(text, {})) == _dump(_REF.parse(text, {}))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_characters_parse_as_markdown_it_parses_them(text: str) -> None:
    assert _dump(_NEW.parse(text, {})) == _dump(_REF.parse(text, {}))


def test_the_corpus_parses_as_markdown_it_parses_it() -> None:
    files = sorted((CORPUS / "answers").glob("*.md"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert _dump(_NEW.parse(text, {})) == _dump(_REF.parse(text, {})), path.name


def test_plain_content_skips_the_inline_parser() -> None:
    md = build_parser()
    seen: list[str] = []
    parse = md.inline.parse

    def counting(src: str, *args: object) -> object:
        seen.append(src)
        return parse(src, *args)   # type: ignore[arg-type]

    md.inline.parse = counting     # type: ignore[method-assign]
    tokens = md.parse("| n | name |\n|---|---|\n| 1 | Ada |\n| 2 | *Bo* |\n| 3 | model-05 |\n| 4 | Q4_K_M |\n"
                      "| 5 | _x_ |\n\nPlain words.\n\n- an item: 3 + 4 = 7 (#1, 50 %)\n", {})
    assert seen == ["*Bo*", "_x_"]   # every other inline content is plain: made without the parser
    texts = [c.content for t in tokens if t.type == "inline" for c in t.children or []]
    plain = {"n", "name", "1", "Ada", "model-05", "Q4_K_M", "Plain words.", "an item: 3 + 4 = 7 (#1, 50 %)"}
    assert plain <= set(texts)


def test_with_an_inline_rule_it_does_not_know_plain_means_no_terminator() -> None:
    """A rule the fast path has no start characters for may match at any terminator (here ``-``): content with
    one goes through the inline parser, and the result is still markdown-it's."""

    def dash(state, silent: bool) -> bool:  # type: ignore[no-untyped-def]
        if state.src[state.pos] != "-":
            return False
        if not silent:
            state.push("html_inline", "", 0).content = "&ndash;"
        state.pos += 1
        return True

    made = []
    for fast in (True, False):
        md = build_parser()
        md.inline.ruler.push("dash", dash)
        rule = _plain_inline(md) if fast else markdown_it_inline
        assert rule is not None
        md.core.ruler.at("inline", rule)
        made.append(_dump(md.parse("| a |\n|---|\n| model-05 |\n\nnine-ten\n", {})))
    assert made[0] == made[1]
    inline = [c["type"] for t in made[0] if t["type"] == "inline" for c in t["children"]]
    assert inline.count("html_inline") == 2


def test_the_fast_path_stands_down_when_its_reasoning_does_not_hold() -> None:
    md = build_parser()
    assert _plain_inline(md) is not None
    md.inline.ruler.before("text", "shout", lambda state, silent: False)   # another first inline rule
    assert _plain_inline(md) is None
    md = build_parser()
    md.inline.ruler2.push("extra", lambda state: None)                     # an unknown post-processing rule
    assert _plain_inline(md) is None
