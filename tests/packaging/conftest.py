"""Fixtures of the packaging tests: one build of the bundle, tarball and .deb per test session.

The build bundles the portable llama-cpp-python (``packaging/llama_build.py``) when it is cached
(``~/.cache/brook-build``, or ``BROOK_BUILD_CACHE``): CI on the shared machine has it warm. A cold cache does not
make the test run compile llama.cpp (10-40 min): the bundle is then built with ``--allow-native`` (the installed
llama-cpp-python) and the tests that need the portable build skip, unless ``BROOK_PACKAGING_COMPILE=1`` asks
for the compile."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "packaging" / "build.py"
sys.path.insert(0, str(ROOT / "packaging"))
import llama_build  # noqa: E402  (packaging/ is no package: its modules are scripts)


def llama_mode() -> list[str]:
    """build.py's llama.cpp flags for this test session (see the module docstring)."""
    if os.environ.get("BROOK_PACKAGING_COMPILE") == "1":
        return []
    try:
        llama_build.portable_site(compile_missing=False)
    except SystemExit:
        return ["--allow-native"]
    return ["--no-compile"]
#: Generous limits for a shared 2-core machine (conditions, not timing checks).
BUILD_TIMEOUT_S = 1500
RUN_TIMEOUT_S = 600


class FrozenRunner:
    """Runs a frozen Brook offscreen with its data and config folders under ``tmp``."""

    timeout_s = RUN_TIMEOUT_S

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.log_file = tmp / "data" / "logs" / "brook.log"
        self.env = dict(os.environ)
        self.env.update(QT_QPA_PLATFORM="offscreen", BROOK_DATA_DIR=str(tmp / "data"),
                        BROOK_CONFIG_DIR=str(tmp / "config"), XDG_CACHE_HOME=str(tmp / "cache"))
        self.env.pop("BROOK_ERROR_DIALOGS", None)

    def smoke(self, executable: Path, *extra: str) -> dict:
        """``executable --smoke-test *extra``; returns its JSON line (fails the test with the output otherwise)."""
        proc = subprocess.run([str(executable), "--smoke-test", *extra], capture_output=True, text=True,
                              env=self.env, timeout=self.timeout_s, cwd=self.tmp)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        assert proc.returncode == 0 and lines, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        # worker processes (the highlighter's) re-run the executable: they must not reach Brook's argument parser
        assert "unrecognized arguments" not in proc.stderr, proc.stderr[-3000:]
        return json.loads(lines[-1])


@pytest.fixture
def frozen(tmp_path: Path) -> FrozenRunner:
    return FrozenRunner(tmp_path)


@pytest.fixture(scope="session")
def build(tmp_path_factory: pytest.TempPathFactory):
    """Runs ``python3 packaging/build.py`` once into a temporary folder; yields its JSON summary (paths of the
    bundle, executable, tar.gz and .deb). Removed at the end of the session (~700 MB)."""
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        pytest.skip('PyInstaller is not installed: python3 -m pip install -e ".[test]" installs it')
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed (the .deb is built on Debian-based systems only)")
    base = tmp_path_factory.mktemp("packaging")
    proc = subprocess.run([sys.executable, str(BUILD_SCRIPT), "--dist", str(base / "dist"), "--work",
                           str(base / "work"), *llama_mode()], cwd=ROOT, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT_S)
    assert proc.returncode == 0, f"build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    summary["base"] = str(base)
    yield summary
    shutil.rmtree(base, ignore_errors=True)


#: Mesa's software Vulkan device (``mesa-vulkan-drivers``): a GPU stand-in on a machine without one.
LAVAPIPE_ICD = Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")


@pytest.fixture(scope="session")
def vulkan_build(tmp_path_factory: pytest.TempPathFactory):
    """The bundle alone (no installers) built with ``BROOK_LLAMA_GPU=vulkan`` from the cached Vulkan build; skips
    when that build is not cached or lavapipe is not installed. Yields build.py's summary, with ``lavapipe_env``:
    the variables that make ggml use lavapipe (a CPU-type Vulkan device, which it skips unless named)."""
    if not LAVAPIPE_ICD.is_file():
        pytest.skip("lavapipe is not installed (apt-get install mesa-vulkan-drivers)")
    try:
        llama_build.portable_site(compile_missing=False, args=llama_build.cmake_args("vulkan"))
    except SystemExit as exc:
        pytest.skip(f"no cached Vulkan build (packaging/README.md: BROOK_LLAMA_GPU=vulkan): {exc}")
    base = tmp_path_factory.mktemp("packaging-vulkan")
    env = {**os.environ, "BROOK_LLAMA_GPU": "vulkan"}
    proc = subprocess.run([sys.executable, str(BUILD_SCRIPT), "--dist", str(base / "dist"), "--work",
                           str(base / "work"), "--no-compile", "--no-installers"], cwd=ROOT, capture_output=True,
                          text=True, timeout=BUILD_TIMEOUT_S, env=env)
    assert proc.returncode == 0, f"build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    summary["lavapipe_env"] = {"VK_ICD_FILENAMES": str(LAVAPIPE_ICD), "GGML_VK_VISIBLE_DEVICES": "0"}
    yield summary
    shutil.rmtree(base, ignore_errors=True)
