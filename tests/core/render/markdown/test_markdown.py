"""IncrementalMarkdown API, streaming behaviour, safety policy and Qt-friendly HTML (issue 4)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.core.render.markdown import (
    CODE_PIECE_LINES,
    PIECE,
    TABLE_GROUP_ROWS,
    TABLE_WIDTH_ROWS,
    IncrementalMarkdown,
    is_safe_url,
    render_markdown,
    split_thinking,
)
from tests.helpers import CORPUS


def stream(text: str, size: int = 1, theme: str = "light") -> tuple[IncrementalMarkdown, list[tuple[int, str]]]:
    """Feed ``text`` in ``size``-char chunks; return the renderer and (len(stable_blocks), tail_html) per feed."""
    md = IncrementalMarkdown(theme=theme)
    seen = []
    for i in range(0, len(text), size):
        md.feed(text[i : i + size])
        md.render()
        seen.append((len(md.stable_blocks), md.tail_html))
    return md, seen


def test_api_shapes() -> None:
    md = IncrementalMarkdown(theme="dark")
    md.feed("")
    md.feed("# Title\n\nsome *text*")
    assert md.stable_blocks == [] and md.tail_html == ""  # a read renders nothing
    assert md.render() is True and md.render() is False
    assert isinstance(md.stable_blocks, list)
    assert md.html == "".join(md.stable_blocks) + md.tail_html
    assert md.text == "# Title\n\nsome *text*"
    n = md.finish()
    assert n == 1 and md.tail_html == ""
    assert md.html == render_markdown(md.text, theme="dark")
    assert md.finish() == len(md.stable_blocks)  # idempotent
    with pytest.raises(RuntimeError):
        md.feed("more")


def test_unknown_theme_raises() -> None:
    with pytest.raises(ValueError):
        IncrementalMarkdown(theme="sepia")
    with pytest.raises(ValueError):
        render_markdown("x", theme="sepia")


def test_stable_blocks_are_append_only() -> None:
    text = CORPUS / "answers" / "04_nested_lists.md"
    src = text.read_text(encoding="utf-8") if text.is_file() else "# a\n\n- b\n- c\n\npara\n\n---\n\nend\n"
    md = IncrementalMarkdown()
    snapshot: list[str] = []
    for ch in src:
        md.feed(ch)
        md.render()
        blocks = md.stable_blocks
        assert blocks[: len(snapshot)] == snapshot
        snapshot = list(blocks)
    assert md.finish() == len(snapshot)


def test_blocks_move_to_the_stable_prefix() -> None:
    md, seen = stream("# Head\n\nFirst paragraph.\n\nSecond one.\n")
    assert seen[-1][0] == 2  # heading and first paragraph are stable, the last paragraph is the tail
    assert "Second one." in md.tail_html
    assert "Second one." not in "".join(md.stable_blocks)


def test_loose_list_stays_in_tail_until_next_block() -> None:
    md, _ = stream("- a\n- b\n\n- c\n")
    assert md.stable_blocks == []
    md.feed("\nafter\n")
    md.render()
    assert len(md.stable_blocks) == 1 and "<p>a</p>" in md.stable_blocks[0]  # loose list: items in <p>
    md.finish()
    assert md.html == render_markdown(md.text)


def test_setext_heading_and_table_reinterpret_the_open_block() -> None:
    md, _ = stream("Title\n")
    assert "<p>Title</p>" in md.tail_html
    md.feed("=====\n")
    md.render()
    assert md.html == "<h1>Title</h1>\n" and md.tail_html == ""  # a finished heading is stable at once
    md2, _ = stream("| a | b |\n")
    assert "<table" not in md2.tail_html
    md2.feed("|---|---|\n| 1 | 2 |\n")
    md2.render()
    assert "<table" in md2.tail_html


def test_open_fence_is_code_from_its_first_line() -> None:
    text = "Intro\n\n```python\ndef f():\n    return 1\n"
    md = IncrementalMarkdown()
    for i, ch in enumerate(text):
        md.feed(ch)
        md.render()
        if i >= text.index("```python\n") + len("```python\n"):
            assert "<pre" in md.tail_html and "<p>```" not in md.tail_html


def test_partial_closing_fence_is_held_back() -> None:
    text = "The checksum is:\n\n```text\nabc123\n```"
    md = IncrementalMarkdown()
    for ch in text:
        md.feed(ch)
        md.render()
        shown = md.html
        assert "`</pre>" not in shown and "\n`" not in re.sub(r"<[^>]+>", "", shown).split("abc123")[-1]
    md.finish()
    assert md.html == render_markdown(text)
    assert md.code_blocks == ["abc123\n"]


def test_unterminated_fence_stays_code_after_finish() -> None:
    md, _ = stream("Server:\n\n```python\nimport asyncio\n\nasync def main():\n    pass\n")
    md.finish()
    assert "<pre" in md.html and "asyncio" in md.code_blocks[0]
    assert md.html == render_markdown(md.text)


def test_code_blocks_and_copy_links() -> None:
    text = "```py\nprint(1)\n```\n\ntext\n\n    indented\n\n~~~\nraw <b>\n~~~\n"
    md, _ = stream(text, 3)
    md.finish()
    assert md.code_blocks == ["print(1)\n", "indented\n", "raw <b>\n"]
    assert re.findall(r'href="(brook-copy:\d+)"', md.html) == ["brook-copy:0", "brook-copy:1", "brook-copy:2"]
    assert "raw &lt;b&gt;" in md.html


def test_late_reference_definition_rerenders_at_finish() -> None:
    md = IncrementalMarkdown()
    md.feed("See [the spec][s].\n\nMore text.\n\nAnd more.\n\n")
    md.render()
    assert md.stable_blocks and "<a " not in md.stable_blocks[0]
    before = len(md.stable_blocks)
    md.feed("[s]: https://spec.commonmark.org/\n")
    first = md.finish()
    assert first == 0 < before
    assert '<a href="https://spec.commonmark.org/"' in md.stable_blocks[0]
    assert md.html == render_markdown(md.text)


def test_earlier_reference_definition_resolves_later_blocks() -> None:
    md, _ = stream("[s]: https://example.org\n\nA\n\nsee [s]\n\nB\n")
    assert any('href="https://example.org"' in b for b in md.stable_blocks)
    assert md.finish() == len(md.stable_blocks) - 1


def test_link_policy() -> None:
    out = render_markdown(
        "[ok](https://a.example/x) [m](mailto:a@b.c) [js](javascript:alert(1)) [f](file:///etc/passwd) "
        "[rel](/relative) [copy](brook-copy:0) <https://auto.example>"
    )
    hrefs = re.findall(r'<a href="([^"]+)"', out)
    assert hrefs == ["https://a.example/x", "mailto:a@b.c", "https://auto.example"]
    assert "javascript:alert(1)" in out and "file:///etc/passwd" in out  # shown as inert text
    assert "(/relative)" in out and "(brook-copy:0)" in out


def test_images_never_load() -> None:
    out = render_markdown("![remote](http://127.0.0.1:9/t.png) ![data](data:image/png;base64,AAAA)")
    assert "<img" not in out
    assert '<a href="http://127.0.0.1:9/t.png"' in out
    assert "remote" in out and "data:image/png;base64,AAAA" in out
    assert 'href="data:' not in out


def test_raw_html_is_inert(corpus_dir: Path) -> None:
    out = render_markdown((corpus_dir / "answers" / "07_inert_html.md").read_text(encoding="utf-8"))
    for bad in ("<img", "<script", "<table><tr>", 'href="javascript:', 'href="file:', "onerror=alert(1)>"):
        assert bad not in out
    assert "&lt;script&gt;" in out and "&lt;img src=x onerror=alert(1)&gt;" in out
    assert "&lt;table&gt;&lt;tr&gt;&lt;td&gt;an unclosed table" in out


def test_math() -> None:
    out = render_markdown("Vector $z \\in \\mathbb{R}^K$ and $a_1*b*c_2$.\n\n$$\nx_*^2 *y*\n$$\n")
    assert "z \\in \\mathbb{R}^K" in out
    assert "<em>" not in out  # math is not mangled by emphasis
    assert out.count("monospace") >= 2
    prices = render_markdown("Prices like $5 and $10 are not math.")
    assert prices == "<p>Prices like $5 and $10 are not math.</p>\n"


def test_tasks_strikethrough_tables() -> None:
    out = render_markdown("- [x] done\n- [ ] todo\n\n~~gone~~\n\n| a | b |\n|--:|---|\n| 1 | 2 |\n")
    assert "☑" in out and "☐" in out and "<input" not in out
    assert "<s>gone</s>" in out
    assert "<table " in out and "border-bottom:" in out and "text-align:right" in out


def test_long_table_is_split_into_row_groups_with_equal_widths() -> None:
    rows = "".join(f"| {i} | item {i} | {'x' * (i % 7)} |\n" for i in range(30))
    out = render_markdown("| n | name | note |\n|--:|---|---|\n" + rows)
    groups = out.split(PIECE)
    assert len(groups) == -(-30 // TABLE_GROUP_ROWS) and all("<table width=\"100%\"" in g for g in groups)
    assert "<th" in groups[0] and "<th" not in groups[1]
    widths = [re.findall(r'width="(\d+)%"', g)[1:4] for g in groups]  # first row's cells
    assert all(w == widths[0] for w in widths) and sum(map(int, widths[0])) <= 100
    short = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert PIECE not in short and "width=" not in short  # one group: natural widths
    nested = render_markdown("- item\n\n  | n |\n  |---|\n" + "".join(f"  | {i} |\n" for i in range(30)))
    assert PIECE not in nested  # only top-level blocks are split into pieces


def test_code_block_pieces() -> None:
    n = CODE_PIECE_LINES
    code = "".join(f"x = {i}\n" for i in range(2 * n + n // 2))
    out = render_markdown(f"```python\n{code}```\n")
    pieces = out.split(PIECE)
    assert len(pieces) == 1 + 3  # header, then n + n + n/2 lines
    assert ">python<" in pieces[0] and "brook-copy:0" in pieces[0] and "<pre" not in pieces[0]
    assert all(p.startswith("<pre") for p in pieces[1:])
    assert [p.count("\n") for p in pieces[1:]] == [n + 1, n + 1, n // 2 + 1]  # one more: the newline after <pre>
    assert "margin-bottom:8px" in pieces[-1] and "margin-bottom:8px" not in pieces[1]
    nested = render_markdown(f"> ```python\n> {code[:20]}> ```\n")
    assert PIECE not in nested and "<pre" in nested


def test_code_highlight_is_inline_styled_and_themed() -> None:
    light = render_markdown("```python\ndef f():\n    return 1\n```\n", theme="light")
    dark = render_markdown("```python\ndef f():\n    return 1\n```\n", theme="dark")
    assert 'style="color' in light and "class=" not in light
    assert light != dark
    assert ">python<" in light and "Copy&nbsp;</a>" in light and "text-decoration:none" in light  # a button


def test_thinking_is_routed_to_a_nested_renderer() -> None:
    text = "  <think>\nplan *carefully*\n</think>\n\nThe **answer**.\n"
    for size in (1, 2, 3, 5, 8):
        md, _ = stream(text, size)
        assert md.thinking is not None and md.thinking_done
        assert "answer" in md.tail_html and "plan" not in md.tail_html
        md.finish()
        assert "<em>carefully</em>" in md.thinking.html
        assert md.html.startswith('<div class="brook-thinking"')
        assert md.html == render_markdown(text)


def test_unfinished_thinking_and_no_thinking() -> None:
    md, _ = stream("<think>still going")
    assert md.thinking is not None and not md.thinking_done and md.stable_blocks == [] and md.tail_html == ""
    md.finish()
    assert md.html == render_markdown("<think>still going") and "still going" in md.html
    md2, _ = stream("Hello <think>not reasoning</think>")
    assert md2.thinking is None
    assert split_thinking("<thin") == (None, "<thin", False)


def test_is_safe_url() -> None:
    assert is_safe_url("HTTPS://x") and is_safe_url("mailto:a@b") and not is_safe_url(" javascript:x")


# The worst feed time of these two inputs is measured by ``python -m app.bench feeds`` (budget 100 ms, compared
# with a one-shot render in the same run); here what they give, and that the fast paths parse only the new
# lines (the size of every parsed source is recorded).

def _spy_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the size of every source the incremental renderer parses (a tick's cost follows it)."""
    import app.core.render.markdown.incremental as inc
    import app.core.render.markdown.parser as parser_mod  # the fast paths parse through its ParseMemo

    sizes: list[int] = []
    for mod in (inc, parser_mod):
        orig = mod.parse
        monkeypatch.setattr(mod, "parse", lambda src, env, orig=orig: (sizes.append(len(src)), orig(src, env))[1])
    return sizes


def test_long_table_streamed_one_char_at_a_time_equals_one_shot(corpus_dir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    text = (corpus_dir / "answers" / "03_long_table.md").read_text(encoding="utf-8")
    sizes = _spy_parses(monkeypatch)
    md = IncrementalMarkdown()
    for ch in text:
        md.feed(ch)
        md.render()
    assert len(sizes) > 1000 and sum(1 for n in sizes if n > len(text) // 4) <= 2   # rows parsed alone, not the table
    md.finish()
    assert md.html == render_markdown(text)


def test_200kb_line_in_a_fence_streamed_equals_one_shot(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "Here:\n\n```python\nx = '" + "ab" * 100_000 + "'\n```\n\nafter\n"
    sizes = _spy_parses(monkeypatch)
    md = IncrementalMarkdown()
    for i in range(0, len(text), 64):
        md.feed(text[i : i + 64])
        md.render()
    assert len(sizes) <= 4                       # the open fence is never re-parsed while its line grows
    md.finish()
    assert md.html == render_markdown(text)


@pytest.mark.parametrize("text", [
    "".join("  " * i + f"- item {i}\n" for i in range(40)) + "\nAfter the list.\n",
    "".join(">" * i + f" quote {i}\n" for i in range(1, 80)) + "\nAfter the quotes.\n",
    "".join("  " * i + f"{i}. step {i}\n" for i in range(25)) + "Tail paragraph.\n",
])
def test_deep_nesting_keeps_every_word(text: str) -> None:
    out = render_markdown(text)
    plain = re.sub(r"<[^>]+>", "", out)
    words = re.findall(r"(?:item|quote|step) \d+|After the \w+\.|Tail paragraph\.", text)
    assert words and all(w in plain for w in words)
    md = IncrementalMarkdown()
    for i in range(0, len(text), 7):
        md.feed(text[i:i + 7])
    md.finish()
    assert md.html == out


def test_a_huge_single_line_in_a_fence_is_cut_into_bounded_pieces() -> None:
    from app.core.render.markdown import CODE_PIECE_CHARS

    line = "abcdefghi&" * 20_000                      # 200 KB, with entities to cut around
    text = f"```text\n{line}\n```\nAfter.\n"
    out = render_markdown(text)
    pieces = out.split(PIECE)
    code_pieces = [p.split("</pre>")[0] for p in pieces if p.startswith("<pre")]
    assert len(code_pieces) > 50
    assert all(len(re.sub(r"<[^>]+>", "", p)) <= CODE_PIECE_CHARS * 1.2 for p in code_pieces)
    shown = "".join(re.sub(r"<[^>]+>", "", p) for p in code_pieces).replace("\n", "")
    assert shown.replace("&amp;", "&") == line            # every character shown, no entity cut in two
    md = IncrementalMarkdown()
    for i in range(0, len(text), 4096):
        md.feed(text[i:i + 4096])
        md.render()
    assert md.code_blocks[0] == line + "\n"               # Copy gives the real line
    md.finish()
    assert md.html == out


@pytest.mark.parametrize("step", [1, 7, 64, 300])
def test_long_table_streams_by_rendering_only_its_last_groups(step: int) -> None:
    text = ("| # | name | value |\n|---:|:---|---|\n" + "".join(f"| {i} | row *{i}* | `v{i}` |\n" for i in range(300))
            + "\nAfter the table.\n")
    per_render: list[int] = []
    md = IncrementalMarkdown()
    for i in range(0, len(text), step):
        md.feed(text[i:i + step])
        before = md.rows_rendered
        md.render()
        if not md.stable_blocks:                     # the table is still open (once closed it is rendered whole)
            per_render.append(md.rows_rendered - before)
    md.finish()
    assert md.html == render_markdown(text)
    assert sum(per_render) >= 290                    # (nearly) every row was rendered while open ...
    # ... but a render costs the rows it can change, never the whole table (300 rows)
    assert max(per_render) <= max(2 * TABLE_GROUP_ROWS, TABLE_WIDTH_ROWS) + step // 10 + 2


def test_big_tail_throttle_uses_the_injected_clock() -> None:
    now = [0.0]
    md = IncrementalMarkdown(clock=lambda: now[0])
    md.feed("word " * 500)                     # one 2,500-character paragraph: a big open tail
    assert md.render() is True
    md.feed("more ")
    assert md.render() is False                # grew by < 20 % and no time passed: not re-parsed yet
    assert "more" not in md.tail_html
    now[0] += 1.0
    assert md.render() is True and "more" in md.tail_html



def test_big_tail_throttle_counts_the_charged_showing_cost() -> None:
    """What the caller charges for showing a re-parsed tail (a view's insert) stretches the throttle's wait."""
    now = [0.0]
    md = IncrementalMarkdown(clock=lambda: now[0])
    md.feed("word " * 500)
    assert md.render() is True
    assert md.charge(0.5) is True              # the view took 0.5 s to show that tail
    assert md.charge(0.5) is False             # once per re-parse
    md.feed("more ")
    now[0] += 1.0                              # past BIG_TAIL_MIN_S, not past 4 × (0 + 0.5 s)
    assert md.render() is False and "more" not in md.tail_html
    now[0] += 1.5
    assert md.render() is True and "more" in md.tail_html
    md.feed("x")
    assert md.render() is False and md.charge(0.1) is False   # a render that did not re-parse takes no charge
    with pytest.raises(ValueError, match="finite duration"):
        md.charge(-1.0)


def test_the_end_of_a_throttled_tail_is_reckoned_from_its_last_parse_and_showing() -> None:
    """A big tail's renders are throttled (they cost nothing), its end parses it whole: ``end_cost_s`` reckons that
    end from the last parse and what showing it was charged, in proportion to the tail's characters now. A tail a
    fast path holds (an open fence) and a finished reply reckon nothing."""
    now = [0.0]
    md = IncrementalMarkdown(clock=lambda: now[0])
    md.feed("word " * 500)                     # 2,500 characters, parsed (on this clock: in no time) …
    assert md.render() is True
    assert md.end_cost_s == 0.0
    md.charge(0.004)                           # … and shown in 4 ms
    assert md.end_cost_s == pytest.approx(0.004)
    md.feed("word " * 500)                     # twice the tail, not parsed yet
    assert md.end_cost_s == pytest.approx(0.008)
    md.finish()
    assert md.end_cost_s == 0.0
    fence = IncrementalMarkdown(clock=lambda: now[0])
    fence.feed("```python\n" + "x = 1\n" * 500)
    fence.render()
    fence.charge(0.004)
    assert fence.end_cost_s == 0.0


HAIKU = "An old silent pond\nA frog jumps into the pond—\nSplash! Silence again.\n"


def test_single_line_breaks_are_kept() -> None:
    out = render_markdown(f"Here is a haiku:\n\n{HAIKU}")
    assert out.count("<br") == 2 and "An old silent pond<br" in out
    md, _ = stream(f"Here is a haiku:\n\n{HAIKU}", 3)
    md.finish()
    assert md.html == out


def test_a_reply_that_only_closes_its_reasoning() -> None:
    """The chat template pre-filled "<think>" (Qwen3, R1 distills): the reply only has "</think>"."""
    text = "The user wants a greeting.\nKeep it short.\n</think>\n\nHello **there**.\n"
    for size in (1, 3, 8):
        md, _ = stream(text, size)
        md.finish()
        assert md.thinking is not None and md.thinking_done
        assert "short" in md.thinking.html and "&lt;/think&gt;" not in md.html and "short" not in md.stable_blocks[0]
        assert md.html == render_markdown(text)
    assert split_thinking("a <think>b</think> c") == (None, "a <think>b</think> c", False)  # tags mid-text


def test_an_unclosed_reasoning_section_is_the_answer_at_the_end() -> None:
    text = "<think>\nI will just answer: **42**.\n"
    md, _ = stream(text, 2)
    assert md.thinking is not None and not md.thinking_done   # while streaming: reasoning
    md.finish()
    assert md.thinking is None and "<strong>42</strong>" in md.stable_blocks[0]
    assert md.html == render_markdown(text) and "brook-thinking" not in md.html


def test_reasoning_opened_by_the_template() -> None:
    from app.core.render.markdown import prompt_opens_reasoning

    assert prompt_opens_reasoning("<|im_start|>assistant\n<think>\n") and not prompt_opens_reasoning("assistant\n")
    md = IncrementalMarkdown(reasoning_open=True)
    for ch in "plan *A*\n</think>\n\nDone.":
        md.feed(ch)
        md.render()
    md.finish()
    assert md.thinking is not None and md.thinking_done and "<em>A</em>" in md.thinking.html
    assert md.text.startswith("<think>") and md.html == render_markdown(md.text)
    assert md.html == render_markdown("plan *A*\n</think>\n\nDone.", reasoning_open=True)


def test_reasoning_content_apart_from_the_answer() -> None:
    md = IncrementalMarkdown()
    md.feed_reasoning("weigh ")
    md.feed_reasoning("*options*")
    md.render()
    assert md.thinking is not None and not md.thinking_done
    md.feed("The answer.")
    md.finish()
    assert md.thinking_done and "<em>options</em>" in md.thinking.html and "The answer." in md.stable_blocks[0]
    assert md.text == "<think>weigh *options*</think>The answer." and md.html == render_markdown(md.text)
    only = IncrementalMarkdown()
    only.feed_reasoning("all I said")
    only.finish()
    assert only.thinking is None and "all I said" in only.html and only.html == render_markdown(only.text)
