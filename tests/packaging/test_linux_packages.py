"""The Linux installers built by ``packaging/build.py``: the .deb (inspected with dpkg-deb, extracted to a temporary
root where the app passes the smoke test) and the .tar.gz (desktop entry and hicolor icons)."""

from __future__ import annotations

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
    for size in ICON_SIZES:
        assert f"{top}/share/icons/hicolor/{size}x{size}/apps/brook.png" in members
    assert all(m.uid == 0 and m.gid == 0 for m in members.values())
