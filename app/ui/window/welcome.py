"""The welcome state of an empty chat: the model in use, three example prompts, the main shortcuts.

Clicking an example emits ``prompt_chosen(text)`` (the window sends it). Replaces the empty grey area a new chat
used to show.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.chat.session import ModelState


class WelcomeView(QWidget):
    prompt_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome")
        self.setStyleSheet("#welcomeTitle { font-size: 22px; font-weight: bold; }"
                           " #welcomeExample { padding: 8px 14px; }"
                           " #welcomeModel, #welcomeKeys { color: palette(mid); }")
        lay = QVBoxLayout(self)
        lay.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.setSpacing(10)
        self.title = QLabel()
        self.title.setObjectName("welcomeTitle")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.model = QLabel()
        self.model.setObjectName("welcomeModel")
        self.model.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.model.setWordWrap(True)
        lay.addWidget(self.title)
        lay.addWidget(self.model)
        self.examples: list[QPushButton] = []
        for _ in range(3):
            b = QPushButton()
            b.setObjectName("welcomeExample")
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            b.clicked.connect(lambda _c=False, btn=b: self.prompt_chosen.emit(btn.property("prompt")))
            lay.addWidget(b)
            self.examples.append(b)
        self.keys = QLabel()
        self.keys.setObjectName("welcomeKeys")
        self.keys.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.keys.setWordWrap(True)
        lay.addWidget(self.keys)
        self.set_model("")

    def set_model(self, name: str, state: ModelState = ModelState.IDLE) -> None:
        """Show ``name`` (and "Loading …" while ``state`` is ``LOADING``)."""
        self.title.setText(self.tr("Start a new chat"))
        if state is ModelState.LOADING:
            self.model.setText(self.tr("Loading %1…").replace("%1", name))
        elif name:
            self.model.setText(self.tr("Model: %1 · runs on this computer, nothing leaves it").replace("%1", name))
        else:
            self.model.setText("")
        prompts = [self.tr("Explain recursion to a 10-year-old, with an example."),
                   self.tr("Write a Python function that checks whether a string is a palindrome."),
                   self.tr("Give me three ideas for a weekend trip, as a table.")]
        for b, p in zip(self.examples, prompts, strict=True):
            b.setText(p)
            b.setProperty("prompt", p)
            b.setAccessibleName(self.tr("Example prompt: %1").replace("%1", p))
        self.keys.setText(self.tr("Enter sends · Shift+Enter new line · Esc stops · Ctrl+F searches all chats · "
                                  "F1 lists every shortcut"))
