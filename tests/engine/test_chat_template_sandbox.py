"""Regression: a GGUF's chat template runs in Jinja's sandbox; every code-execution attempt is refused with a
``ChatTemplateError`` and runs nothing (the bundled model's vocabulary, a hostile template)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.engine.base import EngineError
from app.engine.chat_prompt import ChatPrompt


@pytest.fixture(scope="module")
def vocab(bundled_model: Path):  # type: ignore[no-untyped-def]
    from app.engine.load_progress import install_model_params

    install_model_params()
    import llama_cpp

    return llama_cpp.Llama(str(bundled_model), vocab_only=True, verbose=False)


def _attacks(marker: Path) -> list[str]:
    touch = f"'touch {marker}'"
    return [
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ cycler.__init__.__globals__.os.system(" + touch + ") }}",
        "{{ joiner.__init__.__globals__.os.popen(" + touch + ").read() }}",
        "{{ namespace.__init__.__globals__['os'].system(" + touch + ") }}",
        "{{ lipsum.__globals__['os'].system(" + touch + ") }}",
        "{{ messages.__class__.__base__.__subclasses__() }}",
        "{% for c in ().__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}",
        "{{ raise_exception.__globals__['__builtins__']['open']('" + str(marker) + "', 'w') }}",
        "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system(" + touch + ") }}",
        "{{ (messages|attr('__class__')).__mro__ }}",
        "{{ '{0.__class__.__mro__}'.format('') }}",
    ]


@pytest.mark.parametrize("i", range(11))
def test_a_template_that_reaches_for_python_is_refused_and_runs_nothing(vocab, tmp_path: Path, i: int) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "pwned"
    prompt = ChatPrompt(vocab, template=_attacks(marker)[i])
    with pytest.raises(EngineError, match="chat template refused this chat: access to attribute"):
        prompt.build([{"role": "user", "content": "hi"}])
    assert not marker.exists()
