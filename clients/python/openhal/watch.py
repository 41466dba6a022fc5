"""Watching values across lost connections and restarts of the gateway.

A Watch is an iterator of Values. It tells a value it never saw from one
of a device it cannot see the way docs/protocol.md ("Telling missed
values") says: by each device's own count, ``devSeq``. A gap in one
device's devSeq is a real loss (``missed``); a new ``bootId`` after a
reconnection is a restart, whose counts begin again (``restarted``).
"""

import queue
import threading
import time
from typing import Callable, Dict, Iterable, Iterator, List, Optional

from .client import Client
from .errors import (ClearTextRefused, DeviceNotFound, FingerprintMismatch, Forbidden, HubError, NotSupported,
                     OpenHALError, Unauthorized, UnknownGateway)
from .types import Value

# How long a Watch waits on its queue at a time, so that close() is seen.
_POLL = 0.5
# The first delay before connecting again; it doubles up to max_backoff.
_FIRST_DELAY = 0.05


class Watch:
    """Values of the devices named (all visible ones when None): first the
    value each readable one holds (``initial``), then every change.

    ``connect`` makes a new connected Client; the Watch uses it at start
    and after each lost connection, with a growing delay (up to
    ``max_backoff`` seconds) until it gets one again or is closed. A token
    the Hub no longer takes (Unauthorized) ends the Watch with that error.
    """

    def __init__(self, connect: Callable[[], Client], devices: Optional[Iterable[str]] = None,
                 reconnect: bool = True, max_backoff: float = 2.0):
        self._connect = connect
        self._want = set(devices) if devices is not None else None
        self._reconnect = reconnect
        self._max_backoff = max_backoff
        self._delay = _FIRST_DELAY
        self._last: Dict[str, int] = {}  # devSeq passed on, by device
        self._ready: List[Value] = []
        self._closed = threading.Event()
        self._client: Optional[Client] = None
        self._queue: "Optional[queue.Queue]" = None
        self._boot = ""
        self._attach(connect(), reconnected=False)

    @property
    def client(self) -> Optional[Client]:
        """The connection in use (None between connections)."""
        return self._client

    def _attach(self, c: Client, reconnected: bool) -> None:
        self._queue = c.subscribe()
        boot = c.init.boot_id if c.init else ""
        restarted = bool(self._boot) and boot != self._boot
        if restarted:
            self._last.clear()
        self._boot = boot
        self._client = c
        self._catch_up(c, reconnected, restarted)

    def _catch_up(self, c: Client, reconnected: bool, restarted: bool) -> None:
        """Reads each watched readable device, taking the value held
        (maxAgeMs large), and passes on what it had not seen: at the start
        the values held (initial), after a reconnection the ones that
        changed while it was away. It reads after subscribing, so nothing
        falls between the two: a value is either read or notified (and
        passed on once, by its devSeq)."""
        ids = sorted(self._want) if self._want is not None else [d.id for d in c.devices() if d.readable()]
        for dev in ids:
            try:
                v = c.read(dev, max_age_ms=24 * 3600 * 1000)
            except (DeviceNotFound, NotSupported):
                continue
            except HubError as e:
                if e.reason == "no_value":
                    continue
                raise
            v.reconnected, v.restarted, v.initial = reconnected, restarted, not reconnected
            self._take(v)

    def _take(self, v: Value) -> None:
        """Queues v unless it was passed on already; notes its gap."""
        if self._want is not None and v.device not in self._want:
            return
        last = self._last.get(v.device)
        if v.dev_seq is not None:
            if last is not None and v.dev_seq <= last:
                return
            if last is not None:
                v.missed = v.dev_seq - last - 1
            self._last[v.device] = v.dev_seq
        self._ready.append(v)

    def __iter__(self) -> Iterator[Value]:
        return self

    def __next__(self) -> Value:
        v = self.next()
        if v is None:
            raise StopIteration
        return v

    def next(self, timeout: Optional[float] = None) -> Optional[Value]:
        """The next value; None when the Watch is closed, or when timeout
        seconds pass without one (reconnecting included)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._ready:
            left = _POLL if deadline is None else min(_POLL, deadline - time.monotonic())
            if self._closed.is_set() or left <= 0:
                return None
            if self._queue is None:
                self._reconnect_until(deadline)
                continue
            try:
                item = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if item is None:
                self._drop()
                continue
            method, params = item
            if method == "hal/value" and "device" in params:
                self._take(Value.from_json(params))
        return self._ready.pop(0)

    def _drop(self) -> None:
        """Lets go of a connection that ended."""
        if self._client is not None:
            self._client.close()
        self._client, self._queue = None, None
        if not self._reconnect:
            self._closed.set()

    def _reconnect_until(self, deadline: Optional[float]) -> None:
        """Tries to connect again, with a growing delay, until it does, the
        Watch is closed, or deadline passes."""
        while not self._closed.is_set():
            try:
                c = self._connect()
            except (Unauthorized, Forbidden, FingerprintMismatch, UnknownGateway, ClearTextRefused):
                self._closed.set()
                raise  # a revoked token, a gateway not trusted: trying again would only be refused again
            except (OSError, OpenHALError):
                wait = self._delay
                if deadline is not None:
                    wait = min(wait, deadline - time.monotonic())
                    if wait <= 0:
                        return
                self._closed.wait(wait)
                self._delay = min(self._delay * 2, self._max_backoff)
                continue
            try:
                self._attach(c, reconnected=True)
            except (OSError, OpenHALError):
                c.close()
                continue
            self._delay = _FIRST_DELAY
            return

    def close(self) -> None:
        self._closed.set()
        if self._client is not None:
            self._client.close()
