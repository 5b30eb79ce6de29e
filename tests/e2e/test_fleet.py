"""A fleet: two real proxies record into captures of their own (two hosts' disks), and
`toolproxy compact --from` merges both into one central catalog, while one of them goes
on recording; every exchange lands there exactly once, however often the merge runs."""

from __future__ import annotations

import openai

from toolproxy.capture.proxy import ProxySpec, RunningProxy, free_port
from toolproxy.cli.main import main
from toolproxy.scripted import Reply, Script, ScriptedCall

from .conftest import assert_clean, rows, wait_rows

CALL = Reply(tool_calls=[ScriptedCall(name="get_weather", arguments={"city": "Paris"})])
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
]


def ask(proxy: RunningProxy, n: int, tag: str) -> None:
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="sk-fleet", max_retries=0)
    for i in range(n):
        content = f"{tag} question {i}"
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": content}], tools=TOOLS
        )


def proxy_for(root, upstream, name):
    spec = ProxySpec(
        capture=root, upstream=upstream.url, port=free_port(), flush_interval=0.05, proxy_id=name
    )
    return RunningProxy(spec).start()


COUNT = "SELECT proxy_id, count(*) FROM exchanges GROUP BY 1 ORDER BY 1"


def test_two_hosts_captures_merge_into_one_catalog(upstream, tmp_path, capsys):
    upstream.set_script(Script.of(CALL, deterministic=True))
    host_a, host_b, central = tmp_path / "a", tmp_path / "b", tmp_path / "central"
    a = proxy_for(host_a, upstream, "host-a-1-aaaaaa")
    b = proxy_for(host_b, upstream, "host-b-1-bbbbbb")
    try:
        ask(a, 3, "a")
        ask(b, 4, "b")
        wait_rows(host_a, "SELECT * FROM exchanges", 3)
        wait_rows(host_b, "SELECT * FROM exchanges", 4)
        assert_clean(b.stop())  # b is done (its worker compacted what it had); a goes on

        assert (
            main(["compact", "-c", str(central), "--from", str(host_a), "--from", str(host_b)]) == 0
        )
        said = capsys.readouterr().out
        import sys

        print(said, file=sys.__stderr__)
        assert said.startswith("toolproxy: merged files in (") and str(host_b) in said
        assert rows(central, COUNT) == [("host-a-1-aaaaaa", 3), ("host-b-1-bbbbbb", 4)]
        assert rows(central, "SELECT count(*) FROM tool_calls") == [(7,)]
        assert rows(central, "SELECT count(DISTINCT session_id) FROM exchanges") == [(7,)]

        ask(a, 2, "a later")  # recorded at a after the first merge
        wait_rows(host_a, "SELECT * FROM exchanges WHERE messages::VARCHAR LIKE '%later%'", 2)
        for _ in range(2):  # the second merge finds nothing new
            assert main(["compact", "-c", str(central), "--from", str(host_a)]) == 0
        assert rows(central, COUNT) == [("host-a-1-aaaaaa", 5), ("host-b-1-bbbbbb", 4)]
        assert rows(central, "SELECT count(DISTINCT exchange_id), count(*) FROM exchanges") == [
            (9, 9)
        ]
        assert rows(central, "SELECT DISTINCT proxy_id FROM proxy_runs ORDER BY 1") == [
            ("host-a-1-aaaaaa",),
            ("host-b-1-bbbbbb",),
        ]
    finally:
        assert_clean(a.stop())
    # a stopped: what it wrote last (its stop row) merges too; the drained hosts hold nothing
    assert main(["compact", "-c", str(central), "--from", str(host_a)]) == 0
    assert rows(central, "SELECT count(*) FROM exchanges") == [(9,)]
    assert rows(host_a, "SELECT count(*) FROM exchanges") == [(0,)]
    last = "SELECT event FROM proxy_runs_latest WHERE proxy_id = 'host-a-1-aaaaaa'"
    assert rows(central, last) == [("stop",)]
