"""Brook: a desktop chat app for local large language models."""
__version__ = "0.1.0"
