from toolproxy.capture.session import FAILED_WINDOW_S, Attempt, SessionTracker, chain_hashes
from toolproxy.records import Turn

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
    sid, source = t.assign({"x-toolproxy-session": "mine"}, [SYS, USER], CALL)[:2]
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


# --- traffic shapes: identical openings, real retries, reused call ids ------------------

HI = [SYS, Turn(role="user", text="Hi")]
HELLO = Turn(role="assistant", text="Hello! How can I help?")


def at(started: float, ended: float, ok: bool = True, conn: str = "c", peer: str = "127.0.0.1"):
    return Attempt(
        exchange_id=f"x{started}", started=started, ended=ended, ok=ok, connection=conn, peer=peer
    )


def test_identical_openings_minutes_apart_are_separate_sessions():
    t = tracker()
    first = t.assign({}, HI, HELLO, attempt=at(0, 1))
    later = t.assign({}, HI, HELLO, attempt=at(180, 181))
    assert first[:2] == ("s0", "new") and later[:2] == ("s1", "new")


def test_concurrent_identical_openings_are_separate_sessions():
    t = tracker()
    # three agents send the same first request at once; the answers complete in any order
    got = [
        t.assign({}, HI, HELLO, attempt=at(0.001 * i, 0.5 + 0.001 * i, conn=f"c{i}"))
        for i in range(3)
    ]
    assert [g[:2] for g in got] == [("s0", "new"), ("s1", "new"), ("s2", "new")]


def test_each_identical_agent_keeps_its_own_turns():
    t = tracker()
    opening = [t.assign({}, HI, CALL, attempt=at(i, 1 + i / 10, conn=f"c{i}"))[0] for i in range(3)]
    turn2 = [*HI, CALL, RESULT]
    # the same continuation from each agent, on its own connection, in another order
    order = [2, 0, 1]
    got = {i: t.assign({}, turn2, ANSWER, attempt=at(5 + i, 6 + i, conn=f"c{i}"))[0] for i in order}
    assert got == {i: opening[i] for i in range(3)}
    # without connection hints, each session is still continued exactly once
    t = tracker()
    opening = [
        t.assign({}, HI, CALL, attempt=at(i, 1 + i / 10, conn=None, peer=None))[0] for i in range(3)
    ]
    got = [
        t.assign({}, turn2, ANSWER, attempt=at(5 + i, 6 + i, conn=None, peer=None))[0]
        for i in range(3)
    ]
    assert sorted(got) == sorted(opening)


def test_a_resend_after_a_failure_is_a_retry_of_its_session():
    t = tracker()
    t.assign({}, HI, None, attempt=at(0, 0.1, ok=False))  # 429
    assert t.assign({}, HI, HELLO, attempt=at(2, 3))[:2] == ("s0", "retry")
    # a cut stream: a reply was parsed, but it was not complete
    t.assign({}, [*HI, HELLO, Turn(role="user", text="go on")], HELLO, attempt=at(10, 11, ok=False))
    again = t.assign({}, [*HI, HELLO, Turn(role="user", text="go on")], HELLO, attempt=at(12, 13))
    assert again[:2] == ("s0", "retry")


def test_a_failed_request_is_retried_within_the_failed_window_only():
    t = tracker()
    t.assign({}, HI, None, attempt=at(0, 0.1, ok=False))
    assert t.assign({}, HI, HELLO, attempt=at(FAILED_WINDOW_S + 1, FAILED_WINDOW_S + 2))[:2] == (
        "s1",
        "new",
    )


def test_an_answered_request_sent_again_soon_is_a_retry_unless_continued():
    t = tracker()
    t.assign({}, HI, HELLO, attempt=at(0, 1))
    assert t.assign({}, HI, HELLO, attempt=at(2, 3))[:2] == ("s0", "retry")
    t = tracker()
    t.assign({}, HI, HELLO, attempt=at(0, 1))
    t.assign({}, [*HI, HELLO, Turn(role="user", text="more")], HELLO, attempt=at(1.5, 2))
    assert t.assign({}, HI, HELLO, attempt=at(2.5, 3))[:2] == ("s1", "new")
    # the window is configurable; 0 turns the answered case off
    t = SessionTracker(retry_window=0, new_id=iter(["a", "b"]).__next__)
    t.assign({}, HI, HELLO, attempt=at(0, 1))
    assert t.assign({}, HI, HELLO, attempt=at(2, 3))[:2] == ("b", "new")


def test_an_answered_request_from_another_connection_is_another_agent():
    # two agents open identically one right after the other: each has its own connection
    t = tracker()
    t.assign({}, HI, HELLO, attempt=at(0, 0.01, conn="agent-a"))
    assert t.assign({}, HI, HELLO, attempt=at(0.02, 0.03, conn="agent-b"))[:2] == ("s1", "new")
    # after a failure the connection may be gone: a new one still retries
    t.assign({}, [USER], None, attempt=at(1, 1.1, ok=False, conn="agent-a"))
    assert t.assign({}, [USER], CALL, attempt=at(2, 3, conn="agent-a2"))[:2] == ("s2", "retry")


def test_a_resend_from_another_client_address_is_not_a_retry():
    t = tracker()
    t.assign({}, HI, None, attempt=at(0, 0.1, ok=False, peer="10.0.0.1"))
    assert t.assign({}, HI, HELLO, attempt=at(1, 2, peer="10.0.0.2"))[:2] == ("s1", "new")


def test_results_link_to_the_call_they_answer_even_when_ids_are_reused():
    t = tracker()
    call_a = Turn(role="assistant", calls=[("call_1", "get_weather", '{"city":"Paris"}')])
    res_a = Turn(role="tool", text="18C", call_id="call_1")
    call_b = Turn(role="assistant", calls=[("call_1", "get_time", '{"tz":"CET"}')])
    res_b = Turn(role="tool", text="12:00", call_id="call_1")
    first = t.assign({}, [USER], call_a, attempt=at(0, 1))
    t.assign({}, [USER, call_a, res_a], ANSWER, attempt=at(2, 3))
    follow = Turn(role="user", text="and the time?")
    t.assign({}, [USER, call_a, res_a, ANSWER, follow], call_b, attempt=Attempt("ex3", 4, 5))
    last = t.assign(
        {}, [USER, call_a, res_a, ANSWER, follow, call_b, res_b], ANSWER, attempt=at(6, 7)
    )
    assert first.result_links == []
    assert last.result_links == [("x0", 0), ("ex3", 0)]


def test_results_of_a_chained_responses_request_link_to_the_named_response():
    t = tracker()
    t.assign({}, [USER], CALL, response_id="resp_1", attempt=Attempt("ex1"))
    got = t.assign({}, [RESULT], ANSWER, previous_response_id="resp_1", attempt=Attempt("ex2"))
    assert got.result_links == [("ex1", 0)]
    # the same call in full history links by the conversation; one never seen has no link
    assert t.assign({}, [USER, CALL, RESULT], ANSWER).result_links == [("ex1", 0)]
    assert tracker().assign({}, [USER, CALL, RESULT], ANSWER).result_links == [None]


def test_a_legacy_function_result_links_to_the_id_less_call_just_before_it():
    """The legacy functions API: a `function` message names no call id; it answers the
    assistant turn's function_call right before it, never an older turn's."""
    t = tracker()
    call = Turn(role="assistant", calls=[(None, "get_weather", '{"city":"Paris"}')])
    result = Turn(role="tool", text="18C")
    t.assign({}, [USER], call, attempt=at(0, 1))
    got = t.assign({}, [USER, call, result], ANSWER, attempt=at(2, 3))
    assert got.result_links == [("x0", 0)]
    text = Turn(role="assistant", text="Which city?")
    stray = t.assign({}, [USER, call, result, ANSWER, text, result], ANSWER, attempt=at(4, 5))
    assert stray.result_links == [("x0", 0), None]


def test_id_less_results_answer_the_id_less_calls_in_order():
    """A lenient server's calls without ids, answered by results without ids, in order."""
    t = tracker()
    calls = Turn(role="assistant", calls=[(None, "a", "{}"), ("c2", "b", "{}"), (None, "c", "{}")])
    first, second, third = (Turn(role="tool", text=x) for x in "123")
    t.assign({}, [USER], calls, attempt=at(0, 1))
    got = t.assign({}, [USER, calls, first, second, third], ANSWER, attempt=at(2, 3))
    assert got.result_links == [("x0", 0), ("x0", 2), None]


def test_a_stored_conversation_holds_its_requests_and_links_their_results():
    # the Conversations API: the server holds the turns, each request sends the new ones
    t = tracker()
    first = t.assign({}, [USER], CALL, conversation="conv_1", attempt=Attempt(exchange_id="e1"))
    aside = t.assign({}, [USER], CALL, conversation="conv_2", attempt=Attempt(exchange_id="e2"))
    follow = Turn(role="user", text="and tomorrow?")
    t.assign({}, [follow], ANSWER, conversation="conv_1", attempt=Attempt(exchange_id="e3"))
    back = t.assign({}, [RESULT], ANSWER, conversation="conv_1", attempt=Attempt(exchange_id="e4"))
    assert first[:2] == ("s0", "new") and aside[:2] == ("s1", "new")
    assert back[:2] == ("s0", "conversation")
    # the result answers the call of the latest exchange of its conversation that made it
    assert back.result_links == [("e1", 0)]
    assert t.assign({}, [RESULT], None, conversation="conv_2").result_links == [("e2", 0)]
