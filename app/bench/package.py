"""``python -m app.bench package [--dist DIR] [--runs N] [--build]``: the frozen app vs the source install.

Sizes (MB = 10^6 bytes): the PyInstaller bundle (``DIST/Brook``, built by ``python3 packaging/build.py``), its
model, the ``.tar.gz`` and ``.deb`` when present, and the source install's baseline: the installed files of
``brook-chat``'s runtime requirements (recursively; PySide6, llama-cpp-python, numpy, the model package, ...).

Start-up, both measured in this run, alternating, ``N`` times each (medians): from just before the process is
spawned to the window shown (the event loop's first turn) and to the model loaded, read from the Unix times the
app's ``--smoke-test --close-after-ms 0`` prints. The page cache is warm (process-cold, not disk-cold: dropping
caches would disturb a shared machine). ``ratios`` are frozen ÷ source (< 1: the frozen app is faster).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.bench._util import emit, median

ROOT = Path(__file__).resolve().parents[2]
MB = 1e6


def _tree_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def source_install_bytes(dist_name: str = "brook-chat") -> tuple[int, list[str]]:
    """Bytes of the installed files of ``dist_name``'s runtime requirements, recursively (not itself)."""
    seen: set[str] = set()
    todo = [dist_name]
    total = 0
    while todo:
        name = todo.pop()
        for req in importlib.metadata.requires(name) or []:
            if "extra ==" in req:
                continue
            m = re.match(r"[A-Za-z0-9._-]+", req)
            dep = m.group(0).lower().replace("_", "-") if m else ""
            if not dep or dep in seen:
                continue
            seen.add(dep)
            try:
                files = importlib.metadata.files(dep) or []
            except importlib.metadata.PackageNotFoundError:
                continue
            total += sum(p.stat().st_size for f in files if (p := Path(str(f.locate()))).is_file())
            todo.append(dep)
    return total, sorted(seen)


def start_once(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Spawn ``cmd`` (a ``--smoke-test --close-after-ms 0`` run); seconds from spawn to shown and to loaded."""
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{cmd[0]} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    result = json.loads(lines[-1])
    return {"window_shown_s": result["window_shown_at"] - t0, "model_loaded_s": result["model_loaded_at"] - t0}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.bench package", description=__doc__.split("\n\n")[0])
    p.add_argument("--dist", type=Path, default=ROOT / "dist", help="the build's output folder (dist)")
    p.add_argument("--runs", type=int, default=3, help="start-ups of each kind (default 3)")
    p.add_argument("--build", action="store_true", help="run packaging/build.py first (into --dist)")
    args = p.parse_args(argv)
    build_s = None
    if args.build:
        t = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "packaging" / "build.py"), "--dist", str(args.dist)], check=True)
        build_s = time.perf_counter() - t
    bundle = args.dist / "Brook"
    exe = bundle / ("Brook.exe" if sys.platform == "win32" else "Brook")
    if not exe.is_file():
        print(f"no frozen app at {exe}: build it with python3 packaging/build.py (or pass --build)", file=sys.stderr)
        return 2
    models = list(bundle.glob("_internal/models/*.gguf"))
    source_bytes, deps = source_install_bytes()
    sizes: dict[str, Any] = {"bundle_mb": _tree_bytes(bundle) / MB,
                             "model_mb": sum(m.stat().st_size for m in models) / MB,
                             "source_install_mb": source_bytes / MB}
    sizes["bundle_without_model_mb"] = sizes["bundle_mb"] - sizes["model_mb"]
    for key, pattern in (("tar_gz_mb", "*.tar.gz"), ("deb_mb", "*.deb")):
        found = sorted(args.dist.glob(pattern))
        if found:
            sizes[key] = found[-1].stat().st_size / MB
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, BROOK_DATA_DIR=str(Path(tmp) / "data"), BROOK_CONFIG_DIR=str(Path(tmp) / "config"))
        if sys.platform.startswith("linux") and not env.get("DISPLAY"):
            env["QT_QPA_PLATFORM"] = "offscreen"
        flags = ["--smoke-test", "--close-after-ms", "0"]
        kinds = {"frozen": [str(exe), *flags], "source": [sys.executable, str(ROOT / "main.py"), *flags]}
        samples: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
        for _ in range(args.runs):
            for kind, cmd in kinds.items():
                samples[kind].append(start_once(cmd, env))
    result: dict[str, Any] = {"benchmark": "package", "runs": args.runs, **sizes,
                              "size_ratio_bundle_vs_source": sizes["bundle_mb"] / sizes["source_install_mb"]}
    for kind, runs in samples.items():
        result[kind] = {key: median([r[key] for r in runs]) for key in ("window_shown_s", "model_loaded_s")}
    result["ratios"] = {key: result["frozen"][key] / result["source"][key]
                        for key in ("window_shown_s", "model_loaded_s")}
    result["source_requirements"] = len(deps)
    if build_s is not None:
        result["build_s"] = build_s
    emit(result)
    return 0
