"""Trust in a gateway's certificate, the way SSH trusts a host key.

The known-gateways file is the gateway CLI's (docs/discovery.md): one
gateway a line, ``KEY FINGERPRINT [SEEN-AS,...]``, KEY the gateway id its
certificate carries (the URI SAN ``urn:openhal:gateway:ID``) or, for a
certificate without one, the ``host:port`` dialled; SEEN-AS the names and
addresses it was reached as, comma-separated, each with space, comma,
``%`` and control characters written ``%XX``. This module reads and writes
the same file with the same rules as the Go client (halclient):

- a certificate the file has is trusted;
- a certificate other than the one the file has for the gateway's id, or
  for an address it was reached at, is refused (GatewayChanged), naming
  both fingerprints and the line to remove;
- a gateway the file does not know is trusted by a pin (fingerprint=),
  or by a person at a terminal, and recorded; otherwise refused
  (UnknownGateway), saying what to compare.

The check runs once the TLS handshake is done and before anything is
sent: no token goes to a gateway that is not trusted.
"""

import ipaddress
import os
import re
import sys
from typing import Callable, List, Optional, Tuple

from .errors import ClearTextRefused, GatewayChanged, UnknownGateway

ENV = "GATEWAY_KNOWN_GATEWAYS"
HEADER = """# gateway known_gateways: the gateways this user trusts, one a line:
#   KEY FINGERPRINT [SEEN-AS,...]
# KEY is the gateway id the certificate carries, or host:port for a
# certificate without one; FINGERPRINT its SHA-256; SEEN-AS the names and
# addresses it was reached as. Remove a line to meet that gateway anew.
"""
_ID_URI = re.compile(r"^urn:openhal:gateway:([0-9a-f]{32})$")
_FP = re.compile(r"^[0-9a-f]{64}$")


def default_file() -> str:
    """$GATEWAY_KNOWN_GATEWAYS, else known_gateways in the gateway folder
    of the user's configuration folder, where Go's os.UserConfigDir puts
    it: $XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application
    Support on macOS, %AppData% on Windows."""
    if os.environ.get(ENV):
        return os.environ[ENV]
    if sys.platform == "win32":
        base = os.environ.get("APPDATA", "")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Application Support")
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "gateway", "known_gateways")


def is_loopback(host: str) -> bool:
    """localhost, or an address of 127.0.0.0/8 or ::1; every other name
    may resolve anywhere."""
    if host.lower() == "localhost":
        return True
    try:
        a = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped:
        a = a.ipv4_mapped
    return a.is_loopback


def refuse_clear_text(url: str, host: str, insecure: bool) -> None:
    """A plain URL (ws://, tcp://) to a host off loopback carries the
    token in clear: refused before anything is dialled, unless insecure."""
    if host and not insecure and not is_loopback(host):
        raise ClearTextRefused(
            "%s is a plain transport to a host off loopback: the token would cross the network in clear; "
            "use the gateway's wss:// or tls:// URL, or pass insecure=True" % url)


# -- the certificate ------------------------------------------------------

def _tlv(b: bytes, i: int) -> Tuple[int, int, int]:
    """The DER element at i: (tag, start of its content, its end)."""
    tag = b[i]
    n = b[i + 1]
    i += 2
    if n & 0x80:
        k = n & 0x7F
        n = int.from_bytes(b[i:i + k], "big")
        i += k
    if i + n > len(b):
        raise ValueError("truncated DER")
    return tag, i, i + n


def _children(b: bytes, start: int, end: int) -> List[Tuple[int, int, int]]:
    out = []
    while start < end:
        t = _tlv(b, start)
        out.append(t)
        start = t[2]
    return out


_SAN_OID = bytes.fromhex("551d11")  # 2.5.29.17, subjectAltName


def gateway_id(der: bytes) -> str:
    """The gateway id a certificate carries, or "" (made by an earlier
    version, the operator's own, or not readable)."""
    try:
        _, s, e = _tlv(der, 0)                       # Certificate
        _, s, e = _children(der, s, e)[0]            # tbsCertificate
        for tag, cs, ce in _children(der, s, e):
            if tag != 0xA3:                          # [3] extensions
                continue
            _, xs, xe = _tlv(der, cs)
            for _, es, ee in _children(der, xs, xe):
                parts = _children(der, es, ee)
                if der[parts[0][1]:parts[0][2]] != _SAN_OID:
                    continue
                _, vs, ve = parts[-1]                # extnValue
                _, gs, ge = _tlv(der, vs)            # GeneralNames
                for gtag, ns, ne in _children(der, gs, ge):
                    m = _ID_URI.match(der[ns:ne].decode("ascii", "replace")) if gtag == 0x86 else None
                    if m:
                        return m.group(1)
    except (IndexError, ValueError):
        pass
    return ""


class Presented:
    """A gateway's certificate as the client saw it in the handshake."""

    def __init__(self, url: str, addr: str, name: str, id: str, fingerprint: str, file: str):
        self.url, self.addr, self.name, self.id, self.fingerprint, self.file = url, addr, name, id, fingerprint, file

    @property
    def key(self) -> str:
        return self.id or self.addr

    def names(self) -> List[str]:
        """The name and address it was reached as; a loopback address says
        nothing of which gateway answers, so it is not noted."""
        out = [self.name] if self.name else []
        host = self.addr.rsplit(":", 1)[0].strip("[]")
        if not is_loopback(host):
            out.append(self.addr)
        return out

    def described(self) -> str:
        more = ['found as "%s"' % self.name] if self.name else []
        more.append("id " + self.id if self.id else "its certificate names no gateway id")
        return "%s (%s)" % (self.url, ", ".join(more))


# -- the file -------------------------------------------------------------

def _escape(s: str) -> str:
    return "".join("%%%02X" % ord(c) if c <= " " or c in ",%\x7f" else c for c in s)


def _unescape(s: str) -> str:
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), s)


class _Entry:
    def __init__(self, key: str, fingerprint: str, seen: List[str], line: int):
        self.key, self.fingerprint, self.seen, self.line = key, fingerprint, seen, line

    def format(self) -> str:
        s = self.key + " " + self.fingerprint
        if self.seen:
            s += " " + ",".join(_escape(n) for n in self.seen)
        return s

    def seen_as(self, name: str) -> bool:
        return any(n.lower() == name.lower() for n in self.seen)


class KnownGateways:
    """The file's lines as they are, and the entries among them."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.lines: List[str] = []
        self.entries: List[_Entry] = []
        text = text[:-1] if text.endswith("\n") else text
        if not text:
            return
        for i, line in enumerate(text.split("\n")):
            self.lines.append(line)
            f = line.split()
            if not f or f[0].startswith("#"):
                continue
            self.entries.append(self._entry(f, i + 1))

    def _entry(self, f: List[str], line: int) -> _Entry:
        where = "%s line %d" % (self.path, line)
        if len(f) not in (2, 3):
            raise ValueError("%s: want KEY FINGERPRINT [SEEN-AS,...] (fix or remove the line)" % where)
        fp = f[1].replace(":", "").lower()
        if not _FP.match(fp):
            raise ValueError("%s: fingerprint %r: want the 64 hex digits of a SHA-256 (fix or remove the line)" % (where, f[1]))
        seen = [_unescape(s) for s in f[2].split(",")] if len(f) == 3 else []
        return _Entry(f[0], fp, seen, line)

    def conflict(self, key: str, names: List[str], fp: str) -> Optional[_Entry]:
        for e in self.entries:
            if e.fingerprint == fp:
                continue
            if e.key.lower() == key.lower() or any(e.key.lower() == n.lower() or e.seen_as(n) for n in names):
                return e
        return None

    def by_fingerprint(self, fp: str) -> Optional[_Entry]:
        return next((e for e in self.entries if e.fingerprint == fp), None)

    def add(self, key: str, fp: str, names: List[str]) -> bool:
        e = self.by_fingerprint(fp)
        if e is None:
            if not self.lines:
                self.lines = HEADER.rstrip("\n").split("\n")
            self.entries.append(_Entry(key, fp, list(names), 0))
            return True
        new = [n for n in names if not e.seen_as(n) and e.key.lower() != n.lower()]
        e.seen += new
        return bool(new)

    def render(self) -> str:
        """The file's text, each entry's line as it now is; a new entry
        gets its line at the end."""
        for e in self.entries:
            if e.line == 0:
                self.lines.append(e.format())
                e.line = len(self.lines)
            else:
                self.lines[e.line - 1] = e.format()
        return "\n".join(self.lines) + "\n" if self.lines else ""


def _lock(f, exclusive: bool) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: no lock, as a last writer wins anyway
        return
    fcntl.flock(f.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)


def read(path: str) -> KnownGateways:
    """The file; a missing file is an empty one."""
    try:
        f = open(path, "r", encoding="utf-8")
    except FileNotFoundError:
        return KnownGateways(path, "")
    with f:
        _lock(f, False)
        return KnownGateways(path, f.read())


def update(path: str, change: Callable[[KnownGateways], bool]) -> None:
    """Changes the file under an exclusive lock, in place, mode 0600 in a
    folder 0700 when new."""
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+", encoding="utf-8") as f:
        _lock(f, True)
        text = f.read()
        k = KnownGateways(path, text)
        if not change(k):
            return
        out = k.render()
        if out != text:
            f.seek(0)
            f.truncate()
            f.write(out)
            f.flush()
            os.fsync(f.fileno())


def _changed(p: Presented, e: _Entry) -> GatewayChanged:
    return GatewayChanged(
        "the gateway at %s presented a certificate with SHA-256 fingerprint %s, but %s line %d trusts %s for %s; "
        "refused, nothing was sent: the gateway has a new certificate, or something in between is not the gateway. "
        "If `gateway status` on the gateway shows %s, remove line %d of %s and connect again"
        % (p.described(), p.fingerprint, p.file, e.line, e.fingerprint, e.key, p.fingerprint, e.line, p.file),
        presented=p, recorded=e.fingerprint, line=e.line)


def record(p: Presented) -> None:
    """Files p under its key with the names it was reached as, unless the
    file says otherwise for it by now."""
    def change(k: KnownGateways) -> bool:
        e = k.conflict(p.key, p.names(), p.fingerprint)
        if e is not None:
            raise _changed(p, e)
        return k.add(p.key, p.fingerprint, p.names())
    update(p.file, change)


Ask = Callable[[Presented], bool]


def ask_at_terminal(p: Presented) -> bool:
    """Asks on standard error, reads standard input: only "yes" trusts."""
    out = sys.stderr
    out.write("The gateway at %s is not known yet.\n" % p.url)
    if p.name:
        out.write("  name:        %s\n" % p.name)
    out.write("  id:          %s\n" % (p.id or "none (a certificate made before gateway ids; filed under %s)" % p.addr))
    out.write("  fingerprint: SHA-256 %s\n" % p.fingerprint)
    out.write("Compare it with the one `gateway status` shows on the gateway itself (or its console).\n")
    out.write("Trust it, and record it in %s (yes/no)? " % p.file)
    out.flush()
    return sys.stdin.readline().strip().lower() == "yes"


def terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()


def check(p: Presented, pin: Optional[str]) -> None:
    """Decides the certificate p: returns when trusted (recording it when
    new), raises GatewayChanged, or UnknownGateway for a gateway met for
    the first time, which the caller may put to a person (ask) after
    hanging up, since a person may take longer than the gateway waits.
    pin is a normalized fingerprint the caller checked against p."""
    k = read(p.file)
    e = k.conflict(p.key, p.names(), p.fingerprint)
    if e is not None:
        raise _changed(p, e)
    if k.by_fingerprint(p.fingerprint) is not None or pin is not None:
        try:
            record(p)
        except OSError:
            pass  # trusted already: a file that cannot be written costs only the note
        return
    raise UnknownGateway(
        "the gateway at %s is not known yet (not in %s): its certificate's SHA-256 fingerprint is %s. "
        "Compare it with the one `gateway status` shows on the gateway itself (or its console), then pass "
        "fingerprint=%r (or $GATEWAY_FINGERPRINT), or run once at a terminal to answer yes; it is then recorded. "
        "Nothing was sent" % (p.described(), p.file, p.fingerprint, p.fingerprint), presented=p)
