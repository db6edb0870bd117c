"""The one way to open an engine: the launcher and File → Open model both call ``open_engine``.

Opening builds the engine and checks what can be checked without loading (the file exists and is a GGUF);
loading it (seconds, in a worker thread) and keeping the previous model when that fails is the chat session's
job (``app.core.chat.session.ChatSession.switch_engine``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.engine.base import Engine


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """What to open.

    - ``model_path``: a GGUF file (``None``: the bundled SmolLM2-135M-Instruct);
    - ``n_ctx``: the context window (tokens; ``None``: llama.cpp engine's default, 4,096);
    - ``scripted``: the deterministic scripted engine instead of a model (demos, debugging);
    - ``slow_ms``: wait this many ms before each chunk of text (``--slow-ms``; wraps any engine);
    - ``n_threads`` / ``n_gpu_layers``: llama.cpp's decode threads (``None``: its default) and layers offloaded
      to a GPU (0: none);
    - ``remote``: an OpenAI-compatible server (an ``app.engine.remote.engine.RemoteConnection``) instead of a local
      model;
    - ``in_process``: run a local model in this process (``app.engine.llama.LlamaEngine``: benchmarks, tests)
      instead of the default, its own engine host process (``app.engine.hosted.HostedEngine``), which a crash
      or hang of llama.cpp cannot take down with the window.
    """

    model_path: str | Path | None = None
    n_ctx: int | None = None
    scripted: bool = False
    slow_ms: float = 0.0
    n_threads: int | None = None
    n_gpu_layers: int = -1
    remote: Any = None
    script: str | None = None  # with ``scripted``: the reply's text (``--scripted-reply FILE``)
    in_process: bool = False   # a local model in this process (``LlamaEngine``) instead of an engine host
    chat_template: str | None = None   # a Jinja chat template instead of the GGUF's own
    #: apply the model file's own settings (``app.core.model_settings``: context window, GPU layers, template)
    model_settings: bool = True

    def with_model(self, path: str | Path) -> EngineSpec:
        """The same options for another model file."""
        return replace(self, model_path=path, scripted=False, remote=None)


def open_engine(spec: EngineSpec, *, check: bool = True) -> Engine:
    """Build the engine ``spec`` describes (not loaded yet). With ``check`` (File → Open model: refuse before
    anything is unloaded) a model file that is missing or not a GGUF raises ``ModelNotFoundError`` /
    ``InvalidModelError`` (readable messages); without, loading it raises them."""
    from app.engine.slow import SlowEngine

    engine: Engine
    if spec.scripted:
        from app.engine.scripted import ScriptedEngine

        # one token per slow_ms when asked (the wrapper does the waiting), else a readable 40 tokens/s
        engine = ScriptedEngine(spec.script, tokens_per_s=0.0 if spec.slow_ms else 40.0,
                                repeat=3 if spec.script is None else 1)
    elif spec.remote is not None:
        from app.engine.remote.engine import RemoteEngine

        engine = RemoteEngine(spec.remote)
    else:
        from app.engine.llama import DEFAULT_N_CTX, default_threads
        from app.engine.models import bundled_model_path, check_gguf

        path = Path(spec.model_path) if spec.model_path is not None else bundled_model_path()
        if check:
            check_gguf(path)
        n_ctx, n_gpu_layers, template = spec.n_ctx, spec.n_gpu_layers, spec.chat_template
        if spec.model_settings:                     # the model file's own settings beat the app's
            from app.core.model_settings import ModelSettingsStore

            own = ModelSettingsStore().get(path)
            n_ctx = own.n_ctx or n_ctx
            n_gpu_layers = own.n_gpu_layers if own.n_gpu_layers is not None else n_gpu_layers
            template = own.chat_template or template
        n_ctx, n_threads = n_ctx or DEFAULT_N_CTX, spec.n_threads or default_threads()
        if spec.in_process:
            from app.engine.llama import LlamaEngine

            engine = LlamaEngine(path, n_ctx=n_ctx, n_threads=n_threads, n_gpu_layers=n_gpu_layers,
                                 chat_template=template)
        else:
            from app.engine.hosted import HostedEngine

            engine = HostedEngine(path, n_ctx=n_ctx, n_threads=n_threads, n_gpu_layers=n_gpu_layers,
                                  chat_template=template)
    return SlowEngine(engine, spec.slow_ms) if spec.slow_ms else engine
