"""Command line and start-up: ``python main.py`` / ``brook``.

The window is shown before the model loads (loading runs in a background thread with a progress state), so it
appears in well under a second. ``--smoke-test`` drives the real window through one fixed prompt and prints one
JSON line (see ``app.smoke``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from app.crash import report_startup_error, report_uncaught

if TYPE_CHECKING:
    from app.engine.remote.engine import RemoteConnection
    from app.ui.window.main_window import MainWindow

log = logging.getLogger("brook")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="brook", description="Brook: chat with a local language model.")
    p.add_argument("--model", metavar="PATH", help="a GGUF model file (default: the bundled SmolLM2-135M-Instruct)")
    p.add_argument("--n-ctx", type=_n_ctx, default=None, help="context window in tokens (default 4096, at least 128)")
    p.add_argument("--slow-ms", type=float, default=0.0, metavar="N",
                   help="wait N ms before each chunk of any engine, to watch streaming happen (a debugging aid)")
    p.add_argument("--scripted", action="store_true",
                   help="use the scripted engine (deterministic demo text) instead of a model")
    p.add_argument("--smoke-test", action="store_true",
                   help="send a fixed prompt in the real window, print one JSON line, exit")
    p.add_argument("--stop-after-ms", type=float, default=None, metavar="N",
                   help="with --smoke-test: press Stop N ms after the first token")
    p.add_argument("--close-after-ms", type=float, default=None, metavar="N",
                   help="with --smoke-test: close the window N ms after the first token (checks shutdown)")
    p.add_argument("--screenshot", metavar="PATH", help="with --smoke-test: save a PNG of the window at the end")
    p.add_argument("--prompt", help="with --smoke-test: the prompt to send instead of the fixed one")
    p.add_argument("--scripted-reply", metavar="FILE", type=Path,
                   help="the scripted engine replies with FILE's text (one rendering fault = one file; "
                        "with --smoke-test the JSON has max_stall_ms)")
    p.add_argument("--engine-fault", choices=("segv", "ill", "abort", "kill", "hang"), default=None,
                   help="with --smoke-test: the model process does this to itself during the first reply "
                        "(a crash test: the smoke test then sends a second prompt)")
    p.add_argument("--engine-fault-after-ms", type=float, default=200.0, metavar="N",
                   help="with --engine-fault: N ms after the first token (default 200)")
    p.add_argument("--in-process-engine", action="store_true",
                   help="run the model in the window's process instead of its own engine host (a crash of the "
                        "model then takes the window down; for comparisons)")
    p.add_argument("--debug", action="store_true", help="debug logging (per-reply timing lines) on stderr")
    p.add_argument("--export", metavar="DIR", type=Path,
                   help="write every chat to DIR as JSON and Markdown (a backup), then exit without a window")
    p.add_argument("--import", dest="import_file", metavar="FILE", type=Path,
                   help="add the chats of a JSON export to the history, then exit without a window")
    p.add_argument("--download", metavar="REPO_ID[:FILE]",
                   help="download a GGUF from the Hugging Face Hub into the models folder (a text progress bar; "
                        "exit 0 when complete and SHA-256 verified; run again after a cut to resume; HF_ENDPOINT "
                        "for a mirror, HF_TOKEN or the saved token for gated repos), then exit")
    p.add_argument("--version", action=_VersionAction, help="print Brook's version and exit")
    remote = p.add_argument_group("remote server (any OpenAI-compatible API: llama-server, vLLM, Ollama, …)")
    remote.add_argument("--remote", metavar="URL", help="chat with the model of a server, e.g. "
                        "http://127.0.0.1:8080/v1 (its API key: BROOK_REMOTE_API_KEY)")
    remote.add_argument("--remote-model", metavar="ID", help="with --remote: the model id (default: the first listed)")
    remote.add_argument("--remote-concurrency", type=int, default=1, metavar="N",
                        help="with --remote: generations the server runs at once (default 1; more for vLLM)")
    serve = p.add_argument_group("Brook as a server (OpenAI-compatible API for other apps)")
    serve.add_argument("--serve", action="store_true", help="serve the model headless (no window) until Ctrl+C")
    serve.add_argument("--host", default=None, help="with --serve: address to bind (default 127.0.0.1; any other "
                       "address requires an API key)")
    serve.add_argument("--port", type=int, default=None, help="with --serve: port (default 8080; 0: a free one)")
    serve.add_argument("--api-key", default=None, help="with --serve: the key clients must send (or BROOK_API_KEY)")
    serve.add_argument("--cors-origin", action="append", metavar="ORIGIN",
                       help="with --serve: allow browser apps from ORIGIN (repeatable; default: no CORS)")
    serve.add_argument("--allowed-host", action="append", metavar="NAME",
                       help="with --serve: also answer requests whose Host header is NAME (repeatable; default: "
                            "only the bound address and localhost, against DNS rebinding)")
    return p


class _VersionAction(argparse.Action):
    """``--version``: looked up only when asked (``importlib.metadata`` is ~10 ms of every start otherwise)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=str(kwargs.get("help")))

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"{parser.prog} {_version()}")        # on stdout, as argparse's own version action
        parser.exit()


def _version() -> str:
    """The installed distribution's version, else pyproject's (a checkout that was never installed)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("brook-chat")
    except importlib.metadata.PackageNotFoundError:
        import tomllib

        try:
            with open(Path(__file__).resolve().parents[1] / "pyproject.toml", "rb") as fh:
                return str(tomllib.load(fh)["project"]["version"])
        except (OSError, KeyError, ValueError):
            return "unknown"


def _n_ctx(value: str) -> int:
    n = int(value)
    if n < 128:
        raise argparse.ArgumentTypeError("the context window must be at least 128 tokens")
    return n


def install_excepthook() -> None:
    """Log unexpected exceptions instead of letting Qt abort; the window stays up."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        log.error("unexpected error:\n%s", text)
        report_uncaught(text)       # the frozen app has no terminal: a dialog names the log

    sys.excepthook = hook


_fault_log: object = None


def enable_faulthandler(log_file: Path | None) -> None:
    """On a fatal signal (SIGSEGV, SIGILL, SIGABRT, …) the signal, the faulting module and the last native frames
    (``app.engine.crash_log``), then Python's stacks of every thread go to the log file (stderr when there is
    none); the engine host does the same in its process."""
    import faulthandler

    from app.engine import crash_log

    global _fault_log
    try:
        if log_file is not None:
            _fault_log = open(log_file, "a", encoding="utf-8")   # noqa: SIM115 - open for the process's life
            faulthandler.enable(file=_fault_log, all_threads=True)
            crash_log.install(_fault_log.fileno())
        else:
            faulthandler.enable(all_threads=True)
            crash_log.install(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):   # no usable stderr (a windowed app on Windows)
        pass


def remote_connection(args: argparse.Namespace) -> RemoteConnection | None:
    """The server to chat with: ``--remote URL``, else the connection saved as active in the Server menu (its
    API key from the OS keyring), else None (a local model). ``--model`` always means the local model."""
    from app.engine.remote.engine import RemoteConnection

    if getattr(args, "remote", None):
        return RemoteConnection(args.remote, args.remote_model, os.environ.get("BROOK_REMOTE_API_KEY") or None,
                                max(1, args.remote_concurrency))
    if getattr(args, "model", None):
        return None
    from app.core.connections import Connections, KeyStore

    conns = Connections.load()
    saved = conns.get(conns.active)
    if saved is None:
        return None
    return RemoteConnection(saved.base_url, saved.model, KeyStore().get(saved.name), saved.max_concurrency)


def engine_spec(args: argparse.Namespace, settings: object):
    """What to open at start: ``--scripted``, else a remote server (``remote_connection``), else the GGUF of
    ``--model`` or the settings (a remembered one that is gone falls back to the bundled model, with a notice kept
    on ``args.model_notice`` for the window)."""
    from app.engine.open import EngineSpec

    script = None
    if getattr(args, "scripted_reply", None) is not None:
        script = args.scripted_reply.read_text(encoding="utf-8")  # a missing file: a clear error, see main()
        args.scripted = True
    remote = None if args.scripted else remote_connection(args)
    path = None
    if not args.scripted and remote is None:
        from app.engine.models import choose_model

        path, notice = choose_model(args.model, getattr(settings, "model_path", None))
        if notice:
            log.warning("%s", notice)
            args.model_notice = notice          # shown in the window once it exists
    return EngineSpec(model_path=path, n_ctx=args.n_ctx or getattr(settings, "n_ctx", None),
                      scripted=args.scripted, slow_ms=args.slow_ms, n_threads=getattr(settings, "n_threads", None),
                      n_gpu_layers=getattr(settings, "n_gpu_layers", -1), remote=remote, script=script,
                      in_process=bool(getattr(args, "in_process_engine", False)))


def make_engine(args: argparse.Namespace, settings: object):
    """Open the engine to start with, the way File → Open model does (``app.engine.open.open_engine``). A bad
    ``--model`` file is not refused here: loading it explains what is wrong in the window."""
    from app.engine.open import open_engine

    spec = args.engine_spec = engine_spec(args, settings)     # File → Open model reuses its options
    return open_engine(spec, check=False)



def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from app.logs import setup_logging

    log_file = setup_logging(args.debug)
    enable_faulthandler(log_file)
    install_excepthook()
    if args.export is not None or args.import_file is not None:
        return export_or_import(args)
    if args.download:
        return download(args.download)
    if args.serve:
        from app.core.settings import AppSettings
        from app.server.run import serve_main

        return serve_main(args, lambda: make_engine(args, AppSettings.load()))
    if args.smoke_test and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY") \
            and sys.platform.startswith("linux"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from app.core.settings import AppSettings, data_dir
    from app.engine.base import EngineError
    from app.engine.open import EngineSpec, open_engine

    settings = AppSettings.load()
    try:
        engine = make_engine(args, settings)
    except (EngineError, OSError) as exc:     # OSError: an unreadable --scripted-reply file
        return report_startup_error(str(exc), argv)     # stderr, the log, and a dialog when frozen
    prestart = getattr(engine, "prestart", None)
    if prestart is not None:       # the engine host starts loading the model while Qt and the window start,
        from app.engine.hosted import spare_core

        if spare_core():           # on a core of its own; else the window's load starts it, once the window is up
            prestart()

    from PySide6.QtWidgets import QApplication

    from app.ui.window.feature_check import install as cheap_feature_check

    cheap_feature_check()                     # before the window's modules are imported (see its docstring)
    from app.core.history.store import Store
    from app.core.streaming.stream import tune_switch_interval
    from app.ui.look.icon import app_icon
    from app.ui.window.main_window import MainWindow

    tune_switch_interval()

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Brook")
    app.setDesktopFileName("brook")
    app.setWindowIcon(app_icon())
    # The loop, not Qt, decides when to quit: closing the window ends run(), which then shuts down cleanly.
    app.setQuitOnLastWindowClosed(False)
    from app.ui.look.i18n import install as install_translations
    from app.ui.look.theme import apply_theme

    install_translations(settings.language)
    if settings.theme != "system":
        apply_theme(settings.theme)
    from app.ui.window.gui_thread import collect_on_gui_thread, new_loop

    loop = new_loop(app)
    asyncio.set_event_loop(loop)

    collect_on_gui_thread()      # cyclic garbage (Qt wrappers among it) is freed on this thread only
    # the smoke test checks an install: it must not add its fixed prompt to the user's history
    store = Store(":memory:") if args.smoke_test else Store.open_or_recover(data_dir() / "history.sqlite3")
    window = MainWindow(engine, settings, store)
    if getattr(args, "model_notice", None):
        from app.core.chat.session import NoticeKind

        window.notice(f"⚠ {args.model_notice}", NoticeKind.INFO)
    spec = getattr(args, "engine_spec", None) or EngineSpec(n_ctx=settings.n_ctx)
    window.session.opener = lambda path: open_engine(spec.with_model(path))   # File → Open model, same options
    window.show()
    result = 0

    async def run() -> int:
        from app.ui.window.loop_watch import watch_loop

        # a loop that does not turn for > threshold ms logs one warning with its stack (settings: 0 = off);
        # it pings only while the loop is awake (an idle window is not woken up)
        watchdog = watch_loop(settings.watchdog_threshold_ms)
        window.watchdog = watchdog          # the stream inspector shows its stalls
        closed = asyncio.Event()
        app.lastWindowClosed.connect(closed.set)
        if not window.isVisible():          # closed before the loop ran
            closed.set()
        load = asyncio.ensure_future(window.load_model())
        if args.smoke_test:
            from app.smoke import run_smoke_test

            code = await run_smoke_test(window, load, args)
        else:
            closing = asyncio.ensure_future(closed.wait())
            await asyncio.wait({load, closing}, return_when=asyncio.FIRST_COMPLETED)
            if load.done() and not load.result():
                print(f"brook: {window.session.load_error}", file=sys.stderr)
            await closing
            code = 0
        await window.shutdown()
        if window.watchdog is not None:     # the settings may have changed or stopped it
            window.watchdog.stop()
        return code

    with loop:
        result = loop.run_until_complete(run())
        if _native_work_running(window):
            # A thread is still inside llama.cpp (a model load of a large GGUF, or a prefill that could not be
            # aborted). Closing the loop would wait for it (its executor joins its threads), and letting the
            # interpreter finalise under it crashes (segfault). Everything is saved (the history commits each
            # write; settings are written when changed): leave now, without finalising.
            store.close()
            log.warning("exiting while the model is still busy in a worker thread")
            logging.shutdown()
            for stream in (sys.stdout, sys.stderr):      # None in a windowed Windows exe (no console)
                if stream is not None:
                    stream.flush()
            os._exit(result)
    store.close()
    return result


def download(spec: str) -> int:
    """``--download REPO_ID[:FILE]`` into the models folder (settings' ``models_dir``, else
    ``<data folder>/models``), without Qt. See ``app.engine.hub.cli``."""
    from app.core.settings import AppSettings
    from app.engine.hub.cli import run_download
    from app.engine.library import default_models_dir

    folder = AppSettings.load().models_dir
    return run_download(spec, Path(folder) if folder else default_models_dir())


def export_or_import(args: argparse.Namespace) -> int:
    """``--export DIR`` / ``--import FILE`` on the user's history, without Qt. Exit code 0, or 1 with the reason
    on stderr."""
    from app.core.errors import BrookError
    from app.core.history.export import import_file, write_exports
    from app.core.history.store import Store
    from app.core.settings import data_dir

    store = Store.open_or_recover(data_dir() / "history.sqlite3")
    try:
        if store.problem:
            print(f"brook: {store.problem}", file=sys.stderr)
        if args.import_file is not None:
            print(import_file(store, args.import_file).summary(args.import_file))
        if args.export is not None:
            paths = write_exports(store, args.export)
            print(f"exported {len(store.list_conversations())} chat(s) to " + ", ".join(map(str, paths)))
    except (BrookError, OSError) as exc:
        print(f"brook: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


def _native_work_running(window: MainWindow) -> bool:
    from app.core.streaming.stream import live_streams

    loading = window.session.loading
    return any(s.alive for s in live_streams()) or (loading is not None and not loading.done())


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
