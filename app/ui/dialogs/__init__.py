"""Dialogs: settings, a chat's settings, the sampling form, a remote connection, the model library."""
