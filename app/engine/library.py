"""The model library: GGUF files in the models folder, described from their headers without loading weights.

``read_model_info`` reads a file's metadata and tensor table with ``app.engine.gguf_header`` (a bounded walk of
the header over a memory map: every count and length is checked against the file's size first, arrays are
skipped, never turned into Python objects; ``gguf.GGUFReader`` cost ~200× the file in memory on a header of
millions of empty strings), with the ``gguf`` package's names for file and tensor types. Results are cached by
path + size + mtime (``LibraryCache``) and a rescan of unchanged files is instant. A file that cannot be
described is listed with ``broken`` set to the reason; the scan never raises for a bad file.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.engine.base import EngineError
from app.engine.gguf_header import GGUFHeaderError, read_header
from app.engine.models import check_gguf

log = logging.getLogger("brook.library")


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What a GGUF file's header says. ``size_bytes``: the file's size; ``parameters``: sum of the tensors'
    element counts (None when unknown); ``quantization``: e.g. ``"Q4_K_M"`` (from ``general.file_type``, else the
    most common tensor type); ``context_length``: tokens the model was trained for; ``broken``: why the file
    cannot be used (``None`` for a usable file)."""

    path: str
    file_name: str
    size_bytes: int
    name: str | None = None
    architecture: str | None = None
    parameters: int | None = None
    quantization: str | None = None
    context_length: int | None = None
    has_chat_template: bool = False
    broken: str | None = None
    n_layers: int | None = None        # {arch}.block_count
    n_embd: int | None = None          # {arch}.embedding_length
    n_head: int | None = None          # {arch}.attention.head_count
    n_head_kv: int | None = None       # {arch}.attention.head_count_kv (grouped-query attention; = n_head if absent)

    def kv_cache_bytes(self, n_ctx: int, bytes_per_value: int = 2) -> int | None:
        """Memory of the KV cache for a context window of ``n_ctx`` tokens: keys and values (2) × layers ×
        tokens × KV width (``n_embd ÷ n_head × n_head_kv``) × ``bytes_per_value`` (2: llama.cpp's default F16
        cache). None when the header lacks the sizes."""
        if not (self.n_layers and self.n_embd and self.n_head):
            return None
        kv_width = self.n_embd // self.n_head * (self.n_head_kv or self.n_head)
        return 2 * self.n_layers * n_ctx * kv_width * bytes_per_value

    def memory_bytes(self, n_ctx: int) -> int:
        """Memory to run this model with a context window of ``n_ctx`` tokens (``estimate_memory_bytes``)."""
        return estimate_memory_bytes(self.size_bytes, n_ctx, self.kv_cache_bytes(n_ctx))

    @property
    def parameters_label(self) -> str:
        """``"135M"``, ``"7.2B"`` or ``"?"``."""
        n = self.parameters
        if not n:
            return "?"
        for div, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
            if n >= div:
                return f"{n / div:.1f}".rstrip("0").rstrip(".") + unit
        return str(n)


#: llama.cpp's compute buffers and context, beyond weights and KV cache: a fixed part (bytes) + a share of the
#: weights (measured on SmolLM2-135M and 7B Q4 models with llama.cpp's load log: 60-300 MB at n_ctx 4096).
COMPUTE_OVERHEAD_BYTES = 96 << 20
COMPUTE_OVERHEAD_SHARE = 0.05


def estimate_memory_bytes(size_bytes: int, n_ctx: int, kv_bytes: int | None = None) -> int:
    """Bytes of memory a GGUF of ``size_bytes`` needs with a context window of ``n_ctx`` tokens: the weights (the
    whole file is mapped), the KV cache (``kv_bytes``, from the header: ``ModelInfo.kv_cache_bytes``; when the
    header is not known, e.g. a file still on the Hub, a rough rule of 1/8 of the weights per 4,096 tokens, the
    F16 cache of a grouped-query-attention model) and llama.cpp's compute buffers (``COMPUTE_OVERHEAD_*``)."""
    if kv_bytes is None:
        kv_bytes = int(size_bytes * n_ctx / 32768)
    return int(size_bytes + kv_bytes + COMPUTE_OVERHEAD_BYTES + COMPUTE_OVERHEAD_SHARE * size_bytes)


def read_model_info(path: str | Path) -> ModelInfo:
    """Describe the GGUF at ``path`` from its header (never raises; a bad file gets ``broken``)."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        return ModelInfo(str(p), p.name, 0, broken=f"cannot be read ({exc.strerror or exc})")
    try:
        check_gguf(p)
    except EngineError as exc:
        return ModelInfo(str(p), p.name, size, broken=_reason(str(exc)))
    try:
        import gguf

        header = read_header(p)
        fields = header.fields

        def get(key: str) -> Any:
            return fields.get(key)

        arch = get("general.architecture")
        arch = arch if isinstance(arch, str) else None
        n_params = sum(n for _name, n, _kind in header.tensors) or None
        ftype = get("general.file_type")
        quant = None
        if isinstance(ftype, int):
            try:
                quant = gguf.LlamaFileType(ftype).name.removeprefix("MOSTLY_")
            except ValueError:
                quant = None
        if quant is None and header.tensors:
            kind = Counter(k for _name, _n, k in header.tensors).most_common(1)[0][0]
            try:
                quant = gguf.GGMLQuantizationType(kind).name
            except ValueError:
                quant = f"type {kind}"

        def num(key: str) -> int | None:
            v = get(f"{arch}.{key}") if arch else None
            return int(v) if isinstance(v, int) and not isinstance(v, bool) else None

        name = get("general.name")
        info = ModelInfo(str(p), p.name, size, name=name if isinstance(name, str) else None, architecture=arch,
                         parameters=n_params, quantization=quant, context_length=num("context_length"),
                         has_chat_template="tokenizer.chat_template" in fields, n_layers=num("block_count"),
                         n_embd=num("embedding_length"), n_head=num("attention.head_count"),
                         n_head_kv=num("attention.head_count_kv"))
    except (GGUFHeaderError, OSError, ValueError, OverflowError) as exc:
        log.info("model library: %s is broken: %s", p, exc)
        why = f": {exc}" if isinstance(exc, GGUFHeaderError) else " (a download that did not finish?)"
        return ModelInfo(str(p), p.name, size, broken=f"the GGUF header is damaged or truncated{why}")
    if not header.tensors:
        return ModelInfo(**{**asdict(info), "broken": "no weights in the file (a vocabulary-only GGUF?)"})
    if not arch:
        return ModelInfo(**{**asdict(info), "broken": "no general.architecture in the header"})
    return info


def _reason(message: str) -> str:
    """``check_gguf``'s sentence, without the repeated path."""
    return message.split(":")[0].replace("The file is", "the file is").replace("The GGUF file is", "the file is")


class LibraryCache:
    """``ModelInfo`` per file, in ``cache_file`` (JSON), valid while the file's path, size and mtime match."""

    def __init__(self, cache_file: Path | None) -> None:
        self.cache_file = cache_file
        self._entries: dict[str, dict[str, Any]] = {}
        if cache_file is not None:
            try:
                raw = json.loads(cache_file.read_text("utf-8"))
                if isinstance(raw, dict):
                    self._entries = {k: v for k, v in raw.items() if isinstance(v, dict)}
            except (OSError, ValueError):
                pass

    @staticmethod
    def key(p: Path) -> str | None:
        try:
            st = p.stat()
        except OSError:
            return None
        return f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}"

    def get(self, p: Path) -> ModelInfo | None:
        k = self.key(p)
        entry = self._entries.get(k) if k else None
        try:
            return ModelInfo(**entry) if entry else None
        except TypeError:       # written by another version
            return None

    def put(self, p: Path, info: ModelInfo) -> None:
        k = self.key(p)
        if k:
            self._entries[k] = asdict(info)

    def save(self) -> None:
        if self.cache_file is None:
            return
        try:
            tmp = self.cache_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._entries, indent=1), "utf-8")
            os.replace(tmp, self.cache_file)
        except OSError as exc:
            log.warning("cannot save the model library cache %s: %s", self.cache_file, exc)


def gguf_files(folder: Path) -> list[Path]:
    """Every ``*.gguf`` file under ``folder`` (recursively), sorted by path; ``[]`` for a missing or unreadable
    folder. Lists names only (no header is read)."""
    if not folder.is_dir():
        return []
    try:
        return sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".gguf" and p.is_file())
    except OSError as exc:
        log.warning("cannot list %s: %s", folder, exc)
        return []


def scan_models(folder: Path, cache: LibraryCache | None = None,
                on_model: Callable[[ModelInfo], None] | None = None) -> list[ModelInfo]:
    """Every ``*.gguf`` under ``folder`` (recursively, sorted by path), described (cache first). ``on_model`` is
    called for each as it is read (from the scanning thread). A missing folder gives ``[]``. Blocking: run it in
    a worker thread."""
    if not folder.is_dir():
        return []
    out: list[ModelInfo] = []
    try:
        paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".gguf" and p.is_file())
    except OSError as exc:
        log.warning("cannot list %s: %s", folder, exc)
        return []
    for p in paths:
        info = cache.get(p) if cache else None
        if info is None:
            info = read_model_info(p)
            if cache:
                cache.put(p, info)
        out.append(info)
        if on_model is not None:
            on_model(info)
    if cache:
        cache.save()
    return out


def default_models_dir() -> Path:
    """``<data folder>/models`` (created if missing)."""
    from app.core.settings import data_dir

    d = data_dir() / "models"
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    return d
