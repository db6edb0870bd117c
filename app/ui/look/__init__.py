"""How the window looks and speaks: stylesheet, light/dark theme, translations and live language switch, the app
icon."""
