"""Scripts as data, key selection, and playback order."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from toolproxy.scripted.script import (
    DEFAULT_KEY,
    ECHO_REPLY,
    KEY_HEADER,
    Playback,
    Reply,
    Script,
    ScriptedCall,
    select_key,
)


def test_of_builds_a_script_for_one_key() -> None:
    script = Script.of(Reply(text="a"), Reply(text="b"), key="k", cycle=True)
    assert list(script.replies) == ["k"]
    assert [r.text for r in script.replies["k"]] == ["a", "b"]
    assert script.cycle is True


def test_a_single_reply_per_key_is_wrapped_in_a_list() -> None:
    script = Script.model_validate({"replies": {"k": {"text": "only"}}})
    assert script.replies["k"] == [Reply(text="only")]


def test_unknown_fields_and_wrong_shapes_are_refused() -> None:
    with pytest.raises(ValidationError):
        Reply.model_validate({"txet": "typo"})
    with pytest.raises(ValidationError):
        Script.model_validate({"replies": [{"text": "not keyed"}]})


def test_call_arguments_may_be_a_dict_or_raw_text() -> None:
    assert ScriptedCall(name="f").arguments == {}
    assert ScriptedCall(name="f", arguments='{"a":').arguments == '{"a":'


def test_load_reads_json_and_yaml(tmp_path: Path) -> None:
    data = {
        "deterministic": True,
        "replies": {"m": [{"text": "hi"}, {"tool_calls": [{"name": "f", "arguments": {"x": 1}}]}]},
    }
    json_path = tmp_path / "s.json"
    json_path.write_text(json.dumps(data))
    yaml_path = tmp_path / "s.yaml"
    yaml_path.write_text(
        "deterministic: true\n"
        "replies:\n"
        "  m:\n"
        "    - text: hi\n"
        "    - tool_calls: [{name: f, arguments: {x: 1}}]\n"
    )
    assert Script.load(json_path) == Script.load(yaml_path) == Script.model_validate(data)
    assert Script.load(yaml_path).replies["m"][1].tool_calls[0].arguments == {"x": 1}


def test_load_of_an_empty_yaml_file_is_an_empty_script(tmp_path: Path) -> None:
    path = tmp_path / "empty.yml"
    path.write_text("")
    assert Script.load(path) == Script()


def test_key_comes_from_header_then_model_then_default() -> None:
    assert select_key({KEY_HEADER: "h"}, {"model": "m"}) == "h"
    assert select_key({}, {"model": "m"}) == "m"
    assert select_key({}, {"model": ""}) == DEFAULT_KEY
    assert select_key({}, {"model": 3}) == DEFAULT_KEY
    assert select_key({}, None) == DEFAULT_KEY


def test_replies_play_in_order_and_the_last_repeats() -> None:
    playback = Playback(Script.of(Reply(text="1"), Reply(text="2"), key="k"))
    played = [playback.next_reply("k") for _ in range(4)]
    assert [(key, n, r.text) for key, n, r in played] == [
        ("k", 1, "1"),
        ("k", 2, "2"),
        ("k", 3, "2"),
        ("k", 4, "2"),
    ]


def test_cycle_loops_the_replies() -> None:
    playback = Playback(Script.of(Reply(text="1"), Reply(text="2"), cycle=True))
    assert [playback.next_reply("x")[2].text for _ in range(5)] == ["1", "2", "1", "2", "1"]


def test_unknown_key_falls_back_to_default_else_echo() -> None:
    script = Script(replies={"k": [Reply(text="k")], DEFAULT_KEY: [Reply(text="d")]})
    assert Playback(script).next_reply("other")[:2] == (DEFAULT_KEY, 1)
    assert Playback(script).next_reply("k")[2].text == "k"
    key, play, reply = Playback(Script.of(Reply(text="k"), key="k")).next_reply("other")
    assert (key, play, reply) == ("other", 1, ECHO_REPLY)
    assert ECHO_REPLY.text == "ok"


def test_an_empty_reply_list_echoes() -> None:
    assert Playback(Script(replies={"k": []})).next_reply("k")[2] == ECHO_REPLY


def test_reset_and_replace_start_over() -> None:
    playback = Playback(Script.of(Reply(text="1"), Reply(text="2")))
    playback.next_reply("k")
    playback.reset()
    assert playback.next_reply("k")[1:] == (1, Reply(text="1"))
    replacement = Script.of(Reply(text="new"))
    playback.replace(replacement)
    assert playback.script is replacement
    assert playback.next_reply("k")[1:] == (1, Reply(text="new"))


def test_play_numbers_are_unique_under_concurrency() -> None:
    playback = Playback(Script.of(Reply(text="x")))
    seen: list[int] = []
    lock = threading.Lock()

    def play() -> None:
        for _ in range(200):
            number = playback.next_reply("k")[1]
            with lock:
                seen.append(number)

    threads = [threading.Thread(target=play) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == list(range(1, 1601))


def test_a_script_that_cannot_be_used_says_why_in_one_line(tmp_path):
    import pytest

    from toolproxy.scripted.script import Script, ScriptError

    broken = tmp_path / "broken.yaml"
    broken.write_text("replies: [\n")
    with pytest.raises(ScriptError, match=r"the script .*broken.yaml is not valid: while parsing"):
        Script.load(broken)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("replies: {m: [{colour: red}]}\n")
    with pytest.raises(ScriptError, match=r"replies\.m\.0\.colour: Extra inputs are not permitted"):
        Script.load(wrong)
    with pytest.raises(ScriptError, match=r"cannot read the script .*nowhere.yaml"):
        Script.load(tmp_path / "nowhere.yaml")


def test_the_last_user_message_of_each_wire_format() -> None:
    from toolproxy.scripted.script import last_user_text, prompt_key

    chat = {
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
            {"role": "tool", "content": "r"},
        ]
    }
    assert last_user_text(chat) == "c"
    parts = {
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "x"}, {"type": "image"}, {"text": "y"}],
            }
        ]
    }
    assert last_user_text(parts) == "xy"  # Anthropic blocks, chat parts
    assert last_user_text({"input": "plain"}) == "plain"  # Responses
    assert (
        last_user_text(
            {"input": [{"role": "user", "content": [{"type": "input_text", "text": "q"}]}]}
        )
        == "q"
    )
    assert last_user_text({"messages": [{"role": "system", "content": "s"}]}) is None
    assert last_user_text("not a body") is None
    assert prompt_key("m", chat) == "m | c" and prompt_key("m", {}) is None
