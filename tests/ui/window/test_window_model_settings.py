"""Settings of this model, through the window: the prompt preview of the GGUF's template, a broken override
explained with ChatML offered, and what is saved applied (sampling defaults under the chat's own, the template
and context window when the model is opened again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.history.store import Store
from app.core.model_settings import ModelSettingsStore
from app.engine.chat_prompt import CHATML_TEMPLATE
from app.engine.open import EngineSpec, open_engine
from app.ui.dialogs.model_settings import ModelSettingsDialog
from app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.timeout(120)


def test_model_settings_preview_explain_and_apply(qtbot, qloop, monkeypatch, bundled_model: Path,
                                                  tmp_path: Path) -> None:
    w = MainWindow(open_engine(EngineSpec(model_path=bundled_model, n_ctx=512)), store=Store(tmp_path / "h.db"))
    qtbot.addWidget(w)
    loads: list[str] = []
    monkeypatch.setattr(w.models, "load_model", lambda path: loads.append(path))
    seen: dict[str, object] = {}

    def edit(dlg: ModelSettingsDialog) -> int:
        seen["preview"] = dlg.preview.toPlainText()
        dlg.template.setPlainText("{% for m in messages %}{{ m.content }")      # broken
        seen["ok"] = dlg.refresh_preview()
        seen["problem"] = dlg.problem.text()
        dlg.use_chatml.click()
        seen["fixed"] = dlg.refresh_preview()
        dlg.n_ctx.setValue(2048)
        dlg.use_sampling.setChecked(True)
        dlg.sampling.temperature.setValue(0.15)
        return 1
    monkeypatch.setattr(ModelSettingsDialog, "exec", edit)
    try:
        assert w.models.edit_model_settings()
    finally:
        qloop.run_until_complete(w.shutdown())
    assert "<|im_start|>user\nWhat is the capital of France?" in str(seen["preview"])     # the GGUF's own
    assert seen["ok"] is False and "does not render" in str(seen["problem"]) and "ChatML" in str(seen["problem"])
    assert seen["fixed"] is True
    own = ModelSettingsStore().get(bundled_model)
    assert (own.n_ctx, own.chat_template, own.sampling) == (2048, CHATML_TEMPLATE, {"temperature": 0.15})
    assert loads == [str(bundled_model)]                      # opened again to apply the context window
    assert w.session.model_settings() == own
    conv = w.session.conversation
    from app.core.chat.session_ops import reply_params

    assert reply_params(w.session).temperature == 0.15         # the model's default…
    conv.params = {"temperature": 0.9}
    assert reply_params(w.session).temperature == 0.9          # …under the chat's own
    again = open_engine(EngineSpec(model_path=bundled_model, n_ctx=512))
    assert (again.n_ctx, again.chat_template) == (2048, CHATML_TEMPLATE)
