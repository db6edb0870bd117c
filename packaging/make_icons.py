"""Render Brook's icon files from its one source, ``app/resources/brook.svg``, with Qt's own SVG renderer.

    python3 packaging/make_icons.py OUT_DIR

writes (nothing binary is edited by hand, and nothing generated is committed)::

    OUT_DIR/hicolor/<N>x<N>/apps/brook.png   N in HICOLOR_SIZES (the freedesktop icon theme layout)
    OUT_DIR/hicolor/scalable/apps/brook.svg
    OUT_DIR/brook.png                        256 x 256
    OUT_DIR/brook.ico                        Windows: ICO_SIZES, PNG-compressed entries (Vista and later)
    OUT_DIR/brook.icns                       macOS: ICNS_TYPES, PNG entries (10.7 and later)

ICO and ICNS are plain containers of PNG images; they are written here (a few lines each, formats from the
Windows ICONDIR / Apple ``icns`` layouts) so that no other image library is needed.
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "app" / "resources" / "brook.svg"
HICOLOR_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
#: ICNS element type → pixel size (the @2x types hold the doubled size).
ICNS_TYPES = {b"icp4": 16, b"icp5": 32, b"icp6": 64, b"ic07": 128, b"ic08": 256, b"ic09": 512, b"ic10": 1024,
              b"ic11": 32, b"ic12": 64, b"ic13": 256, b"ic14": 512}


def render_png(svg: Path, size: int) -> bytes:
    """The SVG rendered to a ``size`` x ``size`` RGBA PNG (bytes). Needs a QGuiApplication."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"not a valid SVG: {svg}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG"):
        raise RuntimeError("Qt could not encode a PNG")
    buf.close()
    return bytes(data.data())


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """A Windows ICO holding each PNG of ``pngs`` (size → PNG bytes); 256 is written as 0, as the format says."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    entries, blobs = b"", b""
    for s in sizes:
        blob = pngs[s]
        dim = 0 if s >= 256 else s
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset)
        blobs += blob
        offset += len(blob)
    return header + entries + blobs


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """An Apple ICNS with one PNG element per entry of ``ICNS_TYPES`` (``pngs``: size → PNG bytes)."""
    body = b"".join(kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES.items())
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def make_icons(out: Path, svg: Path = SVG) -> dict[str, Path]:
    """Write every icon file under ``out`` (see the module docstring); returns name → path of the main ones."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    sizes = sorted({*HICOLOR_SIZES, *ICO_SIZES, *ICNS_TYPES.values()})
    pngs = {s: render_png(svg, s) for s in sizes}
    out.mkdir(parents=True, exist_ok=True)
    for s in HICOLOR_SIZES:
        target = out / "hicolor" / f"{s}x{s}" / "apps" / "brook.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pngs[s])
    scalable = out / "hicolor" / "scalable" / "apps" / "brook.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, scalable)
    paths = {"png": out / "brook.png", "ico": out / "brook.ico", "icns": out / "brook.icns",
             "hicolor": out / "hicolor", "svg": scalable}
    paths["png"].write_bytes(pngs[256])
    paths["ico"].write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    paths["icns"].write_bytes(icns_bytes(pngs))
    return paths


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python3 packaging/make_icons.py OUT_DIR", file=sys.stderr)
        return 2
    for name, path in make_icons(Path(args[0])).items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
