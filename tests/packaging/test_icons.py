"""``packaging/make_icons.py``: every icon file is rendered from the one SVG source, at the sizes the formats need."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

ROOT = Path(__file__).resolve().parents[2]
#: Apple's ICNS element types and their pixel sizes (the @2x types ic11-ic14 hold the doubled size).
APPLE_ICNS = {b"icp4": 16, b"icp5": 32, b"icp6": 64, b"ic07": 128, b"ic08": 256, b"ic09": 512, b"ic10": 1024,
              b"ic11": 32, b"ic12": 64, b"ic13": 256, b"ic14": 512}
WINDOWS_ICO_SIZES = [16, 24, 32, 48, 64, 128, 256]
HICOLOR_SIZES = [16, 24, 32, 48, 64, 128, 256, 512]


@pytest.fixture(scope="module")
def icons(tmp_path_factory, qapp) -> dict[str, Path]:
    spec = importlib.util.spec_from_file_location("brook_make_icons", ROOT / "packaging" / "make_icons.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path_factory.mktemp("icons")
    paths = module.make_icons(out)
    paths["module"] = module
    return paths


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_hicolor_pngs_have_their_sizes_and_are_not_blank(icons):
    for size in HICOLOR_SIZES:
        image = QImage(str(icons["hicolor"] / f"{size}x{size}" / "apps" / "brook.png"))
        assert (image.width(), image.height()) == (size, size)
        centre = image.pixelColor(size // 2, size // 2)
        corner = image.pixelColor(0, 0)
        assert centre.alpha() == 255 and corner.alpha() == 0      # drawn, with rounded transparent corners
    assert (icons["hicolor"] / "scalable" / "apps" / "brook.svg").read_bytes() == \
        (ROOT / "app" / "resources" / "brook.svg").read_bytes()


def test_ico_holds_every_windows_size(icons):
    data = icons["ico"].read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    sizes = []
    for i in range(count):
        w, h, _colors, _res, _planes, bpp, length, offset = struct.unpack("<BBBBHHII", data[6 + 16 * i:22 + 16 * i])
        png = data[offset:offset + length]
        assert _png_size(png) == ((w or 256), (h or 256)) and bpp == 32
        sizes.append(w or 256)
    assert sorted(sizes) == WINDOWS_ICO_SIZES


def test_icns_elements_hold_pngs_of_their_type_size(icons):
    data = icons["icns"].read_bytes()
    assert data[:4] == b"icns" and struct.unpack(">I", data[4:8])[0] == len(data)
    pos, seen = 8, {}
    while pos < len(data):
        kind, length = data[pos:pos + 4], struct.unpack(">I", data[pos + 4:pos + 8])[0]
        seen[kind] = _png_size(data[pos + 8:pos + length])[0]
        pos += length
    assert seen == APPLE_ICNS
