"""The chat session (send, stop, regenerate, continue, switch: ``session``; loading and switching its engine:
``model_loading``; what it tells the view: ``listener``) and its parts: message and session operations, versions,
presets, notes, attachments, the context meter, idle unload."""
