"""Trust on first use, as the gateway CLI does it (docs/python.md): the
known-gateways file, a rogue with another certificate for a known gateway
id, a gateway met for the first time, plain URLs off loopback. The rogue
is a TLS server that keeps every byte a client sends after the handshake:
a client that trusted it would send its hal/initialize, token and all."""

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time

import pytest

import openhal
from openhal import errors, known
from conftest import BIN, WAIT, Gateway, need


def _entries(path):
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]


@pytest.fixture
def tls_gateway(state_dir):
    g = Gateway(state_dir, ["--tls", "127.0.0.1:0", "--wss", "127.0.0.1:0"])
    with open(os.path.join(state_dir, "gateway.id")) as f:
        g.id = f.read().strip()
    yield g
    g.stop()


def certificate_for(gateway_id):
    """cert.pem and key.pem of a certificate made by the gateway itself for
    gateway_id: a `gateway run` on a state directory holding that id."""
    d = tempfile.mkdtemp(prefix="openhal-rogue-")
    with open(os.path.join(d, "gateway.id"), "w") as f:
        f.write(gateway_id + "\n")
    g = Gateway(d, ["--tls", "127.0.0.1:0"])
    g.stop()
    return d, os.path.join(d, "tls", "cert.pem"), os.path.join(d, "tls", "key.pem")


class Rogue:
    """A TLS listener with another gateway's certificate that records what
    clients send it."""

    def __init__(self, cert, key):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.ln = socket.create_server(("127.0.0.1", 0))
        self.port = self.ln.getsockname()[1]
        self.got = b""
        self.lock = threading.Lock()
        self.threads = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self.threads.append(t)

    def _accept(self):
        while True:
            try:
                c, _ = self.ln.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(c,), daemon=True)
            t.start()
            self.threads.append(t)

    def _serve(self, c):
        c.settimeout(WAIT)
        try:
            with self.ctx.wrap_socket(c, server_side=True) as s:
                while True:
                    data = s.recv(65536)
                    if not data:
                        return
                    with self.lock:
                        self.got += data
        except (OSError, ssl.SSLError):
            pass

    def received(self):
        self.ln.close()
        for t in self.threads:
            t.join(WAIT)
        with self.lock:
            return self.got


def test_a_pin_records_the_gateway(tls_gateway, known_gateways):
    g = tls_gateway
    with openhal.connect(g.urls["tls"], g.admin_token, fingerprint=g.fingerprint, timeout=WAIT) as c:
        c.ping()
    assert _entries(known_gateways) == ["%s %s" % (g.id, g.fingerprint)]
    assert os.stat(known_gateways).st_mode & 0o777 == 0o600
    with openhal.connect(g.urls["tls"], g.admin_token, timeout=WAIT) as c:
        c.ping()
    need("websockets")
    with openhal.connect(g.urls["wss"], g.admin_token, timeout=WAIT) as c:
        c.ping()
    assert len(_entries(known_gateways)) == 1


def test_the_same_file_as_the_cli(tls_gateway, known_gateways):
    """What the gateway CLI records, the Python client trusts, and the
    other way round."""
    g = tls_gateway
    env = dict(os.environ, GATEWAY_TOKEN=g.admin_token)
    subprocess.run([BIN, "read", "sim.led", "--hub", g.urls["tls"], "--fingerprint", g.fingerprint],
                   check=True, capture_output=True, text=True, timeout=WAIT, env=env)
    with openhal.connect(g.urls["tls"], g.admin_token, timeout=WAIT) as c:
        c.ping()
    os.remove(known_gateways)
    with openhal.connect(g.urls["tls"], g.admin_token, fingerprint=g.fingerprint, timeout=WAIT) as c:
        c.ping()
    r = subprocess.run([BIN, "read", "sim.led", "--hub", g.urls["tls"]], capture_output=True, text=True,
                       timeout=WAIT, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout == "false\n", r.stderr


def test_another_certificate_for_a_known_id_is_refused(tls_gateway, known_gateways):
    g = tls_gateway
    with openhal.connect(g.urls["tls"], g.admin_token, fingerprint=g.fingerprint, timeout=WAIT) as c:
        c.ping()
    before = open(known_gateways).read()
    d, cert, key = certificate_for(g.id)
    try:
        rogue = Rogue(cert, key)
        asked = []
        for url in ("tls://127.0.0.1:%d" % rogue.port, "wss://127.0.0.1:%d/hal" % rogue.port):
            if url.startswith("wss:") and not _have("websockets"):
                continue
            with pytest.raises(errors.GatewayChanged) as e:
                openhal.connect(url, g.admin_token, timeout=WAIT, ask=lambda p: asked.append(p) or True)
            msg = str(e.value)
            assert g.fingerprint in msg and e.value.presented.fingerprint in msg
            assert "%s line 6" % known_gateways in msg and "remove line 6 of %s" % known_gateways in msg
            assert e.value.recorded == g.fingerprint and e.value.line == 6
            assert e.value.presented.id == g.id
        assert asked == []
        got = rogue.received()
        assert g.admin_token.encode() not in got
        assert b"hal/initialize" not in got
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert open(known_gateways).read() == before


def _have(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def test_first_contact(tls_gateway, known_gateways):
    g = tls_gateway
    # Nobody to ask (pytest's standard input is no terminal): refused,
    # with what to compare and how to trust it; nothing recorded.
    with pytest.raises(errors.UnknownGateway) as e:
        openhal.connect(g.urls["tls"], g.admin_token, timeout=WAIT)
    assert g.fingerprint in str(e.value) and "fingerprint=" in str(e.value) and "gateway status" in str(e.value)
    assert e.value.presented.id == g.id
    with pytest.raises(errors.UnknownGateway):
        openhal.connect(g.urls["tls"], g.admin_token, timeout=WAIT, ask=lambda p: False)
    assert not os.path.exists(known_gateways)
    # A yes, after a wait longer than the gateway gives a connection to
    # initialize: asked between two dials, so the wait costs nothing.
    asked = []

    def yes(p):
        asked.append(p)
        return True
    with openhal.connect(g.urls["tls"], g.admin_token, timeout=WAIT, ask=yes) as c:
        c.ping()
    assert [(p.id, p.fingerprint, p.url) for p in asked] == [(g.id, g.fingerprint, g.urls["tls"])]
    assert _entries(known_gateways) == ["%s %s" % (g.id, g.fingerprint)]


def test_an_unknown_rogue_receives_nothing(tls_gateway, known_gateways):
    d, cert, key = certificate_for("fedcba9876543210fedcba9876543210")
    try:
        rogue = Rogue(cert, key)
        with pytest.raises(errors.UnknownGateway):
            openhal.connect("tls://127.0.0.1:%d" % rogue.port, tls_gateway.admin_token, timeout=WAIT)
        assert rogue.received() == b""
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_plain_off_loopback_needs_insecure():
    for url in ("tcp://192.0.2.7:7751", "ws://gw.lan:7750/hal"):
        start = time.monotonic()
        with pytest.raises(errors.ClearTextRefused, match="in clear"):
            openhal.connect(url, "secret", timeout=WAIT)
        assert time.monotonic() - start < 1
    with pytest.raises(OSError):
        openhal.connect("tcp://192.0.2.7:7751", "secret", timeout=0.3, insecure=True)


def test_gateway_id_of_the_certificate(tls_gateway):
    der = ssl.PEM_cert_to_DER_cert(open(os.path.join(tls_gateway.dir, "tls", "cert.pem")).read())
    assert known.gateway_id(der) == tls_gateway.id
    assert known.gateway_id(b"\x30\x03\x02\x01\x00") == ""
    assert known.gateway_id(b"") == ""


def test_names_are_escaped(tmp_path):
    path = str(tmp_path / "known")
    p = known.Presented("wss://10.0.0.5:7752/hal", "10.0.0.5:7752", "Bench Pi, 2%", "", "ab" * 32, path)
    known.record(p)
    assert _entries(path) == ["10.0.0.5:7752 %s Bench%%20Pi%%2C%%202%%25,10.0.0.5:7752" % ("ab" * 32)]
    k = known.read(path)
    assert k.entries[0].seen == ["Bench Pi, 2%", "10.0.0.5:7752"]
    assert k.add("0123456789abcdef0123456789abcdef", "cd" * 32, ["lab"])
    assert k.render() == k.render()
    assert known.KnownGateways(path, k.render()).entries[1].seen == ["lab"]
    with open(path, "a") as f:
        f.write("broken\n")
    with pytest.raises(ValueError, match="line 7"):
        known.read(path)
