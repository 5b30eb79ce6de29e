from toolproxy.records import Turn
from toolproxy.session import SessionTracker, chain_hashes

SYS = Turn(role="system", text="be brief")
USER = Turn(role="user", text="weather in Paris?")
CALL = Turn(role="assistant", calls=[("call_1", "get_weather", '{"city":"Paris"}')])
RESULT = Turn(role="tool", text="18C", call_id="call_1")
ANSWER = Turn(role="assistant", text="It is 18C.")


def tracker():
    ids = iter(f"s{i}" for i in range(100))
    return SessionTracker(new_id=lambda: next(ids))


def test_chain_hashes_are_prefix_stable():
    a = chain_hashes([SYS, USER, CALL])
    b = chain_hashes([SYS, USER])
    assert a[:2] == b and len(set(a)) == 3


def test_continuation_of_turns_plus_reply_joins_the_session():
    t = tracker()
    first = t.assign({}, [SYS, USER], CALL)
    second = t.assign({}, [SYS, USER, CALL, RESULT], ANSWER)
    assert first[:2] == ("s0", "new")
    assert second[:2] == ("s0", "continued")
    assert first[2] and second[2] and first[2] != second[2]


def test_same_opening_without_the_reply_is_a_new_session():
    t = tracker()
    t.assign({}, [SYS, USER], CALL)
    other = t.assign({}, [SYS, USER, Turn(role="user", text="and Rome?")], None)
    assert other[:2] == ("s1", "new")


def test_exact_resend_is_a_retry_of_the_same_session():
    t = tracker()
    t.assign({}, [SYS, USER], None)  # e.g. the first attempt failed with a 500
    assert t.assign({}, [SYS, USER], CALL)[:2] == ("s0", "retry")


def test_same_turns_to_another_model_is_another_session():
    t = tracker()
    t.assign({}, [SYS, USER], None, model="a")
    assert t.assign({}, [SYS, USER], CALL, model="b")[:2] == ("s1", "new")
    assert t.assign({}, [SYS, USER], CALL, model="a")[:2] == ("s0", "retry")


def test_explicit_header_wins_and_is_remembered():
    t = tracker()
    sid, source, _ = t.assign({"x-toolproxy-session": "mine"}, [SYS, USER], CALL)
    assert (sid, source) == ("mine", "header")
    assert t.assign({}, [SYS, USER, CALL, RESULT], ANSWER)[:2] == ("mine", "continued")


def test_custom_header_name_is_case_insensitive():
    t = SessionTracker(header="X-Run")
    assert t.assign({"x-run": "r1"}, [], None)[:2] == ("r1", "header")


def test_previous_response_id_links_responses_api_turns():
    t = tracker()
    t.assign({}, [USER], CALL, response_id="resp_1")
    nxt = t.assign({}, [RESULT], ANSWER, previous_response_id="resp_1", response_id="resp_2")
    assert nxt[:2] == ("s0", "previous_response")
    other = Turn(role="user", text="other")
    assert t.assign({}, [other], None, previous_response_id="unknown")[:2] == ("s1", "new")


def test_longest_prefix_wins_when_two_sessions_match():
    t = tracker()
    t.assign({}, [USER], CALL)  # s0
    t.assign({"x-toolproxy-session": "deep"}, [USER, CALL, RESULT], ANSWER)
    follow = Turn(role="user", text="thanks")
    assert t.assign({}, [USER, CALL, RESULT, ANSWER, follow], None)[:2] == ("deep", "continued")


def test_no_turns_means_new_session_each_time():
    t = tracker()
    assert t.assign({}, [], None)[:2] == ("s0", "new")
    assert t.assign({}, [], None)[:2] == ("s1", "new")


def test_memory_is_bounded():
    t = SessionTracker(limit=3)
    for i in range(10):
        t.assign({}, [Turn(role="user", text=str(i))], CALL)
    assert len(t._request) == 3 and len(t._after_reply) == 3
