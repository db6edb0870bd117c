"""Run Brook from a source checkout: ``python main.py`` (see ``python main.py --help``)."""

from app.launcher import main

if __name__ == "__main__":
    raise SystemExit(main())
