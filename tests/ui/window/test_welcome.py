"""The welcome state names the model and sends an example prompt when clicked."""

from __future__ import annotations

from app.core.chat.session import ModelState
from app.ui.window.welcome import WelcomeView


def test_welcome_names_the_model_and_offers_examples(qtbot) -> None:
    w = WelcomeView()
    qtbot.addWidget(w)
    w.set_model("SmolLM2", ModelState.LOADING)
    assert "Loading SmolLM2" in w.model.text()
    w.set_model("SmolLM2")
    assert "SmolLM2" in w.model.text() and len({b.text() for b in w.examples}) == 3
    with qtbot.waitSignal(w.prompt_chosen) as sig:
        w.examples[1].click()
    assert sig.args == [w.examples[1].text()] and "palindrome" in sig.args[0]
