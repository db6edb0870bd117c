"""Provenance: SHA-256 hashed once in the background and cached by path + size + mtime; every reply records the
seed it was made with, the engine's model-file facts and the device the model ran on."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.schema import clean_provenance
from app.core.streaming.generation import generate
from app.core.streaming.provenance import HashCache, describe, device_label, device_name, model_file_facts
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


LAVAPIPE = {"backend": "Vulkan0", "device": "llvmpipe (LLVM 15.0.6, 256 bits)", "gpu_layers": 31, "n_layers": 30,
            "cpu_variant": "haswell"}


def test_the_device_label_names_the_gpu_and_its_layers_or_the_cpu_and_its_variant() -> None:
    assert device_label(LAVAPIPE) == "llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan0), 31 of 31 layers"
    assert device_name(LAVAPIPE) == "llvmpipe (LLVM 15.0.6, 256 bits)"
    partly = {**LAVAPIPE, "gpu_layers": 12}
    assert device_label(partly) == "llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan0), 12 of 31 layers"
    cpu = {"backend": "CPU", "device": "Intel Xeon", "gpu_layers": 0, "n_layers": 30, "cpu_variant": "haswell"}
    assert device_label(cpu) == "CPU (haswell)" and device_name(cpu) == "CPU"
    assert device_label({**cpu, "cpu_variant": "built-in"}) == "CPU"         # a native build: no variant
    assert device_label({**LAVAPIPE, "gpu_layers": 0}) == "CPU (haswell)"    # a GPU device with no layers on it
    assert device_label({}) is None and device_name({"model_file": "m.gguf"}) is None     # a remote engine


class _LazyDeviceEngine(_FileEngine):
    """Reports what it runs on once loaded, as LlamaEngine does; loads only when its first reply starts."""

    def __init__(self, path: Path, cache: HashCache, facts: dict[str, Any]) -> None:
        super().__init__(path, cache)
        self.facts = facts

    def runtime(self) -> dict[str, Any]:
        return dict(self.facts, extra="not kept") if self.loaded else {}

    def stream(self, messages, params, stop):  # type: ignore[no-untyped-def]
        if not self.loaded:
            self.load()
        return super().stream(messages, params, stop)


def test_a_reply_records_the_device_even_when_the_model_loads_for_it(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(100))
    engine = _LazyDeviceEngine(model, HashCache(tmp_path / "h.json"), LAVAPIPE)
    conv = Conversation()
    conv.add(Message(Role.USER, "hi"))
    reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    asyncio.run(generate(engine, FairScheduler(1), conv, reply, GenerationParams(seed=3)))
    assert reply.status is MessageStatus.DONE
    assert {k: reply.provenance[k] for k in LAVAPIPE} == LAVAPIPE and "extra" not in reply.provenance
    assert dict(describe(reply))["device"] == "llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan0), 31 of 31 layers"
    stored = clean_provenance(json.loads(json.dumps(reply.provenance)))       # what the history reads back
    assert stored is not None and {k: stored[k] for k in LAVAPIPE} == LAVAPIPE
    odd = clean_provenance({**LAVAPIPE, "gpu_layers": -2})        # a layer count below 0 is dropped, not kept
    assert odd is not None and "gpu_layers" not in odd and odd["device"] == LAVAPIPE["device"]


@pytest.mark.model
def test_a_reply_of_the_real_model_records_the_cpu_it_ran_on(bundled_model: Path) -> None:
    from app.engine.llama import LlamaEngine

    engine = LlamaEngine(bundled_model, n_ctx=512)
    engine.load()
    try:
        conv = Conversation()
        conv.add(Message(Role.USER, "Say hi."))
        reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
        asyncio.run(generate(engine, FairScheduler(1), conv, reply, GenerationParams(seed=1, max_tokens=8)))
    finally:
        engine.unload()
    prov = reply.provenance
    assert reply.status is MessageStatus.DONE and reply.text
    assert prov["backend"] == "CPU" and prov["gpu_layers"] == 0 and prov["n_layers"] == 30
    assert prov["cpu_variant"] == "built-in" and prov["device"]           # the installed (native) build
    assert dict(describe(reply))["device"] == "CPU"
