"""The message list: the virtual chat view and its widget pool, a message widget, its keys, menu and actions, the
markdown view, formulas, and the render tick (coalescer)."""
