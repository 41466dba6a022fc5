"""The OpenHAL client: one connection to a gateway's Hub.

A reader thread takes every line the Hub sends: answers go to the call
waiting for them (requests may be answered out of order, spec §1),
notifications to every subscriber's queue. Every call has a timeout, so a
script never hangs on a Hub that went away.
"""

import itertools
import json
import queue
import threading
from typing import Any, Dict, List, Optional, Tuple

from . import __version__
from .errors import CallTimeout, ConfirmationNotFound, ConnectionLost, OpenHALError, VersionMismatch, hub_error
from .pending import Pending
from .transport import LineConn, dial
from .types import Confirmation, Descriptor, InitResult, Value, WriteResult

PROTOCOL_VERSION = "0.1"
DEFAULT_TIMEOUT = 10.0

# A notification as subscribers get it: (method, params); None when the
# connection ended.
Notification = Optional[Tuple[str, Dict[str, Any]]]


class _Pending:
    """One call waiting for its answer."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.msg: Optional[Dict[str, Any]] = None


def connect(url: str, token: str, *, fingerprint: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
            client_name: str = "openhal-python", client_version: str = __version__,
            known_gateways: Optional[str] = None, insecure: bool = False, ask: Any = None) -> "Client":
    """Connects to the Hub at url (tcp://, tls://, unix://, ws://, wss://)
    and goes through the lifecycle (hal/initialize, then hal/initialized,
    which a hal/ping makes sure the Hub has taken).

    timeout bounds the connection and is every call's default. A Hub that
    answers a protocol version other than 0.1 is left (VersionMismatch).

    Trust (openhal.known, docs/python.md): a TLS gateway is checked against
    the known-gateways file (known_gateways; None: the user's, the one the
    gateway CLI uses; "": none) before anything is sent: a certificate
    other than the one recorded for the gateway is refused
    (GatewayChanged); one met for the first time needs fingerprint= (then
    recorded), or a yes from the person at the terminal (ask: None asks
    when there is a terminal, False never, or a callable taking
    openhal.known.Presented), else UnknownGateway. tcp:// and ws:// to a
    host off loopback need insecure=True (ClearTextRefused).
    """
    c = Client(dial(url, timeout, fingerprint, known_gateways=known_gateways, insecure=insecure, ask=ask), timeout)
    try:
        c._initialize(token, client_name, client_version)
    except BaseException:
        c.close()
        raise
    return c


class Client:
    """A connection past hal/initialize. Use connect() to make one; close()
    it (or use it as a context manager) when done."""

    def __init__(self, conn: LineConn, timeout: float):
        self.timeout = timeout
        self.init: Optional[InitResult] = None
        self._conn = conn
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._pending: Dict[int, _Pending] = {}
        self._subscribers: List["queue.Queue[Notification]"] = []
        self._closed = False
        self._reader = threading.Thread(target=self._read_loop, name="openhal-reader", daemon=True)
        self._reader.start()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def _initialize(self, token: str, name: str, version: str) -> None:
        res = self.call("hal/initialize", {"protocolVersion": PROTOCOL_VERSION, "token": token,
                                           "clientInfo": {"name": name, "version": version}})
        self.init = InitResult.from_json(res)
        if self.init.protocol_version != PROTOCOL_VERSION:
            raise VersionMismatch("the Hub speaks OpenHAL %s; this client speaks %s"
                                  % (self.init.protocol_version, PROTOCOL_VERSION))
        self.notify("hal/initialized")
        # The Hub sends nothing before it has taken hal/initialized (seed
        # 3.1.1, 4); a ping behind it returns once it has, so that whatever
        # happens after connect() returns reaches subscribe()'s queues.
        self.ping()

    # -- the wire ---------------------------------------------------------

    def _send(self, msg: Dict[str, Any]) -> None:
        data = json.dumps(msg, separators=(",", ":")).encode()
        with self._send_lock:
            if self._closed:
                raise ConnectionLost("the connection is closed")
            try:
                self._conn.send_line(data)
            except OSError as e:
                raise ConnectionLost("send %s: %s" % (msg.get("method"), e)) from e

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Sends a notification (no answer)."""
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params:
            msg["params"] = params
        self._send(msg)

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        """Sends a request and returns its result; the Hub's error is
        raised as the HubError of its code, no answer within timeout
        (default: the client's) as CallTimeout."""
        p = _Pending()
        with self._lock:
            id_ = next(self._ids)
            self._pending[id_] = p
        try:
            self._send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}})
            wait = self.timeout if timeout is None else timeout
            if not p.done.wait(wait):
                raise CallTimeout("%s: no answer within %.3g s" % (method, wait))
        finally:
            with self._lock:
                self._pending.pop(id_, None)
        if p.msg is None:
            raise ConnectionLost("%s: the connection ended before the answer" % method)
        if "error" in p.msg:
            raise hub_error(p.msg["error"] or {})
        return p.msg.get("result")

    def _read_loop(self) -> None:
        try:
            while True:
                line = self._conn.read_line()
                if line is None:
                    break
                if line:
                    self._dispatch(line)
        except (OSError, ValueError):
            pass
        finally:
            self._end()

    def _dispatch(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        if "method" in msg:
            with self._lock:
                subs = list(self._subscribers)
            for q in subs:
                q.put((msg["method"], msg.get("params") or {}))
            return
        with self._lock:
            p = self._pending.get(msg.get("id"))  # type: ignore[arg-type]
        if p is not None:
            p.msg = msg
            p.done.set()

    def _end(self) -> None:
        with self._lock:
            self._closed = True
            pending, subs = list(self._pending.values()), list(self._subscribers)
        for p in pending:
            p.done.set()  # msg None: ConnectionLost
        for q in subs:
            q.put(None)

    def subscribe(self) -> "queue.Queue[Notification]":
        """A queue that gets every notification from now on as (method,
        params), and None once the connection ends."""
        q: "queue.Queue[Notification]" = queue.Queue()
        with self._lock:
            if self._closed:
                q.put(None)
            else:
                self._subscribers.append(q)
        return q

    def unsubscribe(self, q: "queue.Queue[Notification]") -> None:
        with self._lock:
            if q in self._subscribers:
                self._subscribers.remove(q)

    def close(self) -> None:
        """Says hal/shutdown and closes; calls still waiting get
        ConnectionLost. Closing changes no device (seed 3.1.4)."""
        if not self._closed:
            try:
                self.notify("hal/shutdown")
            except OpenHALError:
                pass
        self._conn.close()
        if self._reader is not threading.current_thread():
            self._reader.join(timeout=self.timeout)

    # -- the protocol's methods ----------------------------------------------

    def ping(self, timeout: Optional[float] = None) -> None:
        self.call("hal/ping", timeout=timeout)

    def devices(self, tags: Optional[List[str]] = None, kind: Optional[str] = None,
                timeout: Optional[float] = None) -> List[Descriptor]:
        params: Dict[str, Any] = {}
        if tags:
            params["tags"] = tags
        if kind:
            params["kind"] = kind
        res = self.call("hal/devices/list", params, timeout)
        return [Descriptor.from_json(d) for d in res.get("devices") or []]

    def device(self, device: str, timeout: Optional[float] = None) -> Descriptor:
        return Descriptor.from_json(self.call("hal/devices/get", {"device": device}, timeout))

    def read(self, device: str, max_age_ms: Optional[int] = None, timeout: Optional[float] = None) -> Value:
        """The device's value: a fresh measurement for an input or sensor
        unless the held one is at most max_age_ms old."""
        params: Dict[str, Any] = {"device": device}
        if max_age_ms is not None:
            params["maxAgeMs"] = max_age_ms
        return Value.from_json(self.call("hal/read", params, timeout))

    def write(self, device: str, value: Any, reason: Optional[str] = None, timeout_ms: Optional[int] = None,
              reply: Optional[bool] = None, timeout: Optional[float] = None) -> WriteResult:
        """Writes value. A refused write raises (Stopped, a GatewayStopped;
        Blocked, Forbidden...). An applied one answers a WriteResult,
        status "applied". A high-risk write by a control_low token is not
        applied: it answers a Pending (a WriteResult of status "pending"
        with its ``confirmation``), whose ``wait()`` returns the applied
        write once an admin approves and raises otherwise (openhal.pending)."""
        params: Dict[str, Any] = {"device": device, "value": value}
        if reason is not None:
            params["reason"] = reason
        if timeout_ms is not None:
            params["timeoutMs"] = timeout_ms
        if reply is not None:
            params["reply"] = reply
        if timeout is None and timeout_ms is not None:
            timeout = max(self.timeout, timeout_ms / 1000.0 + 1)
        res = self.call("hal/write", params, timeout)
        if isinstance(res, dict) and res.get("status") == "pending" and isinstance(res.get("confirmation"), dict):
            return Pending.from_write(res, self)
        return WriteResult.from_json(res)

    def stop(self, reason: Optional[str] = None, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Engages the emergency stop; the answer says what went safe."""
        return self.call("hal/stop", {"reason": reason} if reason else {}, timeout)

    def resume(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        return self.call("hal/resume", {}, timeout)

    def confirmations(self, status: Optional[str] = None, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Every confirmation request the token may see, following the
        Hub's pages (``next``/``after``)."""
        out: List[Dict[str, Any]] = []
        params: Dict[str, Any] = {"status": status} if status else {}
        while True:
            res = self.call("hal/confirmations/list", params, timeout)
            out.extend(res.get("confirmations") or [])
            if not res.get("next"):
                return out
            params["after"] = res["next"]

    def confirmation(self, id: str, timeout: Optional[float] = None) -> Confirmation:
        """One confirmation request, as the Hub lists it now: its status,
        and while pending the device's value now (``current``) beside the
        one asked for. Raises ConfirmationNotFound when the token sees no
        request with that id (ids do not outlive a restart of the
        gateway)."""
        params: Dict[str, Any] = {}
        while True:
            res = self.call("hal/confirmations/list", params, timeout)
            for c in res.get("confirmations") or []:
                if c.get("id") == id:
                    return Confirmation.from_json(c)
            if not res.get("next"):
                raise ConfirmationNotFound(-32011, "no confirmation request %r is known to the gateway" % id,
                                           {"reason": "confirmation_not_found", "id": id})
            params["after"] = res["next"]

    def approve(self, id: str, timeout: Optional[float] = None) -> Dict[str, Any]:
        return self.call("hal/confirmations/approve", {"id": id}, timeout)

    def reject(self, id: str, reason: Optional[str] = None, timeout: Optional[float] = None) -> Dict[str, Any]:
        params: Dict[str, Any] = {"id": id}
        if reason:
            params["reason"] = reason
        return self.call("hal/confirmations/reject", params, timeout)

    def cancel(self, id: str, timeout: Optional[float] = None) -> Dict[str, Any]:
        return self.call("hal/confirmations/cancel", {"id": id}, timeout)

    def audit(self, since: Optional[int] = None, limit: Optional[int] = None,
              timeout: Optional[float] = None) -> Dict[str, Any]:
        """One page of the audit log: ``{entries, next?, skipped?}``; pass
        ``next`` as since for the page after."""
        params: Dict[str, Any] = {}
        if since is not None:
            params["since"] = since
        if limit is not None:
            params["limit"] = limit
        return self.call("hal/audit/list", params, timeout)
