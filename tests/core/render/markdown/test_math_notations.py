"""Math as models write it: ``\\( … \\)``, ``\\[ … \\]``, ``$$…$$`` mid-sentence, non-Latin ``\\text{…}``, and the
dollar amounts and escapes that must stay text — one-shot and streamed at any chunking."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import IncrementalMarkdown, render_markdown
from app.core.render.markdown.parser import normalize, parse
from app.core.render.math_render import MathCache, render_formula

FONT = (15.0, 14.0, 3.5, 8.0)
_MORE = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def _math(text: str) -> list[tuple[str, str]]:
    """(token type, TeX) of every formula of ``text``, in order."""
    out = []
    for tok in parse(normalize(text), {}):
        if tok.type == "math_block":
            out.append(("block", tok.content))
        for child in tok.children or []:
            if child.type.startswith("math_inline"):
                out.append(("inline", child.content))
    return out


def _titles(html: str) -> list[str]:
    """The TeX of each formula drawn as an image (its title)."""
    return re.findall(r'<img src="brook-math:[^"]+" width="\d+" height="\d+" title="([^"]*)"', html)


def _stream(text: str, size: int) -> IncrementalMarkdown:
    md = IncrementalMarkdown()
    for i in range(0, len(text), size):
        md.feed(text[i : i + size])
        md.render()
    md.finish()
    return md


@pytest.mark.parametrize(("text", "formulas"), [
    (r"where \(\theta\) is the angle", [("inline", r"\theta")]),
    (r"so \(x^2 + y^2 = r^2\) and \(n\) too", [("inline", r"x^2 + y^2 = r^2"), ("inline", "n")]),
    ("Inline across a line break \\(a +\nb\\) still counts", [("inline", "a +\nb")]),
    (r"- a list item with \(\alpha_i\)", [("inline", r"\alpha_i")]),
    (r"> quoted \(\beta\)", [("inline", r"\beta")]),
    ("| a | b |\n|---|---|\n| \\(x_1\\) | 2 |\n", [("inline", "x_1")]),
    (r"On one line: \[ E = mc^2 \] inside a sentence", [("inline", "E = mc^2")]),
    ("\\[\nx = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}\n\\]\n",
     [("block", r"x = \frac{-b \pm \sqrt{b^2-4ac}}{2a}")]),
    ("The formula is:\n\\[\n\\sum_{k=1}^n k\n\\]\nso it holds.\n", [("block", r"\sum_{k=1}^n k")]),
    ("\\[ \\int_0^1 f \\]\n", [("block", r"\int_0^1 f")]),
    ("1. Step one:\n   \\[\n   a^2\n   \\]\n", [("block", "a^2")]),
    (r"text $$\int_0^1 x\,dx$$ more", [("inline", r"\int_0^1 x\,dx")]),
    ("$$\na + b\n$$\n", [("block", "\na + b\n")]),
])
def test_bracket_and_inline_display_math_are_formulas(text: str, formulas: list[tuple[str, str]]) -> None:
    assert _math(text) == formulas


@pytest.mark.parametrize(("text", "shown"), [
    (r"see \[1\] and \[sic\]", "see [1] and [sic]"),                      # escaped brackets, no TeX in them
    (r"\[not a link](/foo)", "[not a link](/foo)"),
    (r"empty \(\) stays", "empty () stays"),
    ("`\\(x\\)` is code", "\\(x\\)"),
    ("```\n\\[ \\alpha \\]\n```\n", "\\[ \\alpha \\]"),
    ("    \\(indented code\\)\n", "\\(indented code\\)"),
    (r"a backslash pair \\(x\\) is text", r"\(x\)"),
    ("Revenue grew from $2bn to $4bn; a coffee costs R$ 12,29 or **$1.50**.",
     "Revenue grew from $2bn to $4bn; a coffee costs R$ 12,29 or <strong>$1.50</strong>."),
    ("Prices like $5 and $10 are not math.", "Prices like $5 and $10 are not math."),
    ("It costs $3.99, or $12 with shipping $ now.", "It costs $3.99, or $12 with shipping $ now."),
    ("From $1.5 million to $2 million.", "From $1.5 million to $2 million."),
])
def test_escapes_code_and_prices_stay_text(text: str, shown: str) -> None:
    assert _math(text) == []
    assert shown in render_markdown(text)


def test_dollar_math_next_to_prices_and_cjk_still_draws() -> None:
    text = "成本是 $x^2$ 元，而 $2x+1$ 也是公式。\n"
    assert _math(text) == [("inline", "x^2"), ("inline", "2x+1")]


@pytest.mark.parametrize("tex", [r"\text{速度} = \frac{d}{t}", r"\text{时间}", r"x \text{ 和 } y",
                                 r"\text{速度}^2", r"\mathrm{こんにちは}", r"\text{안녕}"])
@pytest.mark.parametrize("color", ["#000000", "#e6edf3"])
def test_text_mathtext_cannot_draw_is_no_image(tex: str, color: str) -> None:
    """mathtext's fonts have no CJK glyphs: it would draw empty boxes. No image: the TeX source is shown."""
    assert not render_formula(tex, False, color, FONT, 1.0).ok
    assert not render_formula(tex, True, color, FONT, 1.0).ok


@pytest.mark.parametrize("tex", [r"\text{speed} = v", r"\text{скорость} = v", r"\text{ταχύτητα}", "α + β"])
def test_latin_greek_and_cyrillic_text_is_drawn(tex: str) -> None:
    assert render_formula(tex, False, "#000000", FONT, 1.0).ok


def test_cjk_formula_shows_its_tex_and_others_are_images() -> None:
    text = "速度公式 \\(v = \\frac{d}{t}\\)，其中 \\(\\text{速度}\\) 以米每秒计。\n\n\\[\n\\text{时间} = t\n\\]\n"
    html = render_markdown(text, math=MathCache(FONT))
    assert _titles(html) == [r"v = \frac{d}{t}"]
    assert r"\text{速度}</span>" in html and r"\text{时间} = t</pre>" in html


_MIXED = [
    "Angle \\(\\theta\\) and \\(\\sin\\theta\\).\n",
    "The formula is:\n\\[\nx = \\frac{1}{2}\n\\]\n",
    "\\[ E = mc^2 \\]\n",
    "mid $$a^2$$ sentence and \\[ b_1 + c \\] too.\n",
    "see \\[1\\], `\\(x\\)` and $2bn to $4bn; R$ 12,29.\n",
    "```\n\\[ \\alpha \\]\n```\n",
    "# Heading \\(h\\)\n",
    "- item \\(i\\)\n- item\n",
    "\\[\n\\int f\n\n",
    "| a | \\(b\\) |\n|---|---|\n| \\(c\\) | d |\n",
    "> \\[ q^2 \\]\n",
    "\n",
    "\\(\\text{速度}\\)\n",
]


@_MORE
@given(parts=st.lists(st.sampled_from(_MIXED), min_size=1, max_size=10),
       sizes=st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=8))
def test_streamed_equals_one_shot_at_any_chunking(parts: list[str], sizes: list[int]) -> None:
    text = "".join(parts)
    md = IncrementalMarkdown()
    i = n = 0
    while i < len(text):
        md.feed(text[i : i + sizes[n % len(sizes)]])
        md.render()
        i += sizes[n % len(sizes)]
        n += 1
    md.finish()
    assert md.html == render_markdown(text)


def test_an_open_bracket_block_streams_as_tex() -> None:
    md = IncrementalMarkdown()
    md.feed("Before.\n\n\\[\nx_1 = \\frac{a}{b}\n")
    md.render()
    assert "x_1 = \\frac{a}{b}</pre>" in md.tail_html     # the TeX as written, not markdown eating it
    md.feed("\\]\n")
    md.finish()
    assert md.html == render_markdown(md.text) and _math(md.text) == [("block", "x_1 = \\frac{a}{b}")]


@pytest.mark.parametrize("size", [1, 3, 7])
def test_formulas_are_images_streamed_and_one_shot(size: int) -> None:
    text = ("Angle \\(\\theta\\), sentence $$\\int_0^1 x\\,dx$$ and\n\\[\n\\frac{a}{b}\n\\]\n"
            "On one line \\[ E = mc^2 \\] too.\n")
    cache = MathCache(FONT)
    once = render_markdown(text, math=cache)
    assert _titles(once) == [r"\theta", r"\int_0^1 x\,dx", r"\frac{a}{b}", "E = mc^2"]
    md = IncrementalMarkdown(math=cache)
    for i in range(0, len(text), size):
        md.feed(text[i : i + size])
        md.render()
    md.finish()
    assert md.html == once
