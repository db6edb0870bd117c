"""``python -m app.bench NAME [args]``: run the benchmark ``app.bench.NAME`` (its ``main(argv) -> int``).

Each benchmark prints one JSON object as its last line of output (ratios measured against a baseline in the
same run, because these machines are shared and noisy).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys


def _names() -> list[str]:
    import app.bench
    return sorted(m.name for m in pkgutil.iter_modules(app.bench.__path__) if not m.name.startswith("_"))


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stderr.write("usage: python -m app.bench NAME [args]\nbenchmarks: " + ", ".join(_names()) + "\n")
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name.startswith("_") or not name.isidentifier():
        sys.stderr.write(f"no such benchmark: {name}\n")
        return 2
    try:
        module = importlib.import_module(f"app.bench.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"app.bench.{name}":
            sys.stderr.write(f"no such benchmark: {name} (have: {', '.join(_names())})\n")
            return 2
        raise
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
