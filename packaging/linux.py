"""Linux packages of the frozen bundle (used by ``packaging/build.py``): a ``.tar.gz`` with a desktop entry and
hicolor icons, and a ``.deb`` built with ``dpkg-deb``.

The ``.deb`` installs the bundle under ``/opt/brook``, a launcher ``/usr/bin/brook``, the desktop entry and the
icons; its ``Depends`` are computed from the bundle itself: every shared library an ELF file in the bundle needs
that the bundle does not ship is mapped to its Debian package (``dpkg -S``), and the X11 libraries Qt's xcb
platform plugin loads are always declared (``XCB_DEPENDS``), also when this build machine lacks them.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESKTOP_TEMPLATE = ROOT / "resources" / "brook.desktop"
PACKAGE = "brook"
INSTALL_DIR = "/opt/brook"
#: No project address exists yet: a reserved ".invalid" address until there is one.
MAINTAINER = "Brook developers <brook@example.invalid>"
DESCRIPTION = """Desktop chat app for local large language models
 Brook runs a GGUF model on your own machine (through llama.cpp) and streams
 every token into a native window as the model makes it. It ships with a
 small model (SmolLM2-135M-Instruct) so it works out of the box."""
#: soname → package of the libraries Qt's xcb platform plugin needs (the README's list and its closure).
XCB_DEPENDS = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb.so.1": "libxcb1",
}
#: Further sonames Qt plugins may need that are not always installed on a build machine.
OTHER_KNOWN = {"libEGL.so.1": "libegl1", "libGL.so.1": "libgl1", "libOpenGL.so.0": "libopengl0",
               "libwayland-client.so.0": "libwayland-client0", "libwayland-cursor.so.0": "libwayland-cursor0",
               "libwayland-egl.so.1": "libwayland-egl1", "libfontconfig.so.1": "libfontconfig1",
               "libdbus-1.so.3": "libdbus-1-3", "libgthread-2.0.so.0": "libglib2.0-0",
               "libglib-2.0.so.0": "libglib2.0-0"}
#: Libraries only optional plugins need (Qt's GTK 3 platform theme, used on GNOME when present): Recommends.
OPTIONAL = {"libgtk-3.so.0": "libgtk-3-0", "libgdk-3.so.0": "libgtk-3-0"}


def desktop_entry(exec_command: str) -> str:
    """The desktop entry (``resources/brook.desktop``) with ``Exec=`` set to ``exec_command``."""
    text = DESKTOP_TEMPLATE.read_text(encoding="utf-8")
    return re.sub(r"(?m)^Exec=.*$", lambda _m: f"Exec={exec_command}", text)


def _hardlink_tree(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` with hard links where the file system allows (fast, no extra disk)."""
    def link(s: str, d: str) -> None:
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)
    shutil.copytree(src, dst, symlinks=True, copy_function=link)


def _install_icons(icons: Path, share: Path) -> None:
    shutil.copytree(icons / "hicolor", share / "icons" / "hicolor", dirs_exist_ok=True)


INSTALL_SCRIPT = """#!/bin/sh
# Adds Brook to your applications menu (for this user): a desktop entry that runs this folder's Brook, and icons.
set -e
here="$(cd "$(dirname "$0")" && pwd)"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
mkdir -p "$data/applications" "$data/icons"
cp -R "$here/share/icons/hicolor" "$data/icons/"
sed "s|^Exec=.*|Exec=\\"$here/Brook\\"|" "$here/share/applications/brook.desktop" > "$data/applications/brook.desktop"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$data/applications" || true
echo "Brook added to the applications menu ($data/applications/brook.desktop)."
"""


def write_tarball(bundle: Path, icons: Path, out_dir: Path, version: str, work: Path) -> Path:
    """``brook-<version>-linux-<machine>.tar.gz``: one folder ``brook-<version>/`` holding the bundle (run
    ``./Brook``), ``share/applications/brook.desktop``, ``share/icons/hicolor/...`` and
    ``install-desktop-entry.sh`` (adds the menu entry for the current user)."""
    name = f"{PACKAGE}-{version}"
    stage = work / "tar" / name
    if stage.parent.exists():
        shutil.rmtree(stage.parent)
    _hardlink_tree(bundle, stage)
    share = stage / "share"
    (share / "applications").mkdir(parents=True)
    (share / "applications" / "brook.desktop").write_text(desktop_entry("Brook"), encoding="utf-8")
    _install_icons(icons, share)
    script = stage / "install-desktop-entry.sh"
    script.write_text(INSTALL_SCRIPT, encoding="utf-8")
    script.chmod(0o755)
    out = out_dir / f"{name}-linux-{platform.machine()}.tar.gz"

    def owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info
    with tarfile.open(out, "w:gz", compresslevel=6) as tar:
        tar.add(stage, arcname=name, filter=owner)
    return out


def _elf_files(root: Path) -> list[Path]:
    found = []
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            with p.open("rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    found.append(p)
    return found


def _ldd(files: list[Path], lib_path: str) -> dict[str, str | None]:
    """soname → resolved path (``None``: not found) for every library the ``files`` need (``ldd``)."""
    needed: dict[str, str | None] = {}
    env = {**os.environ, "LD_LIBRARY_PATH": lib_path}
    for i in range(0, len(files), 100):
        proc = subprocess.run(["ldd", *map(str, files[i:i + 100])], capture_output=True, text=True, env=env)
        for line in proc.stdout.splitlines():
            m = re.match(r"\s+(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))", line)
            if m:
                soname, path = m.group(1), m.group(3)
                if path is not None or soname not in needed:
                    needed[soname] = path
    return needed


def _dpkg_owner(path: str) -> str | None:
    """The Debian package that installed ``path`` (matched by real path, as /lib and /usr/lib are merged)."""
    real = os.path.realpath(path)
    proc = subprocess.run(["dpkg", "-S", f"*/{os.path.basename(path)}"], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        pkgs, _, owned = line.partition(": ")
        if os.path.realpath(owned.strip()) == real:
            return pkgs.split(",")[0].strip().split(":")[0]
    return None


def deb_relations(bundle: Path) -> tuple[list[str], list[str]]:
    """``(Depends, Recommends)`` of the ``.deb``. Depends: the packages of the libraries the bundle needs but
    does not ship, the xcb libraries, and ``libc6 (>= <this machine's glibc>)``; Recommends: ``OPTIONAL``'s.
    Raises ``RuntimeError`` naming a library that is neither shipped, nor from a package, nor known."""
    shipped = {p.name for p in bundle.rglob("*.so*")}
    lib_dirs = sorted({str(p.parent) for p in bundle.rglob("*.so*")})
    depends, recommends = set(XCB_DEPENDS.values()), set()
    unknown = []
    for soname, path in _ldd(_elf_files(bundle), os.pathsep.join(lib_dirs)).items():
        if soname in shipped or (path is not None and Path(path).resolve().is_relative_to(bundle.resolve())):
            continue
        if soname in OPTIONAL:
            recommends.add(OPTIONAL[soname])
            continue
        owner = _dpkg_owner(path) if path else None
        owner = owner or XCB_DEPENDS.get(soname) or OTHER_KNOWN.get(soname)
        if owner is None:
            unknown.append(f"{soname} ({path or 'not found'})")
        elif owner != "libc6":
            depends.add(owner)
    if unknown:
        raise RuntimeError("the bundle needs libraries of no known package: " + ", ".join(sorted(unknown)))
    libc = platform.libc_ver()[1] or "2.31"
    return [f"libc6 (>= {libc})", *sorted(depends)], sorted(recommends)


def _deb_arch() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()


def write_deb(bundle: Path, icons: Path, out_dir: Path, version: str, work: Path) -> Path:
    """``brook_<version>_<arch>.deb`` (``dpkg-deb --build``, gzip): ``/opt/brook`` (the bundle),
    ``/usr/bin/brook``, ``/usr/share/applications/brook.desktop``, ``/usr/share/icons/hicolor/*/apps/brook.*``."""
    stage = work / "deb" / "root"
    if stage.parent.exists():
        shutil.rmtree(stage.parent)
    _hardlink_tree(bundle, stage / INSTALL_DIR.lstrip("/"))
    launcher = stage / "usr" / "bin" / PACKAGE
    launcher.parent.mkdir(parents=True)
    launcher.write_text(f'#!/bin/sh\nexec {INSTALL_DIR}/Brook "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    share = stage / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    (share / "applications" / "brook.desktop").write_text(desktop_entry(PACKAGE), encoding="utf-8")
    _install_icons(icons, share)
    doc = share / "doc" / PACKAGE
    doc.mkdir(parents=True)
    (doc / "copyright").write_text("Brook is released under the MIT License.\n", encoding="utf-8")
    size_kib = sum(p.stat().st_size for p in stage.rglob("*") if p.is_file() and not p.is_symlink()) // 1024
    control = stage / "DEBIAN" / "control"
    control.parent.mkdir()
    arch = _deb_arch()
    depends, recommends = deb_relations(bundle)
    fields = {"Package": PACKAGE, "Version": version, "Section": "utils", "Priority": "optional",
              "Architecture": arch, "Maintainer": MAINTAINER, "Installed-Size": str(size_kib),
              "Depends": ", ".join(depends), "Recommends": ", ".join(recommends), "Description": DESCRIPTION}
    control.write_text("".join(f"{k}: {v}\n" for k, v in fields.items() if v), encoding="utf-8")
    for d in [stage, *stage.rglob("*")]:         # dpkg-deb refuses group/world-writable control folders
        if d.is_dir():
            d.chmod(0o755)
    out = out_dir / f"{PACKAGE}_{version}_{arch}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z6", "--build", str(stage), str(out)],
                   check=True, capture_output=True)
    return out
