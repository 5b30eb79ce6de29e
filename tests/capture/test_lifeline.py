import os
import signal
import subprocess
import sys
import time

from toolproxy.capture import lifeline

CHILD = (
    "import sys, time\n"
    "from toolproxy.capture import lifeline\n"
    "print(lifeline.die_with_parent(), flush=True)\n"
    "time.sleep(30)\n"
)


def test_not_armed_without_a_parent_named():
    assert lifeline.die_with_parent({}) is False
    assert lifeline.die_with_parent({lifeline.PARENT_ENV: "not-a-pid"}) is False


def test_a_child_whose_parent_is_already_gone_stops_at_once():
    env = {**os.environ, lifeline.PARENT_ENV: "1"}  # pid 1 is nobody's parent here
    child = subprocess.run([sys.executable, "-c", CHILD], env=env, timeout=30)
    assert child.returncode == -signal.SIGTERM


def test_a_child_dies_with_its_parent_killed_by_sigkill(tmp_path):
    pidfile = tmp_path / "child.pid"
    # A middle process starts the child the way RunningProxy does, then is killed -9.
    middle = (
        "import os, subprocess, sys, time\n"
        "from toolproxy.capture import lifeline\n"
        f"env = {{**os.environ, **lifeline.parent_env()}}\n"
        f"c = subprocess.Popen([sys.executable, '-c', {CHILD!r}], env=env, "
        "stdout=subprocess.PIPE)\n"
        "assert c.stdout.readline().strip() == b'True'\n"
        f"open({str(pidfile)!r}, 'w').write(str(c.pid))\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", middle])
    deadline = time.monotonic() + 30
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    child = int(pidfile.read_text())
    proc.kill()
    proc.wait()
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{child}"), "the child outlived its parent"
