"""Writing a message: the prompt box, the attachments bar, the context meter."""
