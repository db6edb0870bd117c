"""Settings and chat-settings dialogs: every sampling field round-trips, presets fill the fields, defaults restore."""

from __future__ import annotations

from app.core.chat.presets import chat_params, preset
from app.core.conversation import Conversation
from app.core.settings import AppSettings
from app.core.types import GenerationParams
from app.ui.dialogs.chat_settings import ChatSettingsDialog
from app.ui.dialogs.settings import SettingsDialog


def test_settings_round_trip_every_field_and_restore_defaults(qtbot) -> None:
    s = AppSettings(generation=GenerationParams(temperature=0.3, top_k=7, min_p=0.2, repeat_penalty=1.2,
                                                max_tokens=99, seed=3, stop=("END", "###")),
                    n_threads=4, language="zh_CN", theme="dark", models_dir="/m", preset="Precise",
                    idle_unload_minutes=15.0, watchdog_threshold_ms=250.0)
    dlg = SettingsDialog(s)
    qtbot.addWidget(dlg)
    out = dlg.result_settings()
    assert out == s
    assert dlg.sampling.min_p.toolTip().startswith("Drop tokens less likely")
    assert dlg.watchdog.value() == 250 and "0 turns the watchdog off" in dlg.watchdog.toolTip()
    dlg.sampling.stop.setText(" a , ,b ")
    dlg.sampling.seed.setValue(-1)
    out = dlg.result_settings()
    assert out.generation.stop == ("a", "b") and out.generation.seed is None
    dlg.restore_defaults()
    assert dlg.result_settings() == AppSettings() and dlg.watchdog.value() == 100
    dlg.watchdog.setValue(0)
    assert dlg.watchdog.text() == "off" and dlg.result_settings().watchdog_threshold_ms == 0


def test_chat_settings_edit_the_chat_only(qtbot) -> None:
    conv = Conversation(title="poems", system_prompt="Rhyme.", preset="Balanced")
    dlg = ChatSettingsDialog(conv, GenerationParams())
    qtbot.addWidget(dlg)
    dlg.preset.setCurrentIndex(dlg.preset.findData("Creative"))
    dlg.preset.activated.emit(dlg.preset.currentIndex())
    assert dlg.sampling.params() == preset("Creative").params
    dlg.sampling.temperature.setValue(1.4)
    dlg.system_prompt.setPlainText("Rhyme in French.")
    dlg.apply()
    assert (conv.preset, conv.system_prompt, conv.params) == ("Creative", "Rhyme in French.", {"temperature": 1.4})
    assert chat_params(conv).temperature == 1.4 and chat_params(conv).top_k == preset("Creative").params.top_k


def test_context_window_shows_the_memory_it_needs(qtbot) -> None:
    from app.engine.library import ModelInfo

    info = ModelInfo("/m.gguf", "m.gguf", 100 * 2**20, n_layers=30, n_embd=576, n_head=9, n_head_kv=3)
    dlg = SettingsDialog(AppSettings(n_ctx=4096), model=info)
    qtbot.addWidget(dlg)
    assert dlg.memory.text() == "≈ 94 MB for this context (KV cache) + 105 MB of weights"   # decimal MB
    dlg.n_ctx.setValue(8192)
    assert dlg.memory.text().startswith("≈ 189 MB")


def test_the_watchdog_threshold_applies_to_the_running_watchdog(qtbot, qloop, monkeypatch) -> None:
    from app.core.streaming.watchdog import start_watchdog
    from app.engine.scripted import ScriptedEngine
    from app.ui.window.main_window import MainWindow

    w = MainWindow(ScriptedEngine())
    qtbot.addWidget(w)
    wd = w.watchdog = start_watchdog(100, qloop)
    assert wd is not None
    chosen = [400]

    def accept(dlg: SettingsDialog) -> int:
        dlg.watchdog.setValue(chosen[0])
        return 1

    monkeypatch.setattr(SettingsDialog, "exec", accept)
    try:
        w.edit_settings()
        assert w.watchdog is wd and wd.running and wd.threshold_ms == 400
        assert w.session.settings.watchdog_threshold_ms == 400 and w.inspector_dock.inspector.watchdog is wd
        chosen[0] = 0
        w.edit_settings()
        assert w.watchdog is None and not wd.running and w.inspector_dock.inspector.watchdog is None
    finally:
        wd.stop()
