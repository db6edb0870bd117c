"""Remote engines: an OpenAI-compatible server (llama-server, vLLM, Ollama) over HTTP + SSE (``engine``) and its token
counting (``tokens``)."""
