"""app.core.render.preview: a reply's markdown as plain text without markup (the message list's first look)."""

from __future__ import annotations

import pytest

from app.core.render.preview import THINKING_LINE, plain_preview

SAMPLE = """# Title

Some **bold**, *em*, _under_, ~~gone~~, `code span`, a [link](https://example.org/a_(b)) and ![alt](x.png).
并且*必须*重新抛出

> quoted *line*
> > nested

- item one
- [ ] open task
- [x] done task
1. first

| a | b |
|:--|--:|
| one | two |

---

```python
x = a * b * c  # **kept**, code is code
```

$$
\\sigma(z)_i = e^{z_i}
$$
"""


def test_markup_characters_are_gone_and_words_stay() -> None:
    out = plain_preview(SAMPLE)
    lines = out.split("\n")
    assert lines[0] == "Title"
    assert "Some bold, em, under, gone, code span, a link and alt." in out
    assert "并且必须重新抛出" in out
    assert "quoted line" in out and "nested" in out and ">" not in out.replace("->", "")
    assert "• item one" in out and "☐ open task" in out and "☑ done task" in out and "1. first" in out
    assert "a   b" in out and "one   two" in out and "|" not in out and "---" not in out and ":--" not in out
    assert "```" not in out and "x = a * b * c  # **kept**, code is code" in out    # code is left alone
    assert "\\sigma(z)_i = e^{z_i}" in out and "$$" not in out                   # and so is math
    assert "#" not in out.replace("# **kept**", "")


def test_a_reasoning_section_is_folded_like_the_full_render() -> None:
    out = plain_preview("<think>\nweighing options *carefully*\n</think>\n\nThe **answer**.")
    assert out.split("\n")[0] == THINKING_LINE
    assert "weighing" not in out and out.endswith("The answer.")


@pytest.mark.parametrize("text", [
    "Part one.\n\n<think>\nsecond *look*\n</think>\n\nPart two.",
    "<think>first</think>Part one.\n<think>second look</think>Part two.",
    "Part one.\n\n<think>\nsecond look, never closed",
])
def test_a_later_reasoning_section_is_folded_where_it_stands(text: str) -> None:
    out = plain_preview(text)
    assert "second" not in out and "<think>" not in out and "</think>" not in out
    lines = out.split("\n")
    assert "Part one." in lines and lines[lines.index("Part one.") + 1 :].count(THINKING_LINE) >= 1
    if "closed" not in text:
        assert lines[-1] == "Part two."


def test_odd_input_never_raises() -> None:
    for text in ["", "*", "**", "`", "[", "](", "|", "```", "~~~\nopen fence", "<think>", "_a_b_", "$$"]:
        assert isinstance(plain_preview(text), str)
    assert plain_preview("") == ""


def test_the_tail_of_a_long_reply_is_previewed_from_a_line_start_and_code_stays_code() -> None:
    from app.core.render.preview import tail_preview

    prose = "".join(f"Line {k} with **bold** words.\n" for k in range(400))
    code = "```python\n" + "".join(f"x{k} = a * b  # **kept {k}**\n" for k in range(300))
    text = prose + code
    assert tail_preview(prose[:500], chars=600) == plain_preview(prose[:500])        # short: all of it
    out = tail_preview(text, chars=2000)
    assert out.startswith("…\n")
    lines = out.split("\n")[1:]
    assert lines[-1] == "x299 = a * b  # **kept 299**"                # inside the open code block: as written
    assert lines[0].startswith("x") and len(out) < 2200                # from a line start, about `chars` of it
    assert all("**" in line for line in lines)                          # no line lost its code's markup
    out = tail_preview(prose + "```\nclosed\n```\n" + prose, chars=2000)
    assert "**" not in out and out.endswith("Line 399 with bold words.")   # the block closed before the cut
    assert tail_preview("x" * 10_000, chars=100) == "…\n" + "x" * 100     # one line: cut inside it
