"""``python main.py --download REPO_ID[:FILE]`` as a process against the fake Hub: progress bar, exit codes,
resume after a cut, a wrong hash refused, a gated repo explained; and the downloaded real model loads and
answers."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.hub.cli import parse_spec, run_download
from tests.helpers import ROOT, run
from tests.helpers.fake_hub import BAD_HASH, GATED, SMOL, TINY, TOKEN, HubFile, add_smol, gguf_bytes


def _brook(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=240)


def test_download_on_the_command_line(fake_hub, tmp_path):
    r = _brook("--download", f"{TINY}:tiny-Q8_0.gguf")
    assert r.returncode == 0, r.stderr
    saved = Path(r.stdout.strip())
    assert saved == tmp_path / "data" / "models" / "brook-test" / "tiny-GGUF" / "tiny-Q8_0.gguf"   # BROOK_DATA_DIR
    assert saved.read_bytes() == fake_hub.repos[TINY].file("tiny-Q8_0.gguf").data
    assert "100%" in r.stderr and "5.2/5.2 MB" in r.stderr


def test_a_cut_fails_then_the_same_command_resumes(fake_hub, tmp_path):
    fake_hub.cut(1_000_000, times=4)              # more cuts than the downloader's 3 retries
    r = _brook("--download", f"{TINY}:tiny-Q8_0.gguf")
    assert r.returncode == 1
    assert "connection broke" in r.stderr
    part = tmp_path / "data" / "models" / "brook-test" / "tiny-GGUF" / "tiny-Q8_0.gguf.part"
    assert part.stat().st_size == 4_000_000
    r = _brook("--download", f"{TINY}:tiny-Q8_0.gguf")
    assert r.returncode == 0, r.stderr
    assert "resuming tiny-Q8_0.gguf at 4.0 MB" in r.stderr
    assert fake_hub.ranges("tiny-Q8_0")[-1] == "bytes=4000000-"
    assert not part.exists()


def test_wrong_hash_exits_1_and_leaves_no_file(fake_hub, tmp_path):
    r = _brook("--download", BAD_HASH)
    assert r.returncode == 1
    assert "SHA-256" in r.stderr
    assert list((tmp_path / "data" / "models").rglob("*.gguf*")) == []


def test_gated_repo_explained_then_downloaded_with_a_token(fake_hub):
    r = _brook("--download", GATED)
    assert r.returncode == 1 and "401" in r.stderr and "token" in r.stderr
    r = _brook("--download", GATED, env_extra={"HF_TOKEN": TOKEN})
    assert r.returncode == 0, r.stderr


def test_bad_spec_and_missing_repo(fake_hub):
    r = _brook("--download", "not-a-repo-id")
    assert r.returncode == 1 and "OWNER/NAME" in r.stderr
    r = _brook("--download", "nobody/nothing-GGUF")
    assert r.returncode == 1 and "404" in r.stderr


def test_several_files_and_none_named_lists_them(fake_hub, tmp_path):
    fake_hub.repos[TINY].files = [HubFile("tiny-Q8_0.gguf", gguf_bytes(1000, 5)),
                                  HubFile("tiny-F16.gguf", gguf_bytes(2000, 6))]
    err = io.StringIO()
    assert run_download(TINY, tmp_path / "models", io.StringIO(), err) == 2
    assert "tiny-Q8_0.gguf" in err.getvalue() and "tiny-F16.gguf" in err.getvalue()


def test_parse_spec():
    assert parse_spec("a/b") == ("a/b", None)
    assert parse_spec("a/b:sub/c.gguf") == ("a/b", "sub/c.gguf")
    with pytest.raises(ValueError):
        parse_spec("a/b/c")


def test_version():
    r = _brook("--version")
    assert r.returncode == 0
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert r.stdout.strip() == f"brook {version}"


@pytest.mark.model
def test_downloaded_model_loads_and_answers(fake_hub, tmp_path, bundled_model):
    from app.core.conversation import Conversation, Message, MessageStatus, Role
    from app.core.streaming.generation import generate
    from app.core.streaming.scheduler import FairScheduler
    from app.core.types import GenerationParams
    from app.engine.library import read_model_info
    from app.engine.llama import LlamaEngine

    add_smol(fake_hub, bundled_model)
    out = io.StringIO()
    assert run_download(SMOL, tmp_path / "models", out, io.StringIO()) == 0
    path = Path(out.getvalue().strip())
    info = read_model_info(path)
    assert info.broken is None and info.architecture == "llama"
    engine = LlamaEngine(path, n_ctx=512)
    engine.load()
    try:
        c = Conversation()
        c.add(Message(Role.USER, "Say hello."))
        reply = c.add(Message(Role.ASSISTANT))
        run(generate(engine, FairScheduler(), c, reply, GenerationParams(max_tokens=16, seed=1)))
        assert reply.status is MessageStatus.DONE and reply.text.strip()
    finally:
        engine.unload()
