"""Where tokens come from: the ``Engine`` protocol (``base``), llama.cpp (``llama``, ``chat_prompt``,
``load_progress``), the GGUF model library (``library``, ``models``), opening an engine (``open``), the scripted and
slow engines, and ``remote/``."""
