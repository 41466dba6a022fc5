"""The WebSocket transport (ws://, wss://), when the websockets package is
installed.

websockets 10 (Debian 12's) is asyncio only, so the connection lives on an
event loop in a thread of its own and the client's calls wait on it: the
Client above it stays the same synchronous code for every transport. The
token travels in hal/initialize's params (spec §2), so no header is sent,
and no Origin either: the Hub refuses a browser page's Origin, not a
script's (docs/protocol.md).
"""

import asyncio
import hashlib
import ssl
import threading
from typing import Any, Optional

from .errors import FingerprintMismatch
from .transport import Trust, ca_context, parse_url, probe, unverified_context


class WSConn:
    """One WebSocket connection read and written a message at a time,
    with the LineConn methods the Client uses."""

    def __init__(self, url: str, timeout: float, trust: Optional[Trust]):
        try:
            import websockets  # noqa: F401
        except ImportError as e:
            raise ValueError("%s: WebSocket needs the websockets package (apt-get install python3-websockets); "
                             "tcp:// needs nothing" % url) from e
        # wss://: the certificate is judged on a connection of its own
        # before the library sends its upgrade request, and the one the
        # upgrade went over must be that certificate.
        ctx: Optional[ssl.SSLContext] = None
        expect: Optional[str] = None
        if trust is not None:
            _, host, port, _ = parse_url(url)
            expect = probe(host, port or 443, timeout, trust) if trust.verifies else None
            ctx = unverified_context() if expect is not None else ca_context()
        self._timeout = timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="openhal-ws", daemon=True)
        self._thread.start()
        try:
            self._ws = self._run(self._open(url, timeout, ctx, expect), timeout + 1)
        except BaseException:
            self._stop_loop()
            raise

    async def _open(self, url: str, timeout: float, ctx: Optional[ssl.SSLContext], expect: Optional[str]) -> Any:
        ws = await self._connect(url, timeout, ctx)
        if expect is not None:
            der = ws.transport.get_extra_info("ssl_object").getpeercert(binary_form=True) or b""
            if hashlib.sha256(der).hexdigest() != expect:
                await ws.close()
                raise FingerprintMismatch("the Hub at %s presented another certificate than a moment before (%s); refused"
                                          % (url, expect))
        return ws

    @staticmethod
    async def _connect(url: str, timeout: float, ctx: Optional[ssl.SSLContext]) -> Any:
        import websockets
        # max_size None: the Hub bounds its own messages (hub.limits).
        return await websockets.connect(url, ssl=ctx, open_timeout=timeout, max_size=None,
                                        ping_interval=None, compression=None)

    def _run(self, coro: Any, timeout: Optional[float] = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def send_line(self, data: bytes) -> None:
        try:
            self._run(self._ws.send(data.decode()), self._timeout)
        except Exception as e:
            raise OSError("websocket send: %s" % e) from e

    def read_line(self) -> Optional[bytes]:
        """The next message; None once the connection is closed."""
        try:
            msg = self._run(self._ws.recv())
        except Exception:
            return None
        return msg.encode() if isinstance(msg, str) else msg

    def close(self) -> None:
        if self._loop.is_running():
            try:
                self._run(self._ws.close(), self._timeout)
            except Exception:
                pass
        self._stop_loop()

    def _stop_loop(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
