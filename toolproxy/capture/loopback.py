"""Move servers that mitmproxy bound to all interfaces before the addon loaded onto loopback.

mitmdump starts binding while it loads `-s` scripts (and a script can be added to a running
mitmproxy), so the addon's loopback default for `listen_host` can arrive after a server is
already listening on every interface: those servers are restarted, and the log says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any

WIDE_HOSTS = frozenset({"", "0.0.0.0", "::"})


def is_wide(listen_addrs: Iterable[Sequence[Any]]) -> bool:
    """True when any of a server's addresses is a wildcard (all interfaces)."""
    return any(addr[0] in WIDE_HOSTS for addr in listen_addrs)


def shown(listen_addrs: Iterable[Sequence[Any]]) -> str:
    """The addresses as mitmproxy's own log names them: `*:8080`, `127.0.0.1:8080`.

    The IPv4 and IPv6 wildcards of one port are both `*:PORT`, named once.
    """
    names = [f"{'*' if addr[0] in WIDE_HOSTS else addr[0]}:{addr[1]}" for addr in listen_addrs]
    return ", ".join(dict.fromkeys(names)) or "nothing"


async def rebind_wide(servers: Any, log: Callable[[str], None]) -> int:
    """Restart each running server bound wide whose mode names no host of its own.

    `servers` is mitmproxy's `proxyserver.servers`; `listen_host` must already hold the
    host to bind. Returns how many servers were restarted.
    """
    while servers.is_updating:
        await asyncio.sleep(0.01)
    moved = 0
    for server in list(servers):
        if not server.is_running or server.mode.custom_listen_host is not None:
            continue
        before = list(server.listen_addrs)
        if not is_wide(before):
            continue
        try:
            await server.stop()
            await server.start()
        except Exception as exc:  # noqa: BLE001 - the proxy keeps running as it was
            log(f"toolproxy: could not rebind {shown(before)} to loopback: {exc!r}")
            continue
        moved += 1
        log(
            f"toolproxy: rebound {shown(before)} to {shown(server.listen_addrs)} (mitmproxy bound"
            " it before the addon loaded; set listen_host to choose the interface)"
        )
    return moved
