import socket
import subprocess

import pytest

from toolproxy.capture.proxy import (
    ADDON_SCRIPT,
    ProxySpec,
    RunningProxy,
    addon_script,
    child_pids,
    free_port,
    mitmdump_path,
)


def test_argv_reverse_mode_with_all_settings(tmp_path):
    spec = ProxySpec(
        capture=tmp_path / "c",
        upstream="https://api.openai.com",
        port=9999,
        flush_interval=0.2,
        session_header="x-run",
        retry_window=0.0,
        redact_headers=["x-tenant"],
        redact_query=["sig2"],
        redact_json=["a.b"],
        proxy_id="p1",
        confdir="/tmp/conf",
        extra=["--set", "ssl_insecure=true"],
    )
    argv = spec.argv()
    joined = " ".join(argv)
    assert argv[0].endswith("mitmdump")
    assert "--mode reverse:https://api.openai.com" in joined
    assert "--listen-host 127.0.0.1 --listen-port 9999" in joined
    assert "flow_detail=0" in joined
    assert f"-s {ADDON_SCRIPT}" in joined
    for setting in (
        f"toolproxy_capture={tmp_path / 'c'}",
        "toolproxy_flush_interval=0.2",
        "toolproxy_session_header=x-run",
        "toolproxy_retry_window=0.0",
        "toolproxy_redact_headers=x-tenant",
        "toolproxy_redact_query=sig2",
        "toolproxy_redact_json=a.b",
        "toolproxy_proxy_id=p1",
        "confdir=/tmp/conf",
    ):
        assert f"--set {setting}" in joined
    assert argv[-2:] == ["--set", "ssl_insecure=true"]


def test_argv_regular_and_bare_modes(tmp_path):
    assert "--mode regular" in " ".join(ProxySpec(capture=tmp_path).argv())
    bare = ProxySpec(capture=tmp_path, upstream="http://x", with_addon=False).argv()
    assert "-s" not in bare and "stream_large_bodies=1" in bare
    buffered = ProxySpec(capture=tmp_path, upstream="http://x", with_addon=False, bare_stream=False)
    assert "stream_large_bodies=1" not in buffered.argv()


def test_addon_script_and_mitmdump_are_found():
    assert addon_script() == ADDON_SCRIPT and ADDON_SCRIPT.exists()
    assert mitmdump_path().endswith("mitmdump")


def test_free_port_is_bindable():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_bad_option_makes_start_fail_with_mitmdump_output(tmp_path):
    spec = ProxySpec(
        capture=tmp_path / "c", upstream="http://127.0.0.1:9", port=free_port(), flush_interval=99.0
    )
    with pytest.raises(RuntimeError, match="toolproxy_flush_interval: must be between"):
        RunningProxy(spec).start()


def test_start_stop_and_child_pids(tmp_path):
    proxy = RunningProxy(
        ProxySpec(capture=tmp_path / "c", upstream="http://127.0.0.1:9", port=free_port())
    )
    with proxy:
        assert proxy.proc is not None
        assert child_pids(proxy.proc.pid)  # the recorder worker
        assert proxy.url.startswith("http://127.0.0.1:")
    assert proxy.proc.returncode is not None
    assert child_pids(proxy.proc.pid) == []  # the worker exited with it


def test_kill_is_a_crash_not_a_stop(tmp_path):
    proxy = RunningProxy(
        ProxySpec(capture=tmp_path / "c", upstream="http://127.0.0.1:9", port=free_port())
    ).start()
    proxy.kill()
    assert proxy.proc.returncode == -9
    proxy.kill()  # already dead: no error
    assert RunningProxy(ProxySpec(capture=tmp_path)).stop() == ""


def test_mitmdump_is_the_venv_one():
    out = subprocess.run([mitmdump_path(), "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and "Mitmproxy: 12." in out.stdout


def test_free_port_never_hands_out_the_same_port_twice():
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
