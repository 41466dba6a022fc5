"""Pending is never silent (issue 32): a write that became a Confirmation
Request, through the client's Pending and through gpiozero scripts on the
real gateway's sim board, where sim.heater (GPIO23) is of high risk and
an agent's token control_low. Each outcome is the admin's act (or the
gateway's expiry) seen as a notification: nothing sleeps."""

import asyncio
import os
import subprocess
import sys
import threading

import pytest

import openhal
from openhal import aio, errors
from conftest import HERE, WAIT, Gateway, need

gpiozero = need("gpiozero")
from gpiozero import Device, GPIOZeroError, OutputDevice  # noqa: E402
from gpiozero.exc import PinError  # noqa: E402

from openhal.pinfactory import (  # noqa: E402
    OpenHALFactory, PinApprovalExpired, PinApprovalPending, PinRejectedByStop, PinStopped, WriteAwaitsApproval,
)


@pytest.fixture
def agent_token(gateway):
    return gateway.add_token("gpio-agent", "control_low")


@pytest.fixture
def agent(gateway, agent_token):
    c = openhal.connect(gateway.tcp, agent_token, timeout=WAIT)
    yield c
    c.close()


def requested(q, device="sim.heater"):
    """The next confirmation request for device, from a subscribe() queue."""
    while True:
        note = q.get(timeout=WAIT)
        assert note is not None, "the admin's connection ended"
        method, params = note
        if method == "hal/confirmationRequested" and params["confirmation"]["device"] == device:
            return params["confirmation"]


def following(pending):
    """Events set once pending.wait() has subscribed and made its first
    look, so that what the test does next reaches it as a notification."""
    looked = threading.Event()
    c = pending.client
    look = c.confirmation

    def confirmation(id, timeout=None):
        try:
            return look(id, timeout)
        finally:
            looked.set()
    c.confirmation = confirmation
    return looked


def in_thread(fn):
    """Runs fn in a thread; the returned function gives its result or raises its error."""
    out = {}

    def run():
        try:
            out["ok"] = fn()
        except BaseException as e:  # noqa: B902 (handed to the test)
            out["err"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()

    def result():
        t.join(WAIT)
        assert not t.is_alive(), "still waiting"
        if "err" in out:
            raise out["err"]
        return out["ok"]
    return result


# -- the client: write answers a Pending ------------------------------------


def test_write_answers_a_typed_pending(client, agent):
    p = agent.write("sim.heater", True, reason="preheat")
    assert isinstance(p, openhal.Pending) and isinstance(p, openhal.WriteResult)
    assert (p.status, p.device, p.value) == ("pending", "sim.heater", True)
    assert p.id.startswith("c-") and p.confirmation["id"] == p.id  # what callers read before
    assert p.expires is not None and p.expires_at == p.confirmation["expiresAt"]
    assert p.check().status == "pending"
    with pytest.raises(errors.ApprovalPending) as e:
        p.wait(timeout=0)
    assert e.value.id == p.id and e.value.waited == 0 and "gateway confirm approve " + p.id in str(e.value)
    assert client.read("sim.heater").value is False
    applied = agent.write("sim.led", True)  # low risk: applied, as before
    assert type(applied) is openhal.WriteResult and applied.status == "applied"


def test_wait_returns_the_applied_write_once_approved(client, agent):
    p = agent.write("sim.heater", True, reason="preheat")
    looked = following(p)
    result = in_thread(lambda: p.wait(WAIT))
    assert looked.wait(WAIT)
    client.approve(p.id)
    res = result()
    assert type(res) is openhal.WriteResult and res.status == "applied" and res.value is True
    assert res.dev_seq == client.read("sim.heater").dev_seq
    assert client.read("sim.heater").value is True


@pytest.mark.parametrize("how, raised", [
    ("reject", errors.ApprovalRejected),
    ("cancel", errors.ApprovalCancelled),
    ("supersede", errors.ApprovalSuperseded),
    ("stop", errors.RejectedByStop),
])
def test_wait_raises_when_not_approved(client, agent, how, raised):
    p = agent.write("sim.heater", True, reason="preheat")
    looked = following(p)
    result = in_thread(lambda: p.wait(WAIT))
    assert looked.wait(WAIT)
    if how == "reject":
        client.reject(p.id, "not now")
    elif how == "cancel":
        p.cancel()
    elif how == "supersede":
        client.write("sim.heater", False, reason="the bench stays cold")
    else:
        client.stop("bench fire")
    try:
        with pytest.raises(raised) as e:
            result()
    finally:
        if how == "stop":
            client.resume()
    err = e.value
    assert isinstance(err, errors.NotApproved) and err.id == p.id and err.status == err.confirmation.status
    assert p.id in str(err) and "not applied" in str(err)
    if how == "reject":
        assert err.resolve_reason == "not now" and err.by["kind"] == "operator" and not isinstance(err, errors.GatewayStopped)
    if how == "supersede":
        assert err.superseded_by["value"] is False
    if how == "stop":
        assert isinstance(err, errors.GatewayStopped) and err.code == -32006
    assert client.read("sim.heater").value is False


def test_async_wait(client, gateway, agent_token):
    async def run():
        async with await aio.connect(gateway.tcp, agent_token, timeout=WAIT) as c:
            p = await c.write("sim.heater", True)
            await asyncio.to_thread(client.approve, p.id)
            return await aio.wait(p, WAIT)
    assert asyncio.run(run()).value is True


def test_stop_is_caught_by_type(client):
    client.stop("bench fire")
    try:
        with pytest.raises(openhal.GatewayStopped) as e:
            client.write("sim.led", True)
        assert isinstance(e.value, errors.Stopped) and e.value.reason == "stopped"
    finally:
        client.resume()


# -- gpiozero: the pin factory raises, or waits when asked ---------------------


@pytest.fixture
def agent_factory(gateway, agent_token, request):
    factories = []

    def make(**kw):
        f = OpenHALFactory(gateway.tcp, agent_token, timeout=WAIT, stop_script=False, **kw)
        Device.pin_factory = f
        factories.append(f)
        return f
    yield make
    Device.pin_factory = None
    for f in factories:
        f.close()


def test_pending_raises_and_the_pin_keeps_its_value(client, agent_factory):
    agent_factory()
    heater = OutputDevice(23)
    with pytest.raises(PinApprovalPending) as e:
        heater.on()
    err = e.value
    for cls in (PinError, GPIOZeroError, openhal.ApprovalPending, openhal.ApprovalError, WriteAwaitsApproval):
        assert isinstance(err, cls), cls
    assert err.id.startswith("c-") and (err.device, err.value) == ("sim.heater", True) and err.expires_at
    assert str(err).startswith("GPIO23 (sim.heater): ") and "not applied" in str(err)
    assert heater.pin._value is not True  # nothing cached that was not applied
    assert heater.value == 0 and not heater.is_active
    assert client.confirmation(err.id).status == "pending"  # a person may still approve it
    heater.close()


def test_wait_approval_setting(gateway, agent_token, monkeypatch):
    for env, arg, want in (("", None, 0), ("30", None, 30), ("2.5", None, 2.5), ("30", 0, 0)):
        monkeypatch.setenv("OPENHAL_WAIT_APPROVAL", env)
        f = OpenHALFactory(gateway.tcp, agent_token, timeout=WAIT, stop_script=False, wait_approval=arg)
        assert f.wait_approval == want
        f.close()
    for env, arg, word in (("soon", None, "OPENHAL_WAIT_APPROVAL='soon'"), ("-1", None, "OPENHAL_WAIT_APPROVAL='-1'"),
                           ("", -5, "wait_approval=-5"), ("nan", None, "'nan'")):
        monkeypatch.setenv("OPENHAL_WAIT_APPROVAL", env)
        with pytest.raises(GPIOZeroError, match=word):
            OpenHALFactory(gateway.tcp, agent_token, timeout=WAIT, stop_script=False, wait_approval=arg)


def test_waiting_pin_raises_when_it_expires(state_dir, monkeypatch):
    """A request of 1 s: the wait ends with its expiry, told by the
    gateway's hal/confirmationResolved, well before the wait's own 20 s."""
    path = os.path.join(state_dir, "short.yaml")
    with open(path, "w") as f:
        f.write("board: sim\ndevices:\n  sim.heater:\n    confirmTtl: 1s\n")
    g = Gateway(state_dir, ["--config", path])
    try:
        f = OpenHALFactory(g.tcp, g.add_token("gpio-agent", "control_low"), timeout=WAIT, stop_script=False,
                           wait_approval=WAIT)
        Device.pin_factory = f
        heater = OutputDevice(23)
        with pytest.raises(openhal.ApprovalExpired) as e:
            heater.on()
        assert isinstance(e.value, PinApprovalExpired) and isinstance(e.value, PinError)
        assert e.value.status == "expired" and "expired" in str(e.value)
        assert heater.value == 0
        heater.close()
    finally:
        Device.pin_factory = None
        f.close()
        g.stop()


# Real scripts, as users run them: the factory from the environment,
# OPENHAL_WAIT_APPROVAL the only change that makes them wait.
WAITING_SCRIPT = """
import openhal
from gpiozero import Device, GPIOZeroError, OutputDevice
from openhal.pinfactory import OpenHALFactory
Device.pin_factory = OpenHALFactory()
heater = OutputDevice(23)
print("asking", flush=True)
try:
    heater.on()
    print("on", heater.value, flush=True)
except openhal.GatewayStopped as e:
    print("stopped", type(e).__name__, isinstance(e, GPIOZeroError), heater.value, flush=True)
except openhal.NotApproved as e:
    print(e.status, type(e).__name__, isinstance(e, GPIOZeroError), heater.value, flush=True)
"""


def run_script(gateway, token, script, **env):
    full = dict(os.environ, GATEWAY_HUB=gateway.tcp, GATEWAY_TOKEN=token, PYTHONPATH=os.path.dirname(HERE), **env)
    return subprocess.Popen([sys.executable, "-c", script], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("act, said", [
    ("approve", "on 1"),
    ("reject", "rejected PinApprovalRejected True 0"),
    ("stop", "stopped PinRejectedByStop True 0"),
])
def test_waiting_script(gateway, client, agent_token, act, said):
    q = client.subscribe()
    p = run_script(gateway, agent_token, WAITING_SCRIPT, OPENHAL_WAIT_APPROVAL=str(WAIT))
    try:
        assert p.stdout.readline() == "asking\n", p.stderr.read()
        c = requested(q)
        if act == "approve":
            client.approve(c["id"])
        elif act == "reject":
            client.reject(c["id"], "not today")
        else:
            client.stop("bench fire")
        out, err = p.communicate(timeout=WAIT)
    finally:
        p.kill()
        if act == "stop":
            client.resume()
    assert p.returncode == 0, err
    assert out.strip() == said, err
    assert client.read("sim.heater").value is (act == "approve")


NOT_WAITING_SCRIPT = """
import openhal
from gpiozero import Device, OutputDevice
from openhal.pinfactory import OpenHALFactory, PinApprovalPending
Device.pin_factory = OpenHALFactory()
heater = OutputDevice(23)
try:
    heater.on()
except PinApprovalPending as e:
    print("pending", e.id, e.device, e.value, heater.value)
"""


def test_script_learns_its_write_is_pending(gateway, client, agent_token):
    out = run_script(gateway, agent_token, NOT_WAITING_SCRIPT).communicate(timeout=WAIT)[0].split()
    assert out[0] == "pending" and out[2:] == ["sim.heater", "True", "0"], out
    assert client.confirmation(out[1]).status == "pending"


STOPPED_SCRIPT = """
import openhal
from gpiozero import LED
led = LED(17)
try:
    led.on()
except openhal.GatewayStopped as e:
    print("caught", type(e).__name__, e.code, e.reason)
"""


def test_script_catches_the_stop_by_type(gateway, client):
    """GPIOZERO_PIN_FACTORY picks the factory as in test_gpiozero's entry point test: here by import."""
    client.stop("bench fire")
    try:
        script = "from gpiozero import Device\nfrom openhal.pinfactory import OpenHALFactory\n" \
                 "Device.pin_factory = OpenHALFactory()\n" + STOPPED_SCRIPT
        out, err = run_script(gateway, gateway.admin_token, script).communicate(timeout=WAIT)
    finally:
        client.resume()
    assert out.strip() == "caught PinStopped -32006 stopped", err
    assert issubclass(PinStopped, errors.Stopped) and issubclass(PinRejectedByStop, openhal.GatewayStopped)


def test_pending_in_a_blink_thread_ends_a_waiting_script(gateway, client, agent_token):
    """heater.blink() in gpiozero's thread: its first on() becomes a
    request; the thread ends with PinApprovalPending, and the script
    waiting in the main thread ends with it too, not silently."""
    script = ("from gpiozero import Device, LED, Button\nfrom openhal.pinfactory import OpenHALFactory\n"
              "Device.pin_factory = OpenHALFactory()\nheater = LED(23)\nbutton = Button(27)\n"
              "heater.blink(on_time=1, off_time=1)\nbutton.wait_for_press()\nprint('pressed')\n")
    p = run_script(gateway, agent_token, script)
    try:
        out, err = p.communicate(timeout=WAIT)
    finally:
        p.kill()
    assert p.returncode == 1 and "pressed" not in out, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("openhal.pinfactory.PinApprovalPending: GPIO23 (sim.heater): "), err
