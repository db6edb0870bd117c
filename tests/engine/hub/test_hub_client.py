"""Searching the Hub and listing a repo's GGUF files through huggingface_hub, against the fake Hub on loopback."""

from __future__ import annotations

import pytest

from app.engine.hub.client import (
    HubAuthError,
    HubClient,
    HubNotFoundError,
    endpoint,
    pick_default,
    quantization_of,
)
from tests.helpers.fake_hub import BAD_HASH, GATED, TINY, TOKEN


def test_endpoint_comes_from_hf_endpoint(fake_hub, monkeypatch):
    assert endpoint() == fake_hub.endpoint
    monkeypatch.delenv("HF_ENDPOINT")
    assert endpoint() == "https://huggingface.co"


def test_search_lists_gguf_repos_most_downloaded_first(fake_hub):
    hits = HubClient().search("brook-test")
    assert [h.repo_id for h in hits] == [TINY, GATED, BAD_HASH]
    assert hits[0].downloads == 500 and hits[0].likes == 7
    assert hits[1].gated and not hits[0].gated
    assert HubClient().search("not-a-gguf") == []          # a safetensors repo is not listed
    assert fake_hub.requests[0]["path"] == "/api/models"


def test_files_have_sizes_hashes_and_quantizations(fake_hub):
    files = HubClient().files(TINY)
    assert [f.path for f in files] == ["tiny-Q4_K_M.gguf", "tiny-Q8_0.gguf"]   # README left out; by size
    served = fake_hub.repos[TINY].file("tiny-Q4_K_M.gguf")
    assert files[0].size_bytes == 3 << 20 and files[0].sha256 == served.sha256
    assert [f.quantization for f in files] == ["Q4_K_M", "Q8_0"]
    assert pick_default(files) is files[0]


def test_gated_repo_needs_a_token_and_says_so(fake_hub):
    with pytest.raises(HubAuthError, match="token") as err:
        HubClient().files(GATED)
    assert "401" in str(err.value)
    with pytest.raises(HubAuthError):
        HubClient("hf_wrong").files(GATED)
    assert [f.path for f in HubClient(TOKEN).files(GATED)] == ["gated-Q4_0.gguf"]
    assert fake_hub.requests[-1]["authorization"] == f"Bearer {TOKEN}"


def test_missing_repo_and_file_are_404s(fake_hub):
    with pytest.raises(HubNotFoundError, match="404"):
        HubClient().files("nobody/nothing-GGUF")
    with pytest.raises(HubNotFoundError, match="no GGUF file named"):
        HubClient().file(TINY, "tiny-Q2_K.gguf")


def test_one_429_is_waited_out(fake_hub):
    fake_hub.rate_limit = 1
    assert [h.repo_id for h in HubClient().search("tiny")] == [TINY]
    assert len([r for r in fake_hub.requests if r["path"] == "/api/models"]) == 2


@pytest.mark.parametrize(("name", "quant"), [
    ("Llama-3.2-1B-Instruct-Q4_K_M.gguf", "Q4_K_M"), ("qwen2.5-7b-instruct-iq2_xs.gguf", "IQ2_XS"),
    ("model.Q8_0.gguf", "Q8_0"), ("phi-3-mini-4k-instruct-fp16.gguf", None), ("gemma-2b-F16.gguf", "F16"),
    ("m-BF16.gguf", "BF16"), ("sub/dir/x-Q5_K_S-00001-of-00002.gguf", "Q5_K_S"), ("plain.gguf", None),
])
def test_quantization_from_the_file_name(name, quant):
    assert quantization_of(name) == quant
