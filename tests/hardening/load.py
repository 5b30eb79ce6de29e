"""A 32-way load of chat requests against a proxy, with the time each answer arrived."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import httpx

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@dataclass
class Load:
    """Clients posting in a loop until stopped; `answered` holds when each 200 arrived."""

    url: str
    clients: int = 32
    answered: list[float] = field(default_factory=list)
    failed: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def __enter__(self) -> Load:
        for _ in range(self.clients):
            t = threading.Thread(target=self._client, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def _client(self) -> None:
        with httpx.Client(base_url=self.url, timeout=10) as client:
            while not self._stop.is_set():
                try:
                    r = client.post("/v1/chat/completions", json=BODY)
                    if r.status_code == 200:
                        self.answered.append(time.time())
                    else:
                        self.failed += 1
                except httpx.HTTPError:
                    self.failed += 1
                    time.sleep(0.05)

    def wait_for(self, answered: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.answered) < answered and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.answered) >= answered, f"only {len(self.answered)} answers"

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(15)

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def between(self, start: float, end: float) -> int:
        return sum(start <= t <= end for t in self.answered)
