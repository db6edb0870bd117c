"""Where a reply came from: the model file (name, size, SHA-256), its chat template, sampling, seed, timings.

A reply's ``Message.provenance`` holds the facts about the model file and chat template (the engine gives them,
``model_file_facts``) and what the model ran on (``runtime_facts``: the device, the layers on it, the CPU
variant); sampling parameters (with the seed actually used), timings and the stop reason are the message's own
``params`` / ``metrics`` / ``stop_reason``. ``describe`` puts them all together for tooltips and
exports.

Hashing a model file takes seconds (SHA-256 at ~0.5-2 GB/s), so it runs once per file in a background thread
(``HashCache.start``) and the result is cached in a JSON file keyed by path + size + mtime: a file is hashed
again only when it changes. Until its hash is known a reply records ``model_sha256: null``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.text import QT_TRANSLATE_NOOP

log = logging.getLogger("brook.provenance")

#: Bytes read per step while hashing (1 MiB).
HASH_BLOCK = 1 << 20


def sha256_file(path: str | Path, stop: threading.Event | None = None) -> str | None:
    """Hex SHA-256 of the file at ``path`` (read in ``HASH_BLOCK`` steps); ``None`` if ``stop`` was set first.
    Raises ``OSError`` when the file cannot be read."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(HASH_BLOCK):
            if stop is not None and stop.is_set():
                return None
            h.update(block)
    return h.hexdigest()


def _key(path: Path) -> str | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"


class HashCache:
    """SHA-256 of model files, cached in ``cache_file`` (JSON: ``"path|size|mtime_ns" → hex``).

    Thread-safe. ``get`` never hashes; ``start`` hashes in a daemon thread once per file (a second ``start`` for
    the same unchanged file does nothing) and calls ``on_done(path, sha256)`` from that thread when finished.
    A missing or corrupt cache file is treated as empty; a write failure is logged, never raised.
    """

    def __init__(self, cache_file: Path) -> None:
        self.cache_file = cache_file
        self._lock = threading.Lock()
        self._busy: dict[str, threading.Thread] = {}
        self._stop = threading.Event()
        try:
            raw = json.loads(cache_file.read_text("utf-8"))
            self._known: dict[str, str] = {k: v for k, v in raw.items() if isinstance(v, str)} \
                if isinstance(raw, dict) else {}
        except (OSError, ValueError):
            self._known = {}

    def get(self, path: str | Path) -> str | None:
        key = _key(Path(path))
        with self._lock:
            return self._known.get(key) if key else None

    def start(self, path: str | Path, on_done: Callable[[Path, str], None] | None = None) -> threading.Thread | None:
        """Hash ``path`` in the background unless its hash is known or being computed. Returns the thread (None
        when nothing was started)."""
        p = Path(path)
        key = _key(p)
        if key is None:
            return None
        with self._lock:
            if key in self._known or key in self._busy:
                return None
            t = threading.Thread(target=self._run, args=(p, key, on_done), name=f"sha256 {p.name}", daemon=True)
            self._busy[key] = t
        t.start()
        return t

    def stop(self) -> None:
        """Abandon running hashes (closing the app)."""
        self._stop.set()

    def _run(self, path: Path, key: str, on_done: Callable[[Path, str], None] | None) -> None:
        try:
            digest = sha256_file(path, self._stop)
        except OSError as exc:
            log.warning("cannot hash %s: %s", path, exc)
            digest = None
        with self._lock:
            self._busy.pop(key, None)
            if digest is None:
                return
            self._known[key] = digest
            snapshot = dict(self._known)
        self._write(snapshot)
        log.debug("sha256 %s = %s", path.name, digest)
        if on_done is not None:
            on_done(path, digest)

    def _write(self, known: dict[str, str]) -> None:
        try:
            tmp = self.cache_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(known, indent=1), "utf-8")
            os.replace(tmp, self.cache_file)
        except OSError as exc:
            log.warning("cannot save model hashes to %s: %s", self.cache_file, exc)


_default: HashCache | None = None


def default_hash_cache() -> HashCache:
    """The app's cache, in the data folder (``model-hashes.json``; a new one when the data folder changed)."""
    global _default
    from app.core.settings import data_dir

    file = data_dir() / "model-hashes.json"
    if _default is None or _default.cache_file != file:
        _default = HashCache(file)
    return _default


def model_file_facts(path: str | Path, cache: HashCache | None, chat_template: str | None) -> dict[str, Any]:
    """Provenance of a model file: ``model_file`` (name), ``model_bytes``, ``model_sha256`` (``None`` until
    hashed), ``chat_template`` (where the template came from, e.g. ``"GGUF tokenizer.chat_template"``)."""
    p = Path(path)
    try:
        size: int | None = p.stat().st_size
    except OSError:
        size = None
    return {"model_file": p.name, "model_bytes": size, "model_sha256": cache.get(p) if cache else None,
            "chat_template": chat_template}


#: What a reply's provenance keeps of ``engine.runtime()`` (``app.engine.llama.LlamaEngine.runtime``).
RUNTIME_KEYS = ("backend", "device", "gpu_layers", "n_layers", "cpu_variant")


def runtime_facts(engine: object) -> dict[str, Any]:
    """``RUNTIME_KEYS`` of ``engine.runtime()`` where the engine has one and a model is loaded: ``backend``
    (``CPU`` or ggml's GPU device name, e.g. ``Vulkan0``), ``device`` (the hardware's description),
    ``gpu_layers`` (layers offloaded), ``n_layers`` (the model's blocks), ``cpu_variant``; ``{}`` otherwise
    (a remote engine, nothing loaded)."""
    fn = getattr(engine, "runtime", None)
    facts = fn() if callable(fn) else None
    return {k: facts[k] for k in RUNTIME_KEYS if facts.get(k) is not None} if isinstance(facts, dict) else {}


def on_gpu(facts: dict[str, Any]) -> bool:
    """Whether ``facts`` (``runtime_facts``, or a reply's provenance) say layers ran on a GPU device."""
    layers = facts.get("gpu_layers")
    return bool(facts.get("backend")) and facts.get("backend") != "CPU" and isinstance(layers, int) and layers > 0


def device_name(facts: dict[str, Any]) -> str | None:
    """The device in a word or two: the GPU's description (e.g. ``llvmpipe (LLVM 15.0.6, 256 bits)``) when
    layers ran on one, else ``CPU``; None when ``facts`` do not say (a remote engine)."""
    if not facts.get("backend"):
        return None
    return str(facts.get("device") or facts["backend"]) if on_gpu(facts) else "CPU"


def device_label(facts: dict[str, Any]) -> str | None:
    """The device with its details: ``"<GPU> (Vulkan0), 31 of 31 layers"`` (the model's blocks + its output
    layer) or ``"CPU (haswell)"`` (the CPU variant; a native build says just ``CPU``); None like
    ``device_name``."""
    name = device_name(facts)
    if name is None:
        return None
    if on_gpu(facts):
        n = facts.get("n_layers")
        total = f" of {n + 1}" if isinstance(n, int) and n > 0 else ""
        return f"{name} ({facts['backend']}), {facts['gpu_layers']}{total} layers"
    variant = facts.get("cpu_variant")
    return f"CPU ({variant})" if variant and variant != "built-in" else "CPU"


#: Sampling parameters shown by ``describe``, in this order.
SAMPLING_KEYS = ("temperature", "top_p", "top_k", "min_p", "repeat_penalty", "max_tokens", "stop")
#: ``describe``'s labels (the UI translates them in the "Provenance" context).
LABELS = [QT_TRANSLATE_NOOP("Provenance", "model"), QT_TRANSLATE_NOOP("Provenance", "model file"),
          QT_TRANSLATE_NOOP("Provenance", "size"), QT_TRANSLATE_NOOP("Provenance", "SHA-256"),
          QT_TRANSLATE_NOOP("Provenance", "chat template"), QT_TRANSLATE_NOOP("Provenance", "device"),
          QT_TRANSLATE_NOOP("Provenance", "temperature"),
          QT_TRANSLATE_NOOP("Provenance", "top p"), QT_TRANSLATE_NOOP("Provenance", "top k"),
          QT_TRANSLATE_NOOP("Provenance", "min p"), QT_TRANSLATE_NOOP("Provenance", "repeat penalty"),
          QT_TRANSLATE_NOOP("Provenance", "max tokens"), QT_TRANSLATE_NOOP("Provenance", "stop"),
          QT_TRANSLATE_NOOP("Provenance", "seed"), QT_TRANSLATE_NOOP("Provenance", "TTFT"),
          QT_TRANSLATE_NOOP("Provenance", "tokens/s"), QT_TRANSLATE_NOOP("Provenance", "tokens"),
          QT_TRANSLATE_NOOP("Provenance", "stop reason")]


def describe(msg: Any) -> list[tuple[str, str]]:
    """(label, value) rows of everything known about how ``msg`` (an assistant ``Message``) was made: model
    file, size, SHA-256, chat template, device (``device_label``), sampling parameters, seed, TTFT, tokens/s,
    stop reason. Unknown values are left out."""
    rows: list[tuple[str, str]] = []
    prov = msg.provenance or {}
    if msg.model:
        rows.append(("model", str(msg.model)))
    if prov.get("model_file"):
        rows.append(("model file", str(prov["model_file"])))
    if isinstance(prov.get("model_bytes"), int):
        rows.append(("size", f"{prov['model_bytes'] / 1e6:,.1f} MB ({prov['model_bytes']:,} bytes)"))
    if prov.get("model_sha256"):
        rows.append(("SHA-256", str(prov["model_sha256"])))
    if prov.get("chat_template"):
        rows.append(("chat template", str(prov["chat_template"])))
    if device := device_label(prov):
        rows.append(("device", device))
    params = msg.params or {}
    for k in SAMPLING_KEYS:
        v = params.get(k)
        if v not in (None, [], ()):
            rows.append((k.replace("_", " "), ", ".join(map(repr, v)) if isinstance(v, (list, tuple)) else str(v)))
    if params.get("seed") is not None:
        rows.append(("seed", f"{params['seed']}" + (" (random)" if prov.get("seed_random") else "")))
    m = msg.metrics or {}
    if m.get("ttft_ms") is not None:
        rows.append(("TTFT", f"{m['ttft_ms']:.0f} ms"))
    if m.get("decode_tokens_per_s"):
        rows.append(("tokens/s", f"{m['decode_tokens_per_s']:.1f}"))
    if m.get("decode_tokens"):
        rows.append(("tokens", str(m["decode_tokens"])))
    if msg.stop_reason:
        rows.append(("stop reason", str(msg.stop_reason)))
    return rows
