"""Transports: one JSON-RPC message per line over TCP, TLS or a Unix socket
(and a message per WebSocket frame, in ws.py).

The Hub's TCP transport frames a message as one line ended by ``\\n``
(spec §2), so the standard library's sockets are all a client needs. TLS
pins the Hub's certificate by the SHA-256 of its DER (the fingerprint the
gateway logs on its ``msg=listening`` line): a gateway on a LAN has no CA,
and the pin read from its own log is the trust (docs/protocol.md).
"""

import hashlib
import select
import socket
import ssl
import threading
from typing import Optional, Tuple
from urllib.parse import urlsplit

from .errors import FingerprintMismatch

DEFAULT_TCP_PORT = 7751
SCHEMES = ("tcp", "tls", "unix", "ws", "wss")


def parse_url(url: str) -> Tuple[str, str, int, str]:
    """Splits a client URL into (scheme, host, port, path); a bad one is a
    ValueError that names what was wrong."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("ws", "wss"):
        if not parts.hostname:
            raise ValueError("%s: no host" % url)
        return scheme, parts.hostname, parts.port or 0, parts.path
    if scheme not in SCHEMES:
        raise ValueError("%s: unknown scheme %r: want one of %s" % (url, scheme, ", ".join(s + "://" for s in SCHEMES)))
    if scheme == "unix":
        if not parts.path:
            raise ValueError("%s: no socket path (unix:///run/gateway/hal.sock)" % url)
        return scheme, "", 0, parts.path
    if not parts.hostname:
        raise ValueError("%s: no host" % url)
    return scheme, parts.hostname, parts.port or DEFAULT_TCP_PORT, ""


def normalize_fingerprint(fp: str) -> str:
    """Lowercase hex without colons: the log's form, whatever case or
    colons the user copied."""
    out = fp.replace(":", "").strip().lower()
    if len(out) != 64 or any(c not in "0123456789abcdef" for c in out):
        raise ValueError("fingerprint %r: want the 64 hex digits of a SHA-256" % fp)
    return out


class LineConn:
    """A connected socket read and written one line at a time."""

    def __init__(self, sock: socket.socket):
        self._sock = sock
        self._rfile = sock.makefile("rb")

    def send_line(self, data: bytes) -> None:
        self._sock.sendall(data + b"\n")

    def read_line(self) -> Optional[bytes]:
        """The next line without its ending; None at the end of the stream."""
        line = self._rfile.readline()
        if not line:
            return None
        return line.rstrip(b"\r\n")

    def close(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


class TLSLineConn(LineConn):
    """LineConn over TLS. One OpenSSL connection must not be read and
    written by two threads at once (a TLS 1.3 session ticket read while a
    request is written breaks the record layer), yet the Client reads in
    one thread and writes in others. So the socket is non-blocking, waits
    happen in select() outside the lock, and each read or write of the
    TLS connection holds the lock."""

    def __init__(self, sock: ssl.SSLSocket):
        self._sock = sock
        self._lock = threading.Lock()
        self._buf = b""
        sock.setblocking(False)

    def send_line(self, data: bytes) -> None:
        view = memoryview(data + b"\n")
        while view:
            with self._lock:
                try:
                    n = self._sock.send(view)
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    n = 0
            view = view[n:]
            if view:
                select.select([self._sock], [self._sock], [], 1.0)

    def read_line(self) -> Optional[bytes]:
        while b"\n" not in self._buf:
            with self._lock:
                try:
                    chunk: Optional[bytes] = self._sock.recv(65536)
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    chunk = None
            if chunk == b"":
                return None
            if chunk is None:
                select.select([self._sock], [], [])
                continue
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.rstrip(b"\r")


def dial(url: str, timeout: float, fingerprint: Optional[str] = None) -> "LineConn":
    """Connects to url within timeout seconds; for tls:// and wss://,
    checks the certificate against fingerprint (or the system's CAs
    without one). ws:// and wss:// need the websockets package."""
    scheme, host, port, path = parse_url(url)
    if scheme in ("ws", "wss"):
        from .ws import WSConn
        return WSConn(url, timeout, fingerprint)  # type: ignore[return-value]
    if scheme == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError:
            sock.close()
            raise
    else:
        sock = socket.create_connection((host, port), timeout=timeout)
    if scheme == "tls":
        return TLSLineConn(_wrap_tls(sock, host, fingerprint))
    sock.settimeout(None)
    return LineConn(sock)


def _wrap_tls(sock: socket.socket, host: str, fingerprint: Optional[str]) -> socket.socket:
    if fingerprint is None:
        ctx = ssl.create_default_context()
    else:
        want = normalize_fingerprint(fingerprint)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # the pin below is the whole check
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        tls = ctx.wrap_socket(sock, server_hostname=host)
    except ssl.SSLCertVerificationError as e:
        sock.close()
        raise ssl.SSLCertVerificationError(
            "%s; a gateway's self-signed certificate needs fingerprint= "
            "(the fingerprint on the gateway's msg=listening log line)" % e) from e
    if fingerprint is not None:
        der = tls.getpeercert(binary_form=True) or b""
        got = hashlib.sha256(der).hexdigest()
        if got != want:
            tls.close()
            raise FingerprintMismatch("the Hub's certificate has fingerprint %s, not the pinned %s" % (got, want))
    return tls
