"""Build Brook's bundle and installers on the machine this runs on (the same command locally and in CI):

    python3 packaging/build.py [--dist DIR] [--work DIR] [--smoke-test] [--no-installers] [--no-compile]
                               [--allow-native]

0. finds, or compiles once and caches, a portable llama-cpp-python (``packaging/llama_build.py``: every CPU
   variant, picked at run time; ``~/.cache/brook-build``); ``--no-compile`` fails instead of compiling;
   ``--allow-native`` bundles the installed llama-cpp-python as it is (a local test bundle: it runs only on
   CPUs like this one; the summary's ``llama.portable`` is false);
1. renders the icons from ``app/resources/brook.svg`` (``packaging/make_icons.py``) into ``WORK/icons`` and
   compiles ``app/translations/*.ts`` to ``.qm`` (PySide6's lrelease) into ``WORK/translations``;
2. freezes the app with PyInstaller (``packaging/brook.spec``: one folder, windowed) into ``DIST/Brook``
   (``DIST/Brook.app`` on macOS), and refuses a bundle whose llama.cpp is a native build (no per-variant CPU
   modules) unless ``--allow-native``;
3. builds the installers of this OS into ``DIST``:
   - Linux: ``brook-<v>-linux-<machine>.tar.gz`` and ``brook_<v>_<arch>.deb`` (``packaging/linux.py``); no
     AppImage: appimagetool and the AppImage runtime come only from GitHub releases, not a package registry;
   - Windows: ``Brook-Setup-<v>.exe`` with Inno Setup's ``iscc`` (``packaging/windows/brook.iss``);
   - macOS: ``Brook-<v>-macos-<machine>.dmg`` with ``hdiutil`` (unsigned: see packaging/README.md);
4. with ``--smoke-test``: runs the frozen app's ``--smoke-test`` and checks the reply (chunks >= 20, a code block).

Prints one JSON object as its last line: the paths, sizes (bytes) and seconds of each step.
Defaults: DIST = ``dist``, WORK = ``build`` (both under the repository root, both git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

SMOKE_MIN_CHUNKS = 20
SMOKE_TIMEOUT_S = 900
#: ``hdiutil create`` fails now and then on hosted macOS runners ("Resource busy"): tries before giving up.
HDIUTIL_ATTEMPTS = 5


def project_version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])


def tree_size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (or of the file ``path``)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def frozen_executable(dist: Path) -> Path:
    """The frozen app's executable in ``dist`` for this OS."""
    if sys.platform == "darwin":
        return dist / "Brook.app" / "Contents" / "MacOS" / "Brook"
    return dist / "Brook" / ("Brook.exe" if sys.platform == "win32" else "Brook")


def compile_translations(out: Path) -> list[Path]:
    """``app/translations/*.ts`` → ``out/*.qm`` with PySide6's ``lrelease`` (the frozen app has no lrelease)."""
    sources = sorted((ROOT / "app" / "translations").glob("*.ts"))
    if not sources:
        return []
    import PySide6

    base = Path(PySide6.__file__).resolve().parent
    tool = next((c for c in (base / "lrelease", base / "lrelease.exe", base / "Qt" / "libexec" / "lrelease")
                 if c.is_file()), None)
    if tool is None:
        raise SystemExit("PySide6's lrelease was not found: the translations cannot be compiled")
    out.mkdir(parents=True, exist_ok=True)
    done = []
    for ts in sources:
        qm = out / ts.with_suffix(".qm").name
        subprocess.run([str(tool), "-silent", str(ts), "-qm", str(qm)], check=True)
        done.append(qm)
    return done


def freeze(dist: Path, work: Path, icons: Path, llama_site: Path | None = None) -> Path:
    """Run PyInstaller on ``packaging/brook.spec``; returns the bundle (``dist/Brook`` or ``dist/Brook.app``)."""
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        raise SystemExit('PyInstaller is not installed: python3 -m pip install -e ".[test]" (or pyinstaller)') from None
    env = {**os.environ, "BROOK_ICON_DIR": str(icons), "BROOK_QM_DIR": str(work / "translations")}
    env.pop("BROOK_LLAMA_SITE", None)
    if llama_site is not None:
        env["BROOK_LLAMA_SITE"] = str(llama_site)
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
           "--distpath", str(dist), "--workpath", str(work / "pyinstaller"), str(HERE / "brook.spec")]
    subprocess.run(cmd, check=True, cwd=ROOT, env=env)
    bundle = dist / ("Brook.app" if sys.platform == "darwin" else "Brook")
    for qm in bundle.rglob("*.qm"):          # newer than its .ts, so app.ui.look.i18n uses it as it is
        if qm.parent.name == "translations" and qm.parent.parent.name == "app":
            os.utime(qm)
    return bundle


def windows_installer(bundle: Path, icons: Path, dist: Path, version: str) -> Path:
    """``Brook-Setup-<version>.exe`` from ``packaging/windows/brook.iss`` with Inno Setup's ``iscc``
    (``packaging/inno.py``)."""
    import inno

    iscc = inno.iscc_command()
    if iscc is None:
        raise SystemExit("Inno Setup's iscc was not found (choco install innosetup)")
    try:
        return inno.compile_setup(iscc, bundle, icons / "brook.ico", dist, version)
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from None


def macos_dmg(app: Path, dist: Path, work: Path, version: str) -> Path:
    """``Brook-<version>-macos-<machine>.dmg``: the .app and a link to /Applications (``hdiutil``)."""
    stage = work / "dmg"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    subprocess.run(["ditto", str(app), str(stage / app.name)], check=True)
    (stage / "Applications").symlink_to("/Applications")
    out = dist / f"Brook-{version}-macos-{platform.machine()}.dmg"
    cmd = ["hdiutil", "create", "-volname", "Brook", "-srcfolder", str(stage), "-ov", "-format", "UDZO", str(out)]
    for attempt in range(1, HDIUTIL_ATTEMPTS + 1):      # "hdiutil: create failed - Resource busy" on CI runners
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode == 0:
            return out
        print(f"hdiutil create failed (attempt {attempt}/{HDIUTIL_ATTEMPTS}): {proc.stderr.strip()}",
              file=sys.stderr, flush=True)
        time.sleep(5 * attempt)
    raise SystemExit(f"hdiutil create failed {HDIUTIL_ATTEMPTS} times: {proc.stderr.strip()}")


def smoke_test(executable: Path, *extra: str) -> dict[str, Any]:
    """Run ``executable --smoke-test`` (offscreen where there is no display); returns its JSON line. Raises
    ``RuntimeError`` with the output when it fails or the reply is too short or has no code block."""
    env = dict(os.environ)
    if sys.platform.startswith("linux") and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        env["QT_QPA_PLATFORM"] = "offscreen"
    proc = subprocess.run([str(executable), "--smoke-test", *extra], capture_output=True, text=True, env=env,
                          timeout=SMOKE_TIMEOUT_S)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"smoke test failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    result: dict[str, Any] = json.loads(lines[-1])
    if not extra and (result["chunks"] < SMOKE_MIN_CHUNKS or result["code_blocks"] < 1):
        raise RuntimeError(f"smoke test reply too small: {result}")
    return result


def bundled_llama_lib(bundle: Path) -> Path:
    """``llama_cpp/lib`` inside a bundle (``_internal`` next to the executable; ``Contents/Frameworks`` in a .app)."""
    for cand in (bundle / "_internal" / "llama_cpp" / "lib", bundle / "Contents" / "Frameworks" / "llama_cpp" / "lib",
                 bundle / "Contents" / "Resources" / "llama_cpp" / "lib"):
        if cand.is_dir():
            return cand
    raise SystemExit(f"the bundle {bundle} has no llama_cpp/lib")


def build(dist: Path, work: Path, *, installers: bool = True, smoke: bool = False, compile_llama: bool = True,
          allow_native: bool = False) -> dict[str, Any]:
    """Steps 0-4 of the module docstring; returns the summary (paths as strings, sizes in bytes, seconds)."""
    import llama_build
    from make_icons import make_icons

    version = project_version()
    dist.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"version": version, "platform": sys.platform, "seconds": {}}
    t = time.perf_counter()
    llama_site = None
    if not allow_native:
        llama_site = llama_build.portable_site(compile_missing=compile_llama, log=work / "llama-build.log")
    summary["seconds"]["llama"] = time.perf_counter() - t
    t = time.perf_counter()
    icons = work / "icons"
    make_icons(icons)
    summary["translations"] = [p.name for p in compile_translations(work / "translations")]
    summary["seconds"]["icons"] = time.perf_counter() - t
    t = time.perf_counter()
    bundle = freeze(dist, work, icons, llama_site)
    summary["seconds"]["pyinstaller"] = time.perf_counter() - t
    lib = bundled_llama_lib(bundle)
    try:
        variants = llama_build.check_portable(lib)
    except llama_build.NativeBuildError:
        if not allow_native:
            raise
        variants = []
    summary["llama"] = {"portable": bool(variants) or (sys.platform == "darwin" and llama_site is not None),
                        "site": str(llama_site) if llama_site else None, "cmake_args": llama_build.cmake_args(),
                        "cpu_variants": variants}
    summary["bundle"] = str(bundle)
    summary["executable"] = str(frozen_executable(dist))
    summary["sizes"] = {"bundle": tree_size(bundle)}
    if installers:
        t = time.perf_counter()
        outputs: dict[str, Path] = {}
        if sys.platform.startswith("linux"):
            import linux

            outputs["tar_gz"] = linux.write_tarball(bundle, icons, dist, version, work)
            summary["seconds"]["tar_gz"] = time.perf_counter() - t
            t = time.perf_counter()
            outputs["deb"] = linux.write_deb(bundle, icons, dist, version, work)
            summary["seconds"]["deb"] = time.perf_counter() - t
            summary["appimage"] = "not built: appimagetool and its runtime are not in any package registry"
        elif sys.platform == "win32":
            outputs["setup_exe"] = windows_installer(bundle, icons, dist, version)
            summary["seconds"]["installer"] = time.perf_counter() - t
        elif sys.platform == "darwin":
            outputs["dmg"] = macos_dmg(bundle, dist, work, version)
            summary["seconds"]["installer"] = time.perf_counter() - t
        for name, path in outputs.items():
            summary[name] = str(path)
            summary["sizes"][name] = tree_size(path)
    if smoke:
        t = time.perf_counter()
        summary["smoke_test"] = smoke_test(frozen_executable(dist))
        summary["seconds"]["smoke_test"] = time.perf_counter() - t
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="packaging/build.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the bundle and installers go (dist)")
    p.add_argument("--work", type=Path, default=ROOT / "build", help="PyInstaller's work folder and icons (build)")
    p.add_argument("--no-installers", action="store_true", help="only the bundle, no tarball/.deb/setup/.dmg")
    p.add_argument("--smoke-test", action="store_true", help="run the frozen app's --smoke-test after building")
    p.add_argument("--no-compile", action="store_true",
                   help="fail instead of compiling the portable llama-cpp-python when it is not cached")
    p.add_argument("--allow-native", action="store_true",
                   help="bundle the installed llama-cpp-python even if it is a native build (a local test bundle)")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    summary = build(args.dist.resolve(), args.work.resolve(), installers=not args.no_installers,
                    smoke=args.smoke_test, compile_llama=not args.no_compile, allow_native=args.allow_native)
    summary["seconds"]["total"] = time.perf_counter() - t0
    summary["seconds"] = {k: round(v, 1) for k, v in summary["seconds"].items()}
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
