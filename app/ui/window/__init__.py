"""The main window and what hangs on it directly: status bar, window state, welcome page, help, error dialog, search
panel, server menu, daily features, load progress."""
