"""The addon script loads as users load it: `mitmdump -s` with no other flags, and mitmweb."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from toolproxy.capture.proxy import ADDON_SCRIPT, free_port, wait_listening

from .conftest import assert_clean, wait_rows

BIN = Path(sys.executable).parent


def start(argv, tmp_path):
    out = open(tmp_path / "out.log", "w+b")  # noqa: SIM115 - closed by the caller's finish()
    proc = subprocess.Popen(
        argv,
        stdout=out,
        stderr=subprocess.STDOUT,
        env={"PYTHONUNBUFFERED": "1", "PATH": str(BIN) + ":/usr/bin:/bin"},
    )
    return proc, out


def mitmdump(script, upstream, port, capture, tmp_path):
    """`mitmdump -s SCRIPT` as a user runs it: reverse proxy to `upstream`, no listen host."""
    argv = [str(BIN / "mitmdump"), "-s", str(script), "--mode", f"reverse:{upstream.url}"]
    argv += ["--listen-port", str(port), "--set", f"toolproxy_capture={capture}"]
    return start(argv, tmp_path)


def assert_records_a_call(port, capture, recorded=1):
    """A Chat Completions call through the proxy is answered and lands in the capture."""
    httpx.post(
        f"http://127.0.0.1:{port}/v1/chat/completions", json={"model": "m", "messages": []}
    ).raise_for_status()
    got = wait_rows(capture, "SELECT wire_format FROM exchanges", recorded)
    assert got == [("openai_chat",)] * recorded


def finish(proc, out):
    proc.terminate()
    proc.wait(20)
    out.seek(0)
    text = out.read().decode(errors="replace")
    out.close()
    return text


def wait_for(out, needle, timeout=30.0, count=1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out.seek(0)
        text = out.read().decode(errors="replace")
        if text.count(needle) >= count:
            return text
        time.sleep(0.05)
    raise AssertionError(f"{needle!r} not in output:\n{text}")


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a listening TCP socket on `port` (Linux /proc/net/tcp*)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, hexport = local.split(":")
            if state == "0A" and int(hexport, 16) == port:
                found.add(addr)
    return found


def test_plain_mitmdump_s_listens_on_loopback_and_records(upstream, tmp_path):
    port = free_port()
    capture = tmp_path / "cap"
    proc, out = mitmdump(ADDON_SCRIPT, upstream, port, capture, tmp_path)
    try:
        # not *:PORT as bare mitmdump; mitmdump may bind before the script has loaded (a
        # race inside mitmproxy), and then the addon rebinds and says so
        text = wait_for(out, f"listening at 127.0.0.1:{port}")
        if f"listening at *:{port}" in text:
            assert f"rebound *:{port} to 127.0.0.1:{port}" in text
        assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1 only
        assert_records_a_call(port, capture)
    finally:
        finish(proc, out)


def test_mitmweb_loads_the_addon_and_records(upstream, tmp_path):
    port, web = free_port(), free_port()
    capture = tmp_path / "cap"
    proc, out = start(
        [
            str(BIN / "mitmweb"),
            "-s",
            str(ADDON_SCRIPT),
            "--mode",
            f"reverse:{upstream.url}",
            "--listen-port",
            str(port),
            "--set",
            f"toolproxy_capture={capture}",
            "--set",
            "web_open_browser=false",
            "--set",
            f"web_port={web}",
        ],
        tmp_path,
    )
    try:
        wait_listening("127.0.0.1", port, proc)
        wait_for(out, "listening at")
        assert_records_a_call(port, capture)
    finally:
        text = finish(proc, out)
    assert_clean(text)


def test_a_clean_log_is_judged_by_our_files_not_by_the_checkout_folder_name():
    # a checkout cloned into a folder named toolproxy: mitmdump names the script's path
    script = "/home/user/toolproxy/addons/toolproxy_capture.py"
    assert_clean(f"[10:00:00.000] Loading script {script}\nHTTP(S) proxy listening at *:8080.")
    addon = Path(__file__).resolve().parents[2] / "toolproxy" / "capture" / "addon.py"
    broken = f'Addon error: boom\nTraceback (most recent call last):\n  File "{addon}", line 3'
    with pytest.raises(AssertionError):
        assert_clean(broken.replace("Addon error: boom\n", ""))


LATE_LOADER = '''
from mitmproxy import ctx

class LoadLater:
    """Adds toolproxy's script once mitmproxy is running: its servers are bound already."""

    def running(self):
        ctx.options.update(scripts=[*ctx.options.scripts, {script!r}])

addons = [LoadLater()]
'''


def test_an_addon_loaded_after_the_bind_rebinds_to_loopback_and_says_so(upstream, tmp_path):
    # the shape CI hit: mitmdump bound *:PORT before our script had set listen_host
    first = tmp_path / "load_later.py"
    first.write_text(LATE_LOADER.format(script=str(ADDON_SCRIPT)))
    port = free_port()
    capture = tmp_path / "cap"
    proc, out = mitmdump(first, upstream, port, capture, tmp_path)
    try:
        text = wait_for(out, f"listening at 127.0.0.1:{port}")
        assert f"listening at *:{port}" in text  # bound wide first: the shape under test
        assert f"rebound *:{port} to 127.0.0.1:{port}" in text
        assert listening_addresses(port) == {"0100007F"}
        assert_records_a_call(port, capture)
    finally:
        text = finish(proc, out)
    assert_clean(text)


def test_the_script_reloads_when_its_file_changes_and_recording_goes_on(upstream, tmp_path):
    # mitmdump -s watches the script: an edit reloads it into the running proxy
    script = tmp_path / "toolproxy_capture.py"
    script.write_text(ADDON_SCRIPT.read_text())
    port = free_port()
    capture = tmp_path / "cap"
    proc, out = mitmdump(script, upstream, port, capture, tmp_path)
    try:
        wait_for(out, f"listening at 127.0.0.1:{port}")
        assert_records_a_call(port, capture)
        for edits in (1, 2):  # a reload that failed would end the watching: edit twice
            later = script.stat().st_mtime + 5
            os.utime(script, (later, later))
            wait_for(out, "recording into", count=1 + edits)
            assert_records_a_call(port, capture, 1 + edits)
        assert listening_addresses(port) == {"0100007F"}
    finally:
        text = finish(proc, out)
    assert_clean(text)
