"""Transports: one JSON-RPC message per line over TCP, TLS or a Unix socket
(and a message per WebSocket frame, in ws.py).

The Hub's TCP transport frames a message as one line ended by ``\\n``
(spec §2), so the standard library's sockets are all a client needs. TLS
trusts the Hub's certificate as SSH trusts a host key (openhal.known): by
a pin, the SHA-256 of its DER that `gateway status` shows, by the user's
known-gateways file, or by the system's CAs. A plain transport to a host
off loopback is refused unless asked for (insecure=True).
"""

import hashlib
import select
import socket
import ssl
import threading
from typing import Optional, Tuple, Union
from urllib.parse import urlsplit

from . import known
from .errors import FingerprintMismatch, UnknownGateway

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


def host_port(scheme: str, host: str, port: int) -> str:
    """host:port as the known-gateways file notes it (Go's
    net.JoinHostPort, lowercase, wss:// without a port on 443)."""
    if not port and scheme == "wss":
        port = 443
    host = host.lower()
    return "[%s]:%d" % (host, port) if ":" in host else "%s:%d" % (host, port)


class Trust:
    """How one dial trusts a TLS gateway: the pin, the known-gateways file
    ("" for none: the pin or the system's CAs alone) and the name it was
    found as."""

    def __init__(self, url: str, addr: str, fingerprint: Optional[str], file: str, name: str = ""):
        self.url, self.addr, self.file, self.name = url, addr, file, name
        self.pin = normalize_fingerprint(fingerprint) if fingerprint is not None else None

    @property
    def verifies(self) -> bool:
        """Whether the pin or the file replaces the system's CAs."""
        return self.pin is not None or bool(self.file)

    def judge(self, der: bytes) -> Optional[UnknownGateway]:
        """Judges the certificate der of a handshake done without the
        system's CAs: None when trusted (recorded when new), or the error
        of a gateway met for the first time, which stands unless the
        system's CAs vouch for it on a connection of its own (vouched).
        Raises FingerprintMismatch or GatewayChanged."""
        got = hashlib.sha256(der).hexdigest()
        if self.pin is not None and got != self.pin:
            raise FingerprintMismatch("the Hub's certificate has fingerprint %s, not the pinned %s" % (got, self.pin))
        if not self.file:
            return None
        try:
            known.check(self._presented(der), self.pin)
        except UnknownGateway as e:
            return e
        return None

    def vouched(self, der: bytes) -> None:
        """A certificate the system's CAs verified: trusted, not recorded,
        unless the file trusts another one for its id or address."""
        p = self._presented(der)
        e = known.read(self.file).conflict(p.key, p.names(), p.fingerprint)
        if e is not None:
            raise known._changed(p, e)

    def _presented(self, der: bytes) -> known.Presented:
        return known.Presented(self.url, self.addr, self.name, known.gateway_id(der),
                               hashlib.sha256(der).hexdigest(), self.file)


def dial(url: str, timeout: float, fingerprint: Optional[str] = None, *, known_gateways: Optional[str] = None,
         insecure: bool = False, ask: Union[None, bool, known.Ask] = None, name: str = "") -> "LineConn":
    """Connects to url within timeout seconds.

    A plain URL (tcp://, ws://) to a host off loopback is refused unless
    insecure. For tls:// and wss:// the certificate is trusted by
    fingerprint (checked, then recorded), by the known-gateways file
    known_gateways (None: the user's, openhal.known.default_file(); "":
    none), or by the system's CAs. A gateway met for the first time is put
    to ask (a callable taking openhal.known.Presented; None: the person at
    the terminal when there is one; False: nobody), recorded when trusted,
    and dialled again. ws:// and wss:// need the websockets package."""
    scheme, host, port, path = parse_url(url)
    if scheme in ("tcp", "ws"):
        known.refuse_clear_text(url, host, insecure)
    trust = None
    if scheme in ("tls", "wss"):
        file = known.default_file() if known_gateways is None else known_gateways
        trust = Trust(url, host_port(scheme, host, port), fingerprint, file, name)
    try:
        return _dial(url, timeout, trust)
    except UnknownGateway as e:
        decide = ask if callable(ask) else (known.ask_at_terminal if ask is None and known.terminal() else None)
        if decide is None or not decide(e.presented):
            raise
        known.record(e.presented)
        return _dial(url, timeout, trust)


def _dial(url: str, timeout: float, trust: Optional[Trust]) -> "LineConn":
    scheme, host, port, path = parse_url(url)
    if scheme in ("ws", "wss"):
        from .ws import WSConn
        return WSConn(url, timeout, trust)  # type: ignore[return-value]
    if scheme == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError:
            sock.close()
            raise
        sock.settimeout(None)
        return LineConn(sock)
    if scheme == "tls":
        assert trust is not None
        return TLSLineConn(_tls(host, port, timeout, trust))
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.settimeout(None)
    return LineConn(sock)


def ca_context() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def unverified_context() -> ssl.SSLContext:
    """A handshake whose certificate the pin or the file judges after it."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def _tls(host: str, port: int, timeout: float, trust: Trust) -> ssl.SSLSocket:
    return _tls_judged(host, port, timeout, trust)[0]


def _tls_judged(host: str, port: int, timeout: float, trust: Trust) -> Tuple[ssl.SSLSocket, bool]:
    """A TLS connection whose certificate is trusted, and whether the
    system's CAs are what vouch for it."""
    def connect(ctx: ssl.SSLContext) -> ssl.SSLSocket:
        sock = socket.create_connection((host, port), timeout=timeout)
        try:
            return ctx.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise

    if not trust.verifies:
        try:
            return connect(ca_context()), True
        except ssl.SSLCertVerificationError as e:
            raise ssl.SSLCertVerificationError(
                "%s; a gateway's self-signed certificate needs fingerprint= "
                "(the fingerprint `gateway status` shows on the gateway)" % e) from e
    tls = connect(unverified_context())
    try:
        unknown = trust.judge(tls.getpeercert(binary_form=True) or b"")
    except BaseException:
        tls.close()
        raise
    if unknown is None:
        return tls, False
    tls.close()
    try:
        tls = connect(ca_context())
    except (ssl.SSLError, OSError):
        raise unknown from None
    try:
        trust.vouched(tls.getpeercert(binary_form=True) or b"")
    except BaseException:
        tls.close()
        raise
    return tls, True


def probe(host: str, port: int, timeout: float, trust: Trust) -> Optional[str]:
    """Judges the gateway's certificate on a TLS connection of its own,
    closed at once, for a transport whose library sends its first bytes
    itself (the WebSocket's upgrade request): nothing is sent to a gateway
    that is not trusted. Returns the fingerprint the real connection must
    present, or None when the system's CAs are what vouch for it."""
    tls, by_ca = _tls_judged(host, port, timeout, trust)
    der = tls.getpeercert(binary_form=True) or b""
    tls.close()
    return None if by_ca else hashlib.sha256(der).hexdigest()
