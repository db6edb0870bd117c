"""What the real window shows for the notations models write: a reply streamed through the window (scripted
engine) and the same text opened one-shot show the same text and images, with formulas drawn and reasoning folded.
"""

from __future__ import annotations

import pytest

from app.core.conversation import MessageStatus
from app.core.render.math_render import MATH_SCHEME
from app.engine.scripted import ScriptedEngine
from app.ui.messages.markdown_view import MarkdownView
from app.ui.window.main_window import MainWindow
from tests.helpers import run_on as _run
from tests.helpers import until as _until


@pytest.fixture
def make_window(qtbot, qloop):
    made: list[MainWindow] = []

    def make(engine: ScriptedEngine) -> MainWindow:
        w = MainWindow(engine)
        qtbot.addWidget(w)
        w.resize(900, 700)
        w.show()
        assert _run(qloop, w.load_model())
        made.append(w)
        return w

    yield make
    for w in made:
        qloop.run_until_complete(w.shutdown())


def formulas(view: MarkdownView) -> list[str]:
    """The TeX (tooltip) of every formula image in the view's document, in order."""
    out = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            it += 1
            if fmt.isImageFormat() and fmt.toImageFormat().name().startswith(MATH_SCHEME):
                out.append(fmt.toolTip())
        block = block.next()
    return out


def settle(qtbot, view: MarkdownView) -> None:
    def done() -> bool:
        view.refresh()
        return not view.renderer.highlights_pending
    qtbot.waitUntil(done, timeout=120_000)


def streamed(make_window, qtbot, qloop, text: str, chunk: int = 3, fmt: str = "think") -> MarkdownView:
    """The reply view after ``text`` streamed through the window in pieces of ``chunk`` characters by a model
    whose reasoning format is ``fmt``."""
    script = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    w = make_window(ScriptedEngine(script, tokens_per_s=0, reasoning_format=fmt))
    reply = w.send("go")
    _run(qloop, _until(lambda: reply.status.final))
    assert reply.status is MessageStatus.DONE and reply.text == text
    widget = w.chat.widget_for(reply)
    assert widget is not None and widget.view is not None
    settle(qtbot, widget.view)
    return widget.view


def one_shot(qtbot, text: str) -> MarkdownView:
    v = MarkdownView()
    qtbot.addWidget(v)
    v.resize(800, 400)
    v.set_text(text)
    settle(qtbot, v)
    return v


MATH_REPLY = (
    "The angle \\(\\theta\\) satisfies \\(\\sin^2\\theta+\\cos^2\\theta=1\\); mid-sentence "
    "$$\\int_0^1 x\\,dx = \\frac{1}{2}$$ too.\n\nThe quadratic formula is:\n\\[\n"
    "x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}\n\\]\n\nOn one line \\[ E = mc^2 \\] as well.\n\n"
    "速度公式 \\(v=\\frac{d}{t}\\)，其中 \\(\\text{速度}\\) 以米每秒计。\n\n"
    "Not math: \\[1\\], `\\(x\\)`, $2bn to $4bn; R$ 12,29 and **$1.50**.\n"
)


def test_bracket_math_is_drawn_on_screen_streamed_and_one_shot(make_window, qtbot, qloop) -> None:
    for view in (streamed(make_window, qtbot, qloop, MATH_REPLY), one_shot(qtbot, MATH_REPLY)):
        assert formulas(view) == ["\\theta", "\\sin^2\\theta+\\cos^2\\theta=1", "\\int_0^1 x\\,dx = \\frac{1}{2}",
                                  "x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}", "E = mc^2", "v=\\frac{d}{t}"]
        shown = view.toPlainText()
        assert "(\\theta)" not in shown and "$" not in shown.split("Not math")[0]
        assert "\\text{速度}" in shown                       # no glyphs in mathtext's fonts: its TeX, no boxes
        assert "Not math: [1], \\(x\\), $2bn to $4bn; R$ 12,29 and $1.50." in shown


REASONING = [
    # (format the scripted model writes, its raw output, reasoning words, answer words)
    ("mistral", "[THINK]The user asks 2+2; that is 4.[/THINK]The answer is **4**.", "that is 4", "The answer is 4."),
    ("harmony", "<|channel|>analysis<|message|>Greet back politely.<|end|><|start|>assistant<|channel|>final"
                "<|message|>Hello! How can I help?", "Greet back politely", "Hello! How can I help?"),
    ("harmony", "analysisCompute 3*3 = 9.assistantfinal3 × 3 is 9.", "Compute 3*3", "3 × 3 is 9."),
    ("think", "<think>First idea.</think>Part one.\n\n<think>\nSecond look: fine.\n</think>\n\nPart two.",
     "Second look: fine.", "Part two."),
]


@pytest.mark.parametrize(("fmt", "raw", "thought", "answer"), REASONING)
def test_every_reasoning_format_folds_in_the_window(make_window, qtbot, qloop, fmt: str, raw: str, thought: str,
                                                   answer: str) -> None:
    script = [raw[i : i + 3] for i in range(0, len(raw), 3)]
    w = make_window(ScriptedEngine(script, tokens_per_s=0, reasoning_format=fmt))
    reply = w.send("go")
    _run(qloop, _until(lambda: reply.status.final))
    assert reply.status is MessageStatus.DONE
    assert "<think>" in reply.text and thought in reply.text            # the stored reply keeps the reasoning
    for marker in ("[THINK]", "[/THINK]", "<|channel|>", "<|message|>", "assistantfinal"):
        assert marker not in reply.text
    widget = w.chat.widget_for(reply)
    assert widget is not None and widget.view is not None
    settle(qtbot, widget.view)
    for view in (widget.view, one_shot(qtbot, reply.text)):
        shown = view.toPlainText()
        assert "Thinking" in shown and answer in shown
        for marker in ("[THINK]", "<|channel|>", "assistantfinal", "<think>", "</think>"):
            assert marker not in shown
        assert thought not in shown                                      # folded once the answer is there
        if fmt != "think":
            view.toggle_thinking()
        else:                                                            # a later section, folded where it stands
            assert shown.index("Part one.") < shown.index("Thinking", shown.index("Part one.")) < \
                shown.index("Part two.")
            view.toggle_later_thinking()
        assert thought in view.toPlainText()                             # and there when unfolded


def test_a_reply_that_mentions_think_markers_in_code_stays_code(make_window, qtbot, qloop) -> None:
    raw = "Magistral writes `[THINK]` like this:\n\n```\n[THINK]reasoning[/THINK]answer\n```\n"
    view = streamed(make_window, qtbot, qloop, raw, fmt="mistral")        # a Magistral model, thinking not
    shown = view.toPlainText()
    assert "Thinking" not in shown and "[THINK]reasoning[/THINK]answer" in shown
