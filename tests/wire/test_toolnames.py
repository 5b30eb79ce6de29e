from hypothesis import given
from hypothesis import strategies as st

from toolproxy.wire.toolnames import bare_names, match_tool, name_matches, same_tool

TOOLS = [
    ("git", "git_status"),
    ("git", "git_log"),
    ("time", "get_current_time"),
    ("weather", "get_weather"),
    ("other", "weather"),
]


def test_name_matches_plain_and_behind_a_known_server():
    assert name_matches("git_status", "git_status")
    assert name_matches("mcp__git__git_status", "git_status", ["git"])
    assert name_matches("git.git_status", "git_status", ["git"])
    assert name_matches("git-git_status", "git_status", ["git"])
    assert name_matches("mcp_git_git_status", "git_status", ["git"])
    assert not name_matches("xgit_status", "git_status", ["git"])


def test_an_arbitrary_underscore_split_is_not_a_server_prefix():
    # `spotify` was never pulled or seen: `spotify_play` is its own tool, not `play`
    assert not name_matches("spotify_play", "play")
    assert not same_tool("spotify_play", "play")
    assert not same_tool("play", "spotify_play")
    assert not name_matches("git-git_status", "git_status")
    # once `spotify` is a known server, its prefix may be taken off
    assert same_tool("spotify_play", "play", ["spotify"])
    assert same_tool("play", "spotify_play", ["spotify"])


def test_claude_code_marker_names_a_server_whatever_it_is_called():
    assert name_matches("mcp__time__get_current_time", "get_current_time")
    assert name_matches("mcp__anything__get_current_time", "get_current_time")
    assert not name_matches("mcp__time", "time")
    assert bare_names("mcp__time__get_current_time") == [
        "mcp__time__get_current_time",
        "get_current_time",
    ]


def test_double_underscore_prefix_needs_a_known_server():
    assert not name_matches("time__get_current_time", "get_current_time")
    assert name_matches("time__get_current_time", "get_current_time", ["time"])


def test_same_tool_rejects_empty_names():
    assert not same_tool(None, "x") and not same_tool("", "x") and not same_tool("x", None)


def test_match_tool_prefers_exact_then_server_then_unique_marked():
    assert match_tool("git_log", TOOLS) == ("git", "git_log")
    assert match_tool("mcp__time__get_current_time", TOOLS) == ("time", "get_current_time")
    assert match_tool("time__get_current_time", TOOLS) == ("time", "get_current_time")
    assert match_tool("mcp__wx__get_weather", TOOLS) == ("weather", "get_weather")
    assert match_tool("myagent_get_weather", TOOLS) is None
    assert match_tool("unknown_tool", TOOLS) is None


def test_ambiguous_names_are_not_guessed():
    tools = [("a", "search"), ("b", "search")]
    assert match_tool("search", tools) is None
    assert match_tool("x_search", tools) is None
    assert match_tool("mcp__x__search", tools) is None
    assert match_tool("a__search", tools) == ("a", "search")


parts = st.sampled_from(["git", "mcp", "time", "status", "git_status", "a"])
seps = st.sampled_from(["__", ".", "_", "-", "/", ":"])
names = st.lists(st.tuples(parts, seps), min_size=1, max_size=4).map(
    lambda pieces: "".join(p + s for p, s in pieces[:-1]) + pieces[-1][0]
)


@given(names, names, st.lists(st.sampled_from(["git", "time", "mcp", "a"]), max_size=2))
def test_same_tool_is_either_name_behind_the_others_prefix(a: str, b: str, servers: list[str]):
    # same_tool skips the prefix walk when neither name ends with the other: the answer
    # must be the rule's own
    rule = a == b or name_matches(a, b, servers) or name_matches(b, a, servers)
    assert same_tool(a, b, servers) == rule
