"""The frozen app's entry point (``packaging/brook.spec``): ``app.launcher.main`` behind ``app.crash``'s guard,
so a start-up failure of the double-clicked app is logged and shown in a dialog instead of vanishing."""

import multiprocessing
import sys

from app.crash import guarded_main


def _main(argv: list[str]) -> int:
    from app.launcher import main  # inside the guard: a broken bundle's ImportError is reported too

    return main(argv)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--engine-host"]:      # an engine host (``app.engine.host_link.start_host``)
        from app.engine.host import child_main

        child_main(sys.argv[2:4])
    # the highlighter's worker processes re-run this executable: PyInstaller's freeze_support dispatches them
    # (and multiprocessing's resource tracker) before Brook's own command line is parsed
    multiprocessing.freeze_support()
    raise SystemExit(guarded_main(_main))
