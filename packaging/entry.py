"""The frozen app's entry point (``packaging/brook.spec``): ``app.launcher.main`` behind ``app.crash``'s guard,
so a start-up failure of the double-clicked app is logged and shown in a dialog instead of vanishing."""

from app.crash import guarded_main

if __name__ == "__main__":
    raise SystemExit(guarded_main())
