"""Provenance: SHA-256 hashed once in the background and cached by path + size + mtime; every reply records the
seed it was made with and the engine's model-file facts."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path
from typing import Any

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.streaming.generation import generate
from app.core.streaming.provenance import HashCache, describe, model_file_facts
from app.core.streaming.scheduler import FairScheduler
from app.core.types import GenerationParams
from app.engine.scripted import ScriptedEngine


def test_hash_is_computed_once_in_the_background_and_cached_until_the_file_changes(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(os.urandom(3 << 20) + b"tail")
    cache = HashCache(tmp_path / "hashes.json")
    assert cache.get(model) is None
    done: list[str] = []
    t = cache.start(model, lambda _p, h: done.append(h))
    assert t is not None
    t.join()
    want = hashlib.sha256(model.read_bytes()).hexdigest()
    assert cache.get(model) == want and done == [want]
    assert cache.start(model) is None                       # known: not hashed again
    assert HashCache(tmp_path / "hashes.json").get(model) == want      # kept on disk
    with model.open("ab") as fh:                            # the file changed: the old hash no longer applies
        fh.write(b"more")
    assert cache.get(model) is None
    t2 = cache.start(model)
    assert t2 is not None
    t2.join()
    assert cache.get(model) == hashlib.sha256(model.read_bytes()).hexdigest()


def test_a_corrupt_cache_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "hashes.json").write_text("[1, 2", "utf-8")
    cache = HashCache(tmp_path / "hashes.json")
    assert cache.get(tmp_path / "missing.gguf") is None
    assert cache.start(tmp_path / "missing.gguf") is None


class _FileEngine(ScriptedEngine):
    """A scripted engine that reports model-file facts, as LlamaEngine does."""

    def __init__(self, path: Path, cache: HashCache) -> None:
        super().__init__("Hello there.", tokens_per_s=0)
        self.path, self.cache = path, cache

    def provenance(self) -> dict[str, Any]:
        return model_file_facts(self.path, self.cache, "GGUF tokenizer.chat_template")


def test_every_reply_records_seed_and_model_file_facts(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(100))
    cache = HashCache(tmp_path / "h.json")
    thread = cache.start(model)
    assert thread is not None
    thread.join()
    engine = _FileEngine(model, cache)
    engine.load()

    async def one(params: GenerationParams) -> Message:
        conv = Conversation()
        conv.add(Message(Role.USER, "hi"))
        reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
        return await generate(engine, FairScheduler(1), conv, reply, params)

    random_seed = asyncio.run(one(GenerationParams()))
    fixed = asyncio.run(one(GenerationParams(seed=7, temperature=0.2)))
    assert isinstance(random_seed.params["seed"], int) and random_seed.provenance["seed_random"] is True
    assert fixed.params["seed"] == 7 and "seed_random" not in fixed.provenance
    assert fixed.provenance["model_file"] == "tiny.gguf" and fixed.provenance["model_bytes"] == 104
    assert fixed.provenance["model_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    rows = dict(describe(fixed))
    assert rows["seed"] == "7" and rows["temperature"] == "0.2" and rows["stop reason"] == "stop"
    assert rows["chat template"] == "GGUF tokenizer.chat_template" and rows["model file"] == "tiny.gguf"
    assert rows["SHA-256"] == fixed.provenance["model_sha256"]
    assert dict(describe(random_seed))["seed"].endswith("(random)")
