"""The Linux installers built by ``packaging/build.py``: the .deb (inspected with dpkg-deb, extracted to a temporary
root where the app passes the smoke test) and the .tar.gz (desktop entry and hicolor icons)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def _control(deb: str) -> dict[str, str]:
    out = subprocess.run(["dpkg-deb", "--field", deb], capture_output=True, text=True, check=True).stdout
    fields: dict[str, str] = {}
    for line in out.splitlines():
        if line and not line[0].isspace():
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def test_deb_control_fields(build):
    fields = _control(build["deb"])
    assert fields["Package"] == "brook"
    assert fields["Version"] == build["version"]
    assert fields["Architecture"] == subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                                                    text=True, check=True).stdout.strip()
    depends = {d.split()[0] for d in fields["Depends"].split(", ")}
    # the xcb libraries Qt's X11 plugin loads, which the bundle does not ship
    assert {"libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0", "libc6"} <= depends
    # what a bare system lacks: fontconfig's configuration, a font, GL/EGL (the bundle ships none of them)
    assert {"fontconfig-config", "fonts-dejavu-core", "libgl1", "libegl1"} <= depends
    assert "fonts-dejavu-core | fonts-liberation2 | fonts-noto-core" in fields["Depends"]
    recommends = {d.split()[0] for d in fields["Recommends"].split(", ")}
    assert {"fonts-noto-cjk", "fonts-noto-color-emoji"} <= recommends
    assert fields["Description"].startswith("Desktop chat app")
    assert int(fields["Installed-Size"]) > 100_000          # KiB: the bundle and its ~100 MB model


def test_deb_contents(build):
    listing = subprocess.run(["dpkg-deb", "--contents", build["deb"]], capture_output=True, text=True,
                             check=True).stdout
    paths = {line.split()[5].removeprefix(".") for line in listing.splitlines()}
    assert "/opt/brook/Brook" in paths
    assert "/opt/brook/_internal/models/SmolLM2-135M-Instruct.Q4_1.gguf" in paths
    assert "/usr/bin/brook" in paths
    assert "/usr/share/applications/brook.desktop" in paths
    for size in ICON_SIZES:
        assert f"/usr/share/icons/hicolor/{size}x{size}/apps/brook.png" in paths
    assert "/usr/share/icons/hicolor/scalable/apps/brook.svg" in paths
    outside = {p for p in paths if not p.startswith(("/opt/brook", "/usr/bin/brook", "/usr/share/"))} - {
        "/", "/opt/", "/usr/", "/usr/bin/"}
    assert not outside, f"files outside /opt/brook and the desktop integration: {sorted(outside)[:5]}"


@pytest.fixture(scope="module")
def deb_root(build, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("debroot")
    subprocess.run(["dpkg-deb", "-x", build["deb"], str(root)], check=True)
    return root


def test_deb_desktop_entry_and_launcher(deb_root):
    entry = deb_root / "usr" / "share" / "applications" / "brook.desktop"
    text = entry.read_text(encoding="utf-8")
    assert "\nExec=brook\n" in text and "\nIcon=brook\n" in text and "\nType=Application\n" in text
    if shutil.which("desktop-file-validate"):
        proc = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    launcher = deb_root / "usr" / "bin" / "brook"
    assert launcher.stat().st_mode & 0o111
    assert launcher.read_text(encoding="utf-8") == '#!/bin/sh\nexec /opt/brook/Brook "$@"\n'


def test_deb_copyright_carries_every_licence(deb_root):
    text = (deb_root / "usr" / "share" / "doc" / "brook" / "copyright").read_text(encoding="utf-8")
    assert text.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    assert "Files: *\nCopyright: Brook developers\nLicense: MIT\n Permission is hereby granted" in text
    assert "License: LGPL-3\n On Debian systems the full text is in /usr/share/common-licenses/LGPL-3." in text
    assert "SmolLM2-135M-Instruct" in text and "License: Apache-2.0" in text
    for name in ("PySide6_Essentials", "shiboken6", "llama_cpp_python", "matplotlib", "numpy", "pillow"):
        assert f"\nLicense: {name} " in text, name
    assert "The ggml authors" in text                              # llama.cpp, inside llama-cpp-python
    assert "License agreement for matplotlib" in text              # the licence texts, not only their names


def test_extracted_deb_passes_the_smoke_test(deb_root, frozen):
    result = frozen.smoke(deb_root / "opt" / "brook" / "Brook")
    assert result["chunks"] >= 20
    assert result["code_blocks"] >= 1


def test_tarball_holds_bundle_desktop_entry_and_icons(build):
    with tarfile.open(build["tar_gz"]) as tar:
        members = {m.name: m for m in tar.getmembers()}
    top = f"brook-{build['version']}"
    assert members[f"{top}/Brook"].mode & 0o111
    assert f"{top}/_internal/models/SmolLM2-135M-Instruct.Q4_1.gguf" in members
    assert f"{top}/share/applications/brook.desktop" in members
    assert members[f"{top}/install-desktop-entry.sh"].mode & 0o111
    assert f"{top}/share/doc/copyright" in members
    with tarfile.open(build["tar_gz"]) as tar:
        readme = tar.extractfile(f"{top}/README.txt").read().decode("utf-8")  # type: ignore[union-attr]
    assert "libgl1" in readme and "fontconfig-config" in readme and "fonts-noto-cjk" in readme
    for size in ICON_SIZES:
        assert f"{top}/share/icons/hicolor/{size}x{size}/apps/brook.png" in members
    assert all(m.uid == 0 and m.gid == 0 for m in members.values())


#: A minimal Debian 12 (``debootstrap --variant=minbase bookworm``), made once and kept for later runs.
MINBASE = Path.home() / ".cache" / "brook-build" / "debian-bookworm-minbase"


@pytest.mark.skipif(os.environ.get("BROOK_TEST_CLEAN_DEBIAN") != "1",
                    reason="a minimal Debian (root, debootstrap, a Debian mirror): BROOK_TEST_CLEAN_DEBIAN=1")
def test_deb_in_a_minimal_debian_without_recommends(build, tmp_path):
    """``apt-get install --no-install-recommends ./brook.deb`` in a bare Debian 12 brings what the app needs:
    it passes the smoke test there and draws formulas (the first run: no font cache yet)."""
    if not MINBASE.is_dir():
        MINBASE.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["debootstrap", "--variant=minbase", "bookworm", str(MINBASE), "http://deb.debian.org/debian"],
                       check=True, capture_output=True, timeout=1800)
    root = tmp_path / "debian"
    subprocess.run(["cp", "-a", str(MINBASE), str(root)], check=True)
    shutil.copy(build["deb"], root / "tmp" / "brook.deb")
    shutil.copy("/etc/resolv.conf", root / "etc" / "resolv.conf")
    install = subprocess.run(["chroot", str(root), "sh", "-c", "apt-get update && DEBIAN_FRONTEND=noninteractive "
                              "apt-get install -y --no-install-recommends /tmp/brook.deb"],
                             capture_output=True, text=True, timeout=1800)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    (root / "root" / "math.md").write_text("Euler: $e^{i\\pi}+1=0$.\n\n$$\n\\frac{1}{3}\n$$\n", "utf-8")

    def smoke(*extra: str) -> dict:
        proc = subprocess.run(["chroot", str(root), "env", "-i", "HOME=/root", "PATH=/usr/bin:/bin",
                               "QT_QPA_PLATFORM=offscreen", "/usr/bin/brook", "--smoke-test", *extra],
                              capture_output=True, text=True, timeout=900)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        assert proc.returncode == 0 and lines, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-4000:]}"
        return json.loads(lines[-1])

    reply = smoke()
    assert reply["chunks"] >= 20 and reply["code_blocks"] >= 1 and reply["status"] == "done"
    formulas = smoke("--scripted-reply", "/root/math.md")
    assert formulas["formula_images"] == 2
