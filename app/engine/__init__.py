"""Where tokens come from: the ``Engine`` protocol (``base``), llama.cpp (``llama``, ``chat_prompt``,
``load_progress``, ``backends``), the GGUF model library (``library``, ``models``, ``gguf_header``), opening an engine
(``open``), the scripted and slow engines, and ``remote/`` and ``hub/``.

The engine host (a local model in its own process): ``hosted`` (``HostedEngine``: when hosts start, load, are
retried in safe mode and end), ``host_link`` (the window's end of one host: process, pipes, deadlines, credits),
``host_crash`` (what a dead host's reply ends with), ``host`` (the child process), ``host_modes`` (the safe mode
remembered per model file and build), ``crash_log`` (a fatal signal's native side in the log: the signal, the
faulting module, the last native frames)."""
