from toolproxy.toolnames import match_tool, name_matches

TOOLS = [
    ("git", "git_status"),
    ("git", "git_log"),
    ("time", "get_current_time"),
    ("weather", "get_weather"),
    ("other", "weather"),
]


def test_name_matches_plain_and_prefixed():
    assert name_matches("git_status", "git_status")
    assert name_matches("mcp__git__git_status", "git_status", "git")
    assert name_matches("git.git_status", "git_status", "git")
    assert name_matches("git-git_status", "git_status")
    assert not name_matches("mcp__time__git_status", "git_status", "git")
    assert not name_matches("xgit_status", "git_status")


def test_match_tool_prefers_exact_then_server_then_unique():
    assert match_tool("git_log", TOOLS) == ("git", "git_log")
    assert match_tool("mcp__time__get_current_time", TOOLS) == ("time", "get_current_time")
    assert match_tool("myagent_get_weather", TOOLS) == ("weather", "get_weather")
    assert match_tool("unknown_tool", TOOLS) is None


def test_ambiguous_names_are_not_guessed():
    tools = [("a", "search"), ("b", "search")]
    assert match_tool("search", tools) is None
    assert match_tool("x_search", tools) is None
    assert match_tool("a__search", tools) == ("a", "search")
