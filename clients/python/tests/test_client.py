"""The client's every call against the real gateway on the sim board."""

import asyncio
import socket
import ssl
import threading

import pytest

import openhal
from openhal import errors
from conftest import WAIT, Gateway, Proxy, need


def test_lifecycle(gateway, client):
    init = client.init
    assert init.protocol_version == "0.1"
    assert init.conformance == "full"
    assert init.principal["scope"] == "admin"
    assert len(init.boot_id) == 32
    assert init.stopped is None
    assert "hal/value" in init.notifications
    client.ping()


def test_bad_token_is_unauthorized(gateway):
    with pytest.raises(errors.Unauthorized) as e:
        openhal.connect(gateway.tcp, "gw_not-a-token", timeout=WAIT)
    assert e.value.code == -32002
    assert e.value.reason.startswith("token_")


def test_bad_urls_say_what_is_wrong():
    for url, word in (("http://x", "unknown scheme"), ("ws:///hal", "no host"),
                      ("unix://", "no socket path"), ("tcp://", "no host")):
        with pytest.raises(ValueError, match=word):
            openhal.connect(url, "t")


def test_devices_carry_pins(client):
    devs = {d.id: d for d in client.devices()}
    assert set(devs) == {"sim.led", "sim.button", "sim.door", "sim.heater", "sim.temperature", "sim.fan", "sim.meter"}
    pins = {i: d.pin for i, d in devs.items() if d.pin}
    assert pins == {"sim.led": "GPIO17", "sim.button": "GPIO27", "sim.door": "GPIO22",
                    "sim.heater": "GPIO23", "sim.fan": "GPIO18"}
    assert devs["sim.fan"].frequency == 100
    assert devs["sim.meter"].no_safe_reason
    assert [d.id for d in client.devices(kind="pwm")] == ["sim.fan"]
    assert client.device("sim.led").safe is False
    with pytest.raises(errors.DeviceNotFound) as e:
        client.device("sim.nope")
    assert e.value.reason == "device_not_found"


def test_read_write(client):
    before = client.read("sim.led")
    res = client.write("sim.led", True, reason="python test")
    assert res.status == "applied" and res.value is True
    assert res.dev_seq == before.dev_seq + 1
    got = client.read("sim.led")
    assert got.value is True and got.dev_seq == res.dev_seq and got.seq == res.seq
    t = client.read("sim.temperature", max_age_ms=60000)
    assert "temperature" in t.value
    with pytest.raises(errors.InvalidParams) as e:
        client.write("sim.fan", 150)
    assert e.value.data["device"] == "sim.fan"
    with pytest.raises(errors.InvalidParams):
        client.write("sim.led", True, timeout_ms=0)


def test_stop_and_resume(gateway, client):
    client.write("sim.led", True)
    res = client.stop("python test")
    assert res["stopped"] is True and "sim.led" in res["safeApplied"]
    with pytest.raises(errors.Stopped) as e:
        client.write("sim.led", True)
    assert e.value.code == -32006 and e.value.reason == "stopped"
    assert client.write("sim.led", False).status == "applied"  # the safe value passes
    with openhal.connect(gateway.tcp, gateway.admin_token, timeout=WAIT) as late:
        assert late.init.stopped["reason"] == "python test"
    assert client.resume()["stopped"] is False
    assert client.write("sim.led", True).status == "applied"


def test_confirmations(gateway, client):
    agent = openhal.connect(gateway.tcp, gateway.add_token("bench-agent", "control_low"), timeout=WAIT)
    try:
        ids = []
        for reason in ("approve me", "reject me", "cancel me"):
            res = agent.write("sim.heater", True, reason=reason)
            assert res.status == "pending"
            ids.append(res.confirmation["id"])
            # One request of the agent for the heater waits at a time:
            # each is resolved before the next is asked.
            pending = client.confirmations(status="pending")
            assert [c["id"] for c in pending] == [ids[-1]]
            if reason == "approve me":
                assert client.approve(ids[0])["status"] == "approved"
                assert client.read("sim.heater").value is True
            elif reason == "reject me":
                assert client.reject(ids[1], "not now")["status"] == "rejected"
            else:
                assert agent.cancel(ids[2])["status"] == "cancelled"
        with pytest.raises(errors.ConfirmationClosed):
            client.approve(ids[2])
        with pytest.raises(errors.ConfirmationNotFound):
            client.approve("c-99999999")
        with pytest.raises(errors.Forbidden):
            agent.approve(ids[0])
        assert {c["status"] for c in agent.confirmations()} == {"approved", "rejected", "cancelled"}
    finally:
        agent.close()


def test_confirmation_superseded(gateway, client):
    """Spec §7: the agent asks for the heater on, then turns it off itself;
    an admin's approval of the request then applies nothing."""
    agent = openhal.connect(gateway.tcp, gateway.add_token("py-agent", "control_low"), timeout=WAIT)
    try:
        c = agent.write("sim.heater", True, reason="preheat").confirmation
        pending = client.confirmation(c["id"])
        assert isinstance(pending, openhal.Confirmation)
        assert (pending.status, pending.value, pending.current.value) == ("pending", True, False)
        assert client.confirmations(status="pending")[0]["current"]["value"] is False
        assert agent.write("sim.heater", False).status == "applied"
        with pytest.raises(errors.ConfirmationClosed) as e:
            client.approve(c["id"])
        assert e.value.data["status"] == "superseded"
        assert client.read("sim.heater").value is False
        done = client.confirmation(c["id"])
        assert done.status == "superseded" and done.current is None
        assert done.superseded_by["principal"]["name"] == "py-agent" and done.superseded_by["value"] is False
        assert [x["id"] for x in client.confirmations(status="superseded")] == [c["id"]]
        with pytest.raises(errors.ConfirmationNotFound):
            client.confirmation("c-99999999")
    finally:
        agent.close()


def test_audit(client):
    client.write("sim.led", True, reason="audited")
    page = client.audit(limit=1000)
    writes = [e for e in page["entries"] if e.get("action") == "write" and e.get("reason") == "audited"]
    assert writes and writes[-1]["outcome"] == "applied"
    first = client.audit(limit=1)
    assert len(first["entries"]) == 1 and "next" in first


def test_every_call_has_a_timeout():
    # A listener that accepts and never answers: connect's hal/initialize
    # must give up, not hang.
    ln = socket.create_server(("127.0.0.1", 0))
    try:
        with pytest.raises(errors.CallTimeout, match="hal/initialize"):
            openhal.connect("tcp://127.0.0.1:%d" % ln.getsockname()[1], "t", timeout=0.3)
    finally:
        ln.close()


def test_calls_fail_when_the_connection_ends(gateway, client):
    gateway.stop()
    with pytest.raises(errors.ConnectionLost):
        client.ping()


def test_tls_pinning_unix_and_websocket(state_dir):
    g = Gateway(state_dir, ["--tls", "127.0.0.1:0", "--unix", state_dir + "/hal.sock", "--wss", "127.0.0.1:0"])
    try:
        assert g.fingerprint
        colons = ":".join(g.fingerprint[i:i + 2] for i in range(0, 64, 2)).upper()
        with openhal.connect(g.urls["tls"], g.admin_token, fingerprint=colons, timeout=WAIT) as c:
            assert c.read("sim.led").value is False
        with pytest.raises(errors.FingerprintMismatch, match=g.fingerprint):
            openhal.connect(g.urls["tls"], g.admin_token, fingerprint="00" * 32, timeout=WAIT)
        # Pinned once, the gateway is in the known-gateways file: no pin
        # is needed any more. Without the file, the system's CAs decide.
        with openhal.connect(g.urls["tls"], g.admin_token, timeout=WAIT) as c:
            c.ping()
        with pytest.raises(ssl.SSLCertVerificationError, match="fingerprint"):
            openhal.connect(g.urls["tls"], g.admin_token, timeout=WAIT, known_gateways="")
        with openhal.connect(g.urls["unix"], g.admin_token, timeout=WAIT) as c:
            c.ping()
        need("websockets")
        with openhal.connect(g.urls["websocket"], g.admin_token, timeout=WAIT) as c:
            assert c.write("sim.led", True).status == "applied"
        wss = g.urls["wss"]
        with openhal.connect(wss, g.admin_token, fingerprint=g.fingerprint, timeout=WAIT) as c:
            assert c.read("sim.led").value is True
        with pytest.raises(errors.FingerprintMismatch):
            openhal.connect(wss, g.admin_token, fingerprint="11" * 32, timeout=WAIT)
    finally:
        g.stop()


def test_watch_tells_missed_values(gateway, client):
    proxy = Proxy(gateway.tcp_port)
    w = openhal.Watch(lambda: openhal.connect(proxy.url, gateway.admin_token, timeout=WAIT), devices=["sim.led"])
    try:
        v = w.next(WAIT)
        assert (v.device, v.value, v.initial, v.missed) == ("sim.led", False, True, 0)
        client.write("sim.led", True)
        v = w.next(WAIT)
        assert (v.value, v.initial, v.missed) == (True, False, 0)
        proxy.pause()
        for value in (False, True, False):
            last = client.write("sim.led", value)
        assert w.next(0.3) is None  # the deadline holds while it cannot connect
        proxy.resume()
        v = w.next(WAIT)
        assert (v.value, v.dev_seq, v.missed, v.reconnected, v.restarted) == (False, last.dev_seq, 2, True, False)
    finally:
        w.close()
        proxy.close()


def test_watch_follows_a_restart(state_dir):
    g = Gateway(state_dir)
    port = g.tcp_port
    w = openhal.Watch(lambda: openhal.connect("tcp://127.0.0.1:%d" % port, g.admin_token, timeout=WAIT))
    got = []
    done = threading.Event()

    def follow():
        # The values read at the reconnection say restarted; the write may
        # come before them (then sim.led is read True) or after.
        for v in w:
            got.append(v)
            if any(g.restarted for g in got) and v.device == "sim.led" and v.value is True:
                done.set()

    t = threading.Thread(target=follow, daemon=True)
    t.start()
    try:
        g.stop()
        g = Gateway(state_dir, tcp="127.0.0.1:%d" % port)
        with openhal.connect(g.tcp, g.admin_token, timeout=WAIT) as c:
            c.write("sim.led", True)
        assert done.wait(WAIT), got
        assert w.client is not None and w.client.init.boot_id
    finally:
        w.close()
        g.stop()


def test_watch_ends_when_its_token_is_revoked(gateway, client):
    token = gateway.add_token("watcher", "read")
    w = openhal.Watch(lambda: openhal.connect(gateway.tcp, token, timeout=WAIT), devices=["sim.led"])
    try:
        v = w.next(WAIT)
        assert (v.value, v.initial) == (False, True)
        client.write("sim.led", True)
        assert w.next(WAIT).value is True
        gateway.revoke_token("watcher")  # its connection is closed; a new one is refused
        with pytest.raises(errors.Unauthorized):
            w.next(WAIT)
        assert w.next(0.1) is None  # and the Watch is over
    finally:
        w.close()


def test_asyncio_flavour(gateway):
    from openhal import aio

    async def main():
        async with await aio.connect(gateway.tcp, gateway.admin_token, timeout=WAIT) as c:
            assert c.init.principal["scope"] == "admin"
            await c.ping()
            assert (await c.write("sim.led", True)).status == "applied"
            assert (await c.read("sim.led")).value is True
            with pytest.raises(errors.DeviceNotFound):
                await c.read("sim.nope")
            values = aio.watch(lambda: openhal.connect(gateway.tcp, gateway.admin_token, timeout=WAIT), ["sim.led"])
            first = await values.__anext__()
            assert (first.value, first.initial) == (True, True)
            await c.write("sim.led", False)
            assert (await values.__anext__()).value is False
            await values.aclose()

    asyncio.run(asyncio.wait_for(main(), WAIT))
