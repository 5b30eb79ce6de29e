from toolproxy.capture.loopback import is_wide, shown


def test_wildcards_of_either_family_are_wide_and_a_named_host_is_not():
    assert is_wide([("0.0.0.0", 8080)])
    assert is_wide([("127.0.0.1", 8080), ("::", 8080)])
    assert is_wide([("", 8080)])
    assert not is_wide([("127.0.0.1", 8080), ("::1", 8080)])
    assert not is_wide([])


def test_addresses_are_named_as_mitmproxy_logs_them_once_each():
    assert shown([("0.0.0.0", 8080), ("::", 8080, 0, 0)]) == "*:8080"
    assert shown([("127.0.0.1", 8080)]) == "127.0.0.1:8080"
    assert shown([("::", 8080), ("127.0.0.1", 9090)]) == "*:8080, 127.0.0.1:9090"
    assert shown([]) == "nothing"
