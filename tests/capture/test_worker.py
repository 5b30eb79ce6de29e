import io
import os
import signal
import time

from toolproxy import store
from toolproxy.capture.tap import RawExchange
from toolproxy.capture.worker import (
    RecorderConfig,
    RecorderProcess,
    read_frame,
    run_worker,
    write_frame,
)


def raw(i: int) -> RawExchange:
    return RawExchange(
        exchange_id=f"ex-{i}",
        started_at=time.time(),
        method="GET",
        scheme="http",
        host="h",
        port=80,
        path=f"/v1/models?i={i}",
        request_headers=[("x-api-key", "sk-worker-secret-123")],
        request_body=b"",
        status_code=200,
        response_body=b"{}",
        ended_at=time.time(),
    )


def ids(capture):
    store.init_capture(capture)
    return {r[0] for r in store.query(capture, "SELECT exchange_id FROM exchanges")[1]}


def test_frames_round_trip_and_cut_frames_read_as_end():
    buf = io.BytesIO()
    write_frame(buf, raw(1))
    write_frame(buf, ("kind", "message"))
    data = buf.getvalue()
    inp = io.BytesIO(data)
    assert read_frame(inp).exchange_id == "ex-1"
    assert read_frame(inp) == ("kind", "message")
    assert read_frame(inp) is None
    assert read_frame(io.BytesIO(data[:20])) is None  # a writer killed mid-frame


def test_run_worker_records_everything_until_end_of_input(tmp_path):
    capture = tmp_path / "cap"
    buf = io.BytesIO()
    write_frame(buf, RecorderConfig(capture, "w1", flush_interval=0.05))
    for i in range(5):
        write_frame(buf, raw(i))
    write_frame(buf, ("hook:test", "a hook failed"))
    buf.seek(0)
    run_worker(buf)
    assert ids(capture) == {f"ex-{i}" for i in range(5)}
    stop = store.query(capture, "SELECT internal_errors FROM proxy_runs WHERE event = 'stop'")[1]
    assert stop == [(1,)]


def test_run_worker_rejects_input_without_config():
    buf = io.BytesIO()
    write_frame(buf, raw(0))
    buf.seek(0)
    try:
        run_worker(buf)
    except SystemExit as exc:
        assert "RecorderConfig" in str(exc)
    else:
        raise AssertionError("expected SystemExit")


def test_recorder_process_records_and_closes(tmp_path):
    capture = tmp_path / "cap"
    proc = RecorderProcess(RecorderConfig(capture, "p1", flush_interval=0.05))
    proc.start()
    for i in range(20):
        proc.submit(raw(i))
    proc.close()
    assert ids(capture) == {f"ex-{i}" for i in range(20)}
    assert proc._proc is not None and proc._proc.returncode == 0


def test_dead_worker_falls_back_to_in_process_recording(tmp_path):
    capture = tmp_path / "cap"
    logs: list[str] = []
    proc = RecorderProcess(RecorderConfig(capture, "p2", flush_interval=0.05), log=logs.append)
    proc.start()
    proc.submit(raw(0))
    time.sleep(0.5)
    assert proc._proc is not None
    os.kill(proc._proc.pid, signal.SIGKILL)
    proc._proc.wait()
    for i in range(1, 4):
        proc.submit(raw(i))
    proc.count_error("hook:x", "boom")
    proc.close()
    assert {"ex-1", "ex-2", "ex-3"} <= ids(capture)
    assert any("recording in-process" in line for line in logs)
    # Visible in the capture, not only in a log: a fallback row, a counter, a warning.
    assert proc.worker_lost == 1
    _, runs = store.query(capture, "SELECT event, recorder, worker_lost FROM proxy_runs")
    assert ("fallback", "in-process", 1) in runs
    (warning,) = store.summary(capture)["warnings"]
    assert warning.startswith("proxy p2: its recorder worker died at")
