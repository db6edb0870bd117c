"""Settings survive any hand-edited settings.json: wrong shapes and values fall back to defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.settings import AppSettings
from app.core.types import GenerationParams


@pytest.mark.parametrize("content", [
    "not json at all", "[1, 2, 3]", '"a string"', "null",
    '{"generation": "x"}', '{"generation": {"stop": 5}}', '{"model_path": 12}', '{"n_ctx": "big"}',
    '{"generation": {"temperature": "hot"}}', '{"generation": {"seed": "abc"}}', '{"first_token_timeout_s": -1}',
    '{"n_ctx": 16}', '{"generation": {"max_tokens": 0}}', '{"recent_models": [1, 2]}', '{"n_ctx": true}',
])
def test_bad_settings_give_defaults_not_a_crash(tmp_path: Path, content: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content, "utf-8")
    s = AppSettings.load(path)
    assert s == AppSettings()


def test_good_values_are_kept_and_bad_ones_alone_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"n_ctx": 2048, "total_timeout_s": 60, "model_path": "/m.gguf",
                                "first_token_timeout_s": "soon", "unknown": 1,
                                "generation": {"temperature": 0, "seed": 7, "stop": ["###"], "top_p": 9}}))
    s = AppSettings.load(path)
    assert (s.n_ctx, s.total_timeout_s, s.model_path) == (2048, 60, "/m.gguf")
    assert s.first_token_timeout_s == AppSettings().first_token_timeout_s
    assert s.generation == GenerationParams(temperature=0, seed=7, stop=("###",))


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    s = AppSettings(n_ctx=1024, generation=GenerationParams(temperature=0.1, stop=("END",)), system_prompt="Be brief.")
    s.save(path)
    assert AppSettings.load(path) == s


def test_unusable_folders_do_not_stop_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.history.store import Store
    from app.core.settings import config_dir, data_dir

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("BROOK_CONFIG_DIR", str(blocker / "config"))
    monkeypatch.setenv("BROOK_DATA_DIR", str(blocker / "data"))
    assert AppSettings.load() == AppSettings()
    store = Store.open_or_recover(data_dir() / "history.sqlite3")
    assert store.problem
    with pytest.raises(OSError):
        AppSettings().save(config_dir() / "settings.json")   # saving reports it; the window logs it


@pytest.mark.parametrize("blocker", ["config folder is a file", "settings.json is a folder"])
def test_a_settings_file_that_cannot_be_written_is_an_explained_error(tmp_path: Path, blocker: str) -> None:
    """Issue 10, item 6: a read-only / unusable config folder gives a sentence for the window, not a traceback
    (simulated without permissions, which root ignores: a file where the folder should be, and a folder where
    the file should be)."""
    from app.core.errors import BrookError

    if blocker == "config folder is a file":
        (tmp_path / "config").write_text("not a folder")
        path = tmp_path / "config" / "settings.json"
    else:
        (tmp_path / "settings.json").mkdir()
        path = tmp_path / "settings.json"
    with pytest.raises(BrookError, match="Settings could not be saved") as info:
        AppSettings(n_ctx=2048).save(path)
    assert isinstance(info.value, OSError)           # callers that catch OSError keep working
    assert not (tmp_path / "settings.tmp").exists()
