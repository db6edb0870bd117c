"""The prompt is a valid alternation whatever was stopped, failed, deleted or edited (issue 10, item 2).

The whole kind: any sequence of user / assistant / system messages, replies in any final status with or without
text, messages deleted anywhere. The prompt must be: [system], user, (assistant, user)* — what a strict chat
template (Mistral, Gemma: "roles must alternate") accepts — and it must end with the question being answered.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.conversation import Conversation, Message, MessageStatus, Role


def assert_alternates(prompt: list[dict[str, str]]) -> None:
    roles = [m["role"] for m in prompt]
    if roles and roles[0] == "system":
        roles = roles[1:]
    assert "system" not in roles, prompt
    assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2), prompt


def test_stop_before_the_first_token_then_send_again() -> None:
    """The input of the issue: 'Tell me about rivers', Stop before any text, 'Say hello'."""
    c = Conversation(system_prompt="Be brief.")
    c.add(Message(Role.USER, "Tell me about rivers."))
    c.add(Message(Role.ASSISTANT, "", status=MessageStatus.STOPPED))
    c.add(Message(Role.USER, "Say hello"))
    reply = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    prompt = c.prompt_messages(upto=reply)
    assert prompt == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello"}]
    assert c.unanswered(c.messages[1]) and not c.unanswered(reply)
    assert c.question_of(c.messages[1]) is c.messages[0]


def test_partial_stopped_reply_is_kept() -> None:
    c = Conversation()
    c.add(Message(Role.USER, "Count."))
    c.add(Message(Role.ASSISTANT, "1, 2,", status=MessageStatus.STOPPED))
    c.add(Message(Role.USER, "Go on."))
    assert [m["content"] for m in c.prompt_messages()] == ["Count.", "1, 2,", "Go on."]


def test_deleted_question_joins_the_replies_and_leading_replies_go() -> None:
    c = Conversation()
    c.add(Message(Role.ASSISTANT, "Hello! How can I help?"))
    c.add(Message(Role.USER, "Q1"))
    c.add(Message(Role.ASSISTANT, "A1"))
    c.add(Message(Role.ASSISTANT, "A2"))        # the question between them was deleted
    c.add(Message(Role.USER, "Q3"))
    assert c.prompt_messages() == [{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1\n\nA2"},
                                   {"role": "user", "content": "Q3"}]


_statuses = st.sampled_from(list(MessageStatus))
_message = st.one_of(
    st.builds(lambda t: Message(Role.USER, t), st.text(min_size=1, max_size=5)),
    st.builds(lambda t, s: Message(Role.ASSISTANT, t, status=s), st.text(max_size=5), _statuses),
    st.builds(lambda t: Message(Role.SYSTEM, t), st.text(max_size=5)),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_message, max_size=12), st.booleans(), st.lists(st.integers(0, 11), max_size=4))
def test_any_history_gives_a_valid_alternation(messages: list[Message], system: bool, deleted: list[int]) -> None:
    c = Conversation(system_prompt="sys" if system else None)
    c.messages = list(messages)
    for i in deleted:                                # deleting messages anywhere
        if i < len(c.messages):
            del c.messages[i]
    assert_alternates(c.prompt_messages())
    c.add(Message(Role.USER, "new question"))
    reply = c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    prompt = c.prompt_messages(upto=reply)
    assert_alternates(prompt)
    assert prompt[-1] == {"role": "user", "content": "new question"}   # the newest question is answered


def test_a_reply_still_reading_the_prompt_keeps_its_question() -> None:
    """The context meter counts the chat while its first reply reads the prompt (issue 24: it read 0): a reply
    with no text yet that has not ended is not an unanswered question."""
    for status in (MessageStatus.WAITING, MessageStatus.PREFILL, MessageStatus.GENERATING):
        c = Conversation()
        c.add(Message(Role.USER, "How long is the Yangtze?"))
        c.add(Message(Role.ASSISTANT, "", status=status))
        assert c.prompt_messages() == [{"role": "user", "content": "How long is the Yangtze?"}], status
    c = Conversation()
    c.add(Message(Role.USER, "How long is the Yangtze?"))
    c.add(Message(Role.ASSISTANT, "", status=MessageStatus.STOPPED))
    assert c.prompt_messages() == []                       # ended without text: left out, as before
