"""``packaging/windows/brook.iss``: compiled by Inno Setup 6's ISCC, its setup installed and uninstalled, under wine.

A Windows bundle cannot be frozen on Linux (PyInstaller freezes for the OS it runs on), so the setup packs a
stand-in of the PyInstaller folder: a real Windows program as ``Brook.exe`` (wine's ``notepad.exe``) and an
``_internal`` tree with nested folders. What is tested is the script: ISCC accepts it with the defines
``build.py`` passes, the setup puts every file in place with a Start-menu entry and an uninstall entry naming the
version, and the uninstaller takes them all away but keeps the user's data folder (a silent uninstall never
deletes chats). Wine installs for all users only (``/ALLUSERS``; ``packaging/inno.py`` says why). Needs ``wine``
with ``wine32`` (ISCC is 32-bit), ``xvfb-run`` (the setup's windows, even when silent) and Inno Setup from npm
(installed once into the build cache); skipped with the reason where one is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))
import inno  # noqa: E402  (packaging/ is no package: its modules are scripts)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(sys.platform == "win32", reason="runs the setup under wine (a Windows CI job "
                                 "builds the real setup with build.py)")]

VERSION = "9.8.7"
APP_ID = "{7B4275A8-7A66-468F-AF62-80CF0577FCBC}_is1"
UNINSTALL_KEY = rf"HKLM\Software\Microsoft\Windows\CurrentVersion\Uninstall\{APP_ID}"
WINE_TIMEOUT_S = 600


class Wine:
    """A fresh wine prefix under ``tmp``; ``run`` runs a Windows program in it (under Xvfb) and waits for the
    prefix's processes to end (an uninstaller hands over to a copy of itself in the temp folder)."""

    def __init__(self, tmp: Path) -> None:
        self.prefix = tmp / "wineprefix"
        self.env = {**os.environ, "WINEPREFIX": str(self.prefix), "WINEDEBUG": "-all", "WINEDLLOVERRIDES":
                    "mscoree,mshtml="}       # no Mono / Gecko install prompt
        self.drive_c = self.prefix / "drive_c"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        script = 'wine "$@"; rc=$?; wineserver -w; exit $rc'
        return subprocess.run(["xvfb-run", "-a", "sh", "-c", script, "sh", *args], capture_output=True,
                              text=True, env=self.env, timeout=WINE_TIMEOUT_S)

    def reg_value(self, key: str, name: str) -> str | None:
        """A value of the registry's 64-bit view (where a 64-bit install mode writes; ``wine reg`` is 32-bit)."""
        proc = self.run("reg", "query", key, "/v", name, "/reg:64")
        for line in proc.stdout.splitlines():
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[0] == name:
                return parts[2].strip()
        return None


@pytest.fixture(scope="module")
def wine(tmp_path_factory: pytest.TempPathFactory) -> Wine:
    for tool, why in (("wine", "dpkg --add-architecture i386 && apt-get install wine wine32:i386 wine64"),
                      ("xvfb-run", "apt-get install xvfb")):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed ({why})")
    w = Wine(tmp_path_factory.mktemp("wine"))
    boot = w.run("wineboot", "-i")
    assert boot.returncode == 0, boot.stderr[-3000:]
    return w


@pytest.fixture(scope="module")
def iscc(wine: Wine) -> list[str]:
    cmd = inno.iscc_command(install=True)
    if cmd is None:
        pytest.skip(f"Inno Setup's ISCC.exe is not available (npm install {inno.INNOSETUP_NPM} failed or npm "
                    "is missing)")
    probe = subprocess.run([*cmd, "/?"], capture_output=True, text=True, env=wine.env, timeout=WINE_TIMEOUT_S)
    if "Inno Setup" not in probe.stdout:        # ISCC is a 32-bit program: wine64 alone cannot start it
        pytest.skip(f"wine cannot run the 32-bit ISCC.exe (Debian: dpkg --add-architecture i386 && apt-get "
                    f"install wine32:i386): {(probe.stdout + probe.stderr).strip()[-300:]}")
    return cmd


def stand_in_bundle(where: Path, wine: Wine) -> dict[str, bytes]:
    """A PyInstaller-shaped folder in ``where``; returns ``{relative path: content}`` of its files."""
    files = {"Brook.exe": (wine.drive_c / "windows" / "system32" / "notepad.exe").read_bytes(),
             "_internal/base_library.zip": os.urandom(4096),
             "_internal/models/SmolLM2-135M-Instruct-Q8_0.gguf": b"GGUF" + os.urandom(1024),
             "_internal/PySide6/plugins/platforms/qwindows.dll": os.urandom(2048),
             "_internal/app/translations/brook_ko.qm": os.urandom(512)}
    for rel, data in files.items():
        (where / rel).parent.mkdir(parents=True, exist_ok=True)
        (where / rel).write_bytes(data)
    return files


def test_setup_compiles_installs_and_uninstalls(wine: Wine, iscc: list[str], tmp_path: Path):
    from make_icons import make_icons

    bundle = tmp_path / "Brook"
    files = stand_in_bundle(bundle, wine)
    icons = tmp_path / "icons"
    make_icons(icons)
    setup = inno.compile_setup(iscc, bundle, icons / "brook.ico", tmp_path / "out", VERSION, env=wine.env)
    assert setup.stat().st_size > 100_000 and setup.read_bytes()[:2] == b"MZ"

    log = tmp_path / "install.log"
    proc = wine.run(str(setup), "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART", "/ALLUSERS",
                    f"/LOG={inno.windows_path(log)}")
    assert proc.returncode == 0, log.read_text("utf-8-sig", "replace")[-4000:] if log.exists() else proc.stderr
    app = wine.drive_c / "Program Files" / "Brook"
    for rel, data in files.items():
        assert (app / rel).read_bytes() == data, rel
    assert (app / "unins000.exe").is_file()
    start_menu = wine.drive_c / "ProgramData" / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Brook.lnk"
    assert start_menu.is_file()
    assert wine.reg_value(UNINSTALL_KEY, "DisplayVersion") == VERSION
    assert wine.reg_value(UNINSTALL_KEY, "DisplayIcon") == r"C:\Program Files\Brook\Brook.exe"

    user = next(p for p in (wine.drive_c / "users").iterdir() if p.name != "Public")    # the prefix's user
    data_dir = user / "AppData" / "Local" / "Brook"          # %LOCALAPPDATA%\Brook: chats, settings, logs
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "brook.sqlite3").write_bytes(b"the user's chats")
    ulog = tmp_path / "uninstall.log"
    proc = wine.run(r"C:\Program Files\Brook\unins000.exe", "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART",
                    f"/LOG={inno.windows_path(ulog)}")
    assert proc.returncode == 0, ulog.read_text("utf-8-sig", "replace")[-4000:] if ulog.exists() else proc.stderr
    assert not app.exists(), sorted(str(p.relative_to(app)) for p in app.rglob("*"))
    assert not start_menu.exists()
    assert wine.reg_value(UNINSTALL_KEY, "DisplayVersion") is None
    assert (data_dir / "brook.sqlite3").read_bytes() == b"the user's chats"
