"""Import recorded traffic: mitmproxy flow files and HAR files, through live capture's path.

Each flow becomes the same `RawExchange` the addon hands the recorder, and one `Recorder`
(the one live capture runs) turns them into rows: the same wire parsers, the same
redaction, sessions stitched by the same rules, in the order the requests started. What
the files do not say is left unknown rather than invented: a flow file dates the response's
headers but no body chunk, so an imported exchange's time to first byte is to its headers
(as live capture's for a body it did not see arrive) and a stream's events have no times.

A bad flow or entry is named (`flows.mitm: flow 4: ...`, `traffic.har: entry 2 (POST
https://...): ...`) and skipped; the rest is imported. Importing the same file twice adds
nothing: a flow keeps its mitmproxy id, a HAR entry gets an id from its content, and ids
already in the capture are skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mitmproxy import http
from mitmproxy.flow import Flow
from mitmproxy.io import compat, tnetstring
from mitmproxy.io.har import request_to_flow

from toolproxy import store
from toolproxy.capture.addon import _FlowState, raw_exchange
from toolproxy.capture.tap import RawExchange
from toolproxy.capture.worker import RecorderConfig
from toolproxy.records import MAX_BODY
from toolproxy.store.queries import exchanges

FLOWS, HAR = "flows", "har"


@dataclass
class Imported:
    """What one import did."""

    exchanges: int = 0  # recorded into the capture
    already: int = 0  # skipped: their ids were in the capture already
    skipped: int = 0  # flows that are not HTTP (TCP, UDP, DNS): nothing to record
    problems: list[str] = field(default_factory=list)  # one line per bad file, flow or entry
    parse_failures: int = 0  # recorded, but their bodies did not parse (kept raw)


def traffic_kind(path: Path) -> str:
    """flows or har, by the file's first bytes (a HAR file is a JSON object, a flow file a
    tnetstring stream); raises ValueError for anything else."""
    with path.open("rb") as f:
        head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"{"):
        return HAR
    if not head or head[:1].isdigit():
        return FLOWS
    raise ValueError("neither a mitmproxy flow file (mitmdump -w) nor a HAR file")


def read_flow_file(path: Path) -> Iterator[Flow | str]:
    """Each flow of a `mitmdump -w` file, or a line saying why one could not be read. A
    damaged stream ends the file (what follows cannot be found again); a flow that is
    well framed but not a valid flow is skipped alone."""
    with path.open("rb") as f:
        index = 0
        while True:
            index += 1
            at = f.tell()
            try:
                state = tnetstring.load(f)
            except (ValueError, TypeError, IndexError) as exc:  # what tnetstring raises
                if str(exc) != "not a tnetstring: empty file":
                    why = "cut short" if isinstance(exc, IndexError) else str(exc)
                    yield f"flow {index}: damaged at byte {at} ({why}); the rest is unreadable"
                return
            try:
                if not isinstance(state, dict):
                    raise ValueError(f"not a flow but a {type(state).__name__}")
                yield Flow.from_state(compat.migrate_flow(state))
            except Exception as exc:  # noqa: BLE001 - mitmproxy raises many kinds here
                yield f"flow {index}: not a readable flow ({_why(exc)})"


def read_har(path: Path) -> Iterator[Flow | str]:
    """Each entry of a HAR file as a flow (mitmproxy's own HAR reader), or a line naming
    the entry that could not be read and why."""
    try:
        har = json.loads(path.read_bytes().decode("utf-8-sig"))
        entries = har["log"]["entries"]
        if not isinstance(entries, list):
            raise TypeError("log.entries is not a list")
    except (ValueError, KeyError, TypeError) as exc:
        yield f"not a HAR file ({_why(exc)})"
        return
    for index, entry in enumerate(entries, 1):
        try:
            flow = request_to_flow(entry)
        except Exception as exc:  # noqa: BLE001 - a partial entry: KeyError, TypeError, ...
            yield f"entry {index}{_entry_name(entry)}: not a complete HAR entry ({_why(exc)})"
            continue
        digest = hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()
        flow.id = f"har-{digest[:24]}"
        _har_times(flow, entry)
        yield flow


def _har_times(flow: http.HTTPFlow, entry: dict[str, object]) -> None:
    """The flow's request end and response start from the entry's `timings` (HAR 1.2:
    blocked, dns, connect, send, wait, receive in ms, -1 where a phase does not apply,
    ssl counted in connect). mitmproxy's reader puts the entry's whole time before the
    request's end and starts the response with the request, so the time to first byte
    came out as minus the total; without timings it is unknown (None)."""
    timings = entry.get("timings")
    phases = timings if isinstance(timings, dict) else {}

    def ms(name: str) -> float | None:
        value = phases.get(name)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return max(float(value), 0.0) / 1000.0 if number else None  # type: ignore[arg-type]

    wait = ms("wait")
    if wait is None:
        flow.request.timestamp_end = None
        return
    before = (ms(name) or 0.0 for name in ("blocked", "dns", "connect", "send"))
    sent = flow.request.timestamp_start + sum(before)
    flow.request.timestamp_end = sent
    if flow.response is not None:
        flow.response.timestamp_start = sent + wait


def _entry_name(entry: object) -> str:
    try:
        request = entry["request"]  # type: ignore[index]
        return f" ({request['method']} {_no_query(request['url'])})"
    except (KeyError, TypeError, AttributeError):
        return ""


def _no_query(url: str) -> str:
    """A URL fit for a message: its query (which can carry a key) left out."""
    return url.split("?", 1)[0]


def _why(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"missing {exc.args[0]!r}"
    return str(exc) or type(exc).__name__


def flow_exchange(flow: http.HTTPFlow, limit: int = MAX_BODY) -> RawExchange:
    """The raw exchange the addon would have recorded for this finished flow."""
    complete = flow.error is None and flow.response is not None
    raw = raw_exchange(flow, _FlowState(limit), complete)
    raw.truncated = len(raw.request_body) > limit or len(raw.response_body) > limit
    raw.request_body = raw.request_body[:limit]
    raw.response_body = raw.response_body[:limit]
    if flow.response is not None:
        raw.ended_at = flow.response.timestamp_end or raw.response_started or raw.started_at
    else:
        raw.ended_at = (flow.error.timestamp if flow.error else None) or raw.started_at
    if raw.request_end is None:  # a HAR entry without timings: when the bytes came is unknown
        raw.response_started = None
    return raw


def _flows(paths: Sequence[Path], result: Imported) -> list[http.HTTPFlow]:
    flows: list[http.HTTPFlow] = []
    for path in paths:
        try:
            kind = traffic_kind(path)
        except (OSError, ValueError) as exc:
            result.problems.append(f"{path}: {getattr(exc, 'strerror', None) or exc}")
            continue
        for item in (read_har if kind == HAR else read_flow_file)(path):
            if isinstance(item, str):
                result.problems.append(f"{path}: {item}")
            elif not isinstance(item, http.HTTPFlow):
                result.skipped += 1
            elif item.response is not None and item.response.raw_content is None:
                result.problems.append(
                    f"{path}: flow {item.id} ({item.request.method} "
                    f"{_no_query(item.request.pretty_url)}): "
                    "its response body was not saved (streamed through mitmproxy); skipped"
                )
            else:
                flows.append(item)
    flows.sort(key=lambda f: f.request.timestamp_start)  # sessions are stitched in order
    return flows


def import_traffic(
    paths: Sequence[Path],
    capture: Path,
    *,
    session_header: str = "x-toolproxy-session",
    redact_headers: Sequence[str] = (),
    redact_query: Sequence[str] = (),
    redact_json: Sequence[str] = (),
) -> Imported:
    """Record every HTTP flow of `paths` into `capture` as live capture would, but those
    whose exchange ids are there already."""
    result = Imported()
    flows = _flows(paths, result)
    if not flows:
        return result
    capture.mkdir(parents=True, exist_ok=True)
    store.init_capture(capture)
    with store.reading(capture) as r:
        seen = exchanges.known_ids(r, [f.id for f in flows])
    fresh = [f for f in flows if f.id not in seen]
    result.already = len(flows) - len(fresh)
    if not fresh:
        return result
    config = RecorderConfig(
        capture_dir=capture,
        proxy_id=f"import-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}",
        flush_interval=1.0,
        session_header=session_header,
        redact_headers=tuple(redact_headers),
        redact_query=tuple(redact_query),
        redact_json=tuple(redact_json),
        run_info={
            "mode": "import",
            "upstream": ", ".join(str(p) for p in paths)[:1000],
            "recorder": "in-process",
        },
    )
    warnings: list[str] = []
    recorder = config.build(warnings.append)
    recorder.start()
    for flow in fresh:
        recorder.submit(flow_exchange(flow))
    recorder.close(timeout=None)
    result.exchanges = recorder.exchanges
    result.parse_failures = recorder.parse_failures
    # a body that did not parse is recorded raw and counted; anything else went wrong
    result.problems.extend(w.removeprefix("toolproxy: ") for w in warnings if "kept raw" not in w)
    return result
