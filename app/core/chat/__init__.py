"""The chat session (send, stop, regenerate, continue, switch) and its parts: message and session operations,
versions, presets, notes, attachments, the context meter, idle unload."""
