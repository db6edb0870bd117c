"""GGUF models from the Hugging Face Hub: search (``client``), resumable SHA-256-verified downloads
(``download``), whether a file fits this machine (``fit``), the token for gated repos (``tokens``) and
``python main.py --download`` (``cli``). No Qt: the window's dialog is ``app.ui.dialogs.model_hub``."""
