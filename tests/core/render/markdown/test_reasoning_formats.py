"""Reasoning in every format: Magistral's ``[THINK]``, gpt-oss harmony channels (raw and detokenized), a second
``<think>`` later in the answer, reasoning a server sends after the answer started — folded, never dropped, the
same streamed and one-shot."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.render.markdown import IncrementalMarkdown, render_markdown, split_thinking
from app.core.render.markdown.thinking import (
    FORMAT_HARMONY,
    FORMAT_MISTRAL,
    FORMAT_THINK,
    ReasoningNormalizer,
    reasoning_format_of,
    token_text,
)

_MORE = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

#: (format, what the model writes, the reply's text in Brook's form)
MEMBERS = [
    (FORMAT_MISTRAL, "[THINK]The user wants 2+2. That is 4.[/THINK]The answer is **4**.",
     "<think>The user wants 2+2. That is 4.</think>The answer is **4**."),
    (FORMAT_MISTRAL, "\n[THINK]\nStep 1: read.\n\n```py\nx = 1\n```\n[/THINK]\n\nDone.",
     "<think>\nStep 1: read.\n\n```py\nx = 1\n```\n</think>\n\nDone."),
    (FORMAT_MISTRAL, "Plain answer that mentions `[THINK]` and [/THINK] in code.",
     "Plain answer that mentions `[THINK]` and [/THINK] in code."),
    (FORMAT_MISTRAL, "[THINK]ok[/THINK]Use `[THINK]` tags like:\n```\n[THINK]x[/THINK]\n```",
     "<think>ok</think>Use `[THINK]` tags like:\n```\n[THINK]x[/THINK]\n```"),
    (FORMAT_HARMONY,
     "<|channel|>analysis<|message|>User greets. Reply kindly.<|end|><|start|>assistant<|channel|>final"
     "<|message|>Hello! How can I help?<|return|>",
     "<think>User greets. Reply kindly.</think>Hello! How can I help?"),
    (FORMAT_HARMONY, "analysisWe need to compute 3*3 = 9.assistantfinal3 × 3 = **9**.",
     "<think>We need to compute 3*3 = 9.</think>3 × 3 = **9**."),
    (FORMAT_HARMONY, "<|channel|>final<|message|>Straight to the answer.", "Straight to the answer."),
    (FORMAT_HARMONY, "An answer about analysis paralysis.", "An answer about analysis paralysis."),
    (FORMAT_THINK, "[THINK]stays[/THINK] as written", "[THINK]stays[/THINK] as written"),
    (FORMAT_THINK, "<think>r</think>a", "<think>r</think>a"),
]


def _normalized(fmt: str, text: str, size: int) -> str:
    n = ReasoningNormalizer(fmt)
    return "".join(n.feed(text[i : i + size]) for i in range(0, len(text), size)) + n.finish()


@pytest.mark.parametrize(("fmt", "raw", "expected"), MEMBERS)
@pytest.mark.parametrize("size", [1, 2, 3, 5, 11, 1000])
def test_markers_become_think_tags_at_any_chunking(fmt: str, raw: str, expected: str, size: int) -> None:
    assert _normalized(fmt, raw, size) == expected


@pytest.mark.parametrize(("fmt", "raw", "expected"), MEMBERS)
def test_every_format_folds_into_the_thinking_section(fmt: str, raw: str, expected: str) -> None:
    thinking, answer, _done = split_thinking(expected)
    html = render_markdown(expected)
    if expected.lstrip().startswith("<think>"):                 # the model reasoned (its own markers)
        assert thinking is not None and 'class="brook-thinking"' in html
        assert not re.search(r"\[/?THINK\]|<\|channel\|>|assistantfinal", html.split("</div>")[0])
    else:
        assert thinking is None
    for marker in ("<|channel|>", "<|message|>", "<|end|>", "<|return|>"):
        assert marker not in answer


@pytest.mark.parametrize(("template", "specials", "fmt"), [
    ("{{ '[SYSTEM_PROMPT]First draft your thinking inside [THINK] and [/THINK]' }}", set(), FORMAT_MISTRAL),
    ("{{ bos_token }}{% for m in messages %}[INST]{{ m.content }}[/INST]{% endfor %}", {"[THINK]"}, FORMAT_MISTRAL),
    ("{{ '<|start|>assistant<|channel|>final<|message|>' }}", set(), FORMAT_HARMONY),
    ("{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}", set(), FORMAT_THINK),
    ("{{ '<think>' }}", set(), FORMAT_THINK),
])
def test_the_format_comes_from_the_template_and_the_vocabulary(template: str, specials: set[str],
                                                              fmt: str) -> None:
    assert reasoning_format_of(template, specials.__contains__) == fmt


MISTRAL_TOKENS = frozenset({"[THINK]", "[/THINK]"})
HARMONY_TOKENS = frozenset({"<|channel|>", "<|message|>", "<|end|>", "<|start|>"})


@pytest.mark.parametrize(("fmt", "tokens", "raw", "expected"), [
    (FORMAT_MISTRAL, MISTRAL_TOKENS, token_text("[THINK]") + "reason" + token_text("[/THINK]") + "Say [THINK].",
     "<think>reason</think>Say [THINK]."),
    (FORMAT_MISTRAL, MISTRAL_TOKENS, "[THINK] typed, not the token[/THINK] rest",
     "[THINK] typed, not the token[/THINK] rest"),
    (FORMAT_HARMONY, HARMONY_TOKENS, "".join([token_text("<|channel|>"), "analysis", token_text("<|message|>"), "plan",
                                              token_text("<|end|>"), token_text("<|start|>"), "assistant",
                                              token_text("<|channel|>"), "final", token_text("<|message|>"),
                                              "Hi, <|channel|> typed"]),
     "<think>plan</think>Hi, <|channel|> typed"),
    (FORMAT_HARMONY, HARMONY_TOKENS, "analysis is not the token assistantfinal",
     "analysis is not the token assistantfinal"),
    (FORMAT_HARMONY, HARMONY_TOKENS, "A" + token_text("<|start|>") + "B", "AB"),   # a stray control token: unseen
])
@pytest.mark.parametrize("size", [1, 2, 5, 1000])
def test_when_markers_are_special_tokens_only_the_tokens_count(fmt: str, tokens: frozenset[str], raw: str,
                                                               expected: str, size: int) -> None:
    n = ReasoningNormalizer(fmt, tokens)
    assert "".join(n.feed(raw[i : i + size]) for i in range(0, len(raw), size)) + n.finish() == expected


LATER = [
    "<think>first</think>Part one.\n\n<think>\nWait, check again: **2+2**.\n\n- yes\n</think>\n\nPart two.\n",
    "Answer.\n<think>\nsecond look\n</think>\nStill the answer.\n",
    "Answer.\n\n<think>thinking inline</think>Rest of the line.\n",
    "Answer.\n\n<think>\nnever closed, still shown\n",
]


@pytest.mark.parametrize("text", LATER)
@pytest.mark.parametrize("size", [1, 4, 9])
def test_a_later_think_block_folds_where_it_stands(text: str, size: int) -> None:
    once = render_markdown(text)
    md = IncrementalMarkdown()
    for i in range(0, len(text), size):
        md.feed(text[i : i + size])
        md.render()
    md.finish()
    assert md.html == once and md.text == text
    assert "&lt;think&gt;" not in once and "&lt;/think&gt;" not in once        # no raw tag shown
    sections = once.count('class="brook-thinking"')
    assert sections == text.count("<think>")
    later = once.split('class="brook-thinking"')[-1]
    body = text.rsplit("<think>", 1)[1].split("</think>")[0].strip().split("\n")[0].split(",")[0]
    assert body.replace("**", "") in re.sub("<[^>]+>", "", later)               # the reasoning is kept


def test_tags_in_code_stay_code() -> None:
    text = "Use it so:\n\n```html\n<think>\nnot reasoning\n</think>\n```\n\nAnd `<think>` inline.\n"
    html = render_markdown(text)
    assert 'class="brook-thinking"' not in html and "&lt;think&gt;" in html


def test_reasoning_after_the_answer_started_is_kept_and_folded() -> None:
    md = IncrementalMarkdown()
    md.feed_reasoning("Plan first.")
    md.feed("Answer part one.")
    md.render()
    md.feed_reasoning("Hmm, reconsider ")
    md.feed_reasoning("the sign.")
    md.render()
    md.feed(" Part two.")
    md.finish()
    assert "reconsider the sign." in md.text and "Plan first." in md.text
    assert md.html == render_markdown(md.text)
    assert md.html.count('class="brook-thinking"') == 2
    assert "Answer part one." in md.html and "Part two." in md.html


@_MORE
@given(pieces=st.lists(st.sampled_from(["Answer **a**.\n", "\n", "<think>\nagain\n\n- item\n</think>\n",
                                         "<think>inline</think>rest\n", "# H\n", "```\n<think>\n```\n",
                                         "| a |\n|---|\n| 1 |\n", "<think>\nopen\n", "text\n<think>\nx\n</think>\n",
                                         "\\[\nx\n\\]\n", "> q\n"]), min_size=1, max_size=8),
       sizes=st.lists(st.integers(min_value=1, max_value=10), min_size=1, max_size=6))
def test_streamed_equals_one_shot_with_later_think_blocks(pieces: list[str], sizes: list[int]) -> None:
    text = "<think>r</think>" + "".join(pieces)
    md = IncrementalMarkdown()
    i = n = 0
    while i < len(text):
        md.feed(text[i : i + sizes[n % len(sizes)]])
        md.render()
        i += sizes[n % len(sizes)]
        n += 1
    md.finish()
    assert md.html == render_markdown(text)
