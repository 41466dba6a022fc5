"""gpiozero scripts, unchanged, on the gateway's sim board through the pin factory."""

import os
import signal
import subprocess
import sys
import tempfile
import threading

import pytest

import openhal
from conftest import HERE, WAIT, need

gpiozero = need("gpiozero")
from gpiozero import LED, Button, Device, GPIOZeroError, PWMOutputDevice  # noqa: E402
from gpiozero.exc import PinInvalidFunction, PinInvalidPin, PinPWMError, PinPWMUnsupported  # noqa: E402

from openhal import errors  # noqa: E402
from openhal.pinfactory import GatewayRefused, OpenHALFactory, PinApprovalPending, PinStopped  # noqa: E402


@pytest.fixture
def factory(gateway, client):
    # stop_script=False: a refusal in a gpiozero thread must not SIGINT pytest.
    f = OpenHALFactory(gateway.tcp, gateway.admin_token, timeout=WAIT, stop_script=False)
    Device.pin_factory = f
    yield f
    Device.pin_factory = None
    f.close()


def test_led_blinks_sim_led(client, factory):
    w = openhal.Watch(lambda: client, devices=["sim.led"], reconnect=False)
    assert w.next(WAIT).initial
    seen = [False]
    led = LED(17)
    led.blink(on_time=0.02, off_time=0.02, n=3, background=False)
    while len(seen) < 8:
        v = w.next(WAIT)
        assert v is not None, seen
        seen.append(v.value)
    # The value held when the watch began, LED(17) starting off as
    # gpiozero's LED does, then the blinks.
    assert seen == [False, False] + [True, False] * 3
    assert led.pin.device == "sim.led"
    led.close()


def test_button_fires_when_pressed(client, factory):
    pressed, released = threading.Event(), threading.Event()
    button = Button(27)
    button.when_pressed = pressed.set  # starts the edges' watch, subscribed when this returns
    button.when_released = released.set
    assert not button.is_pressed
    client.write("sim.button", True)  # the outside world presses (an admin may, on the sim board)
    assert pressed.wait(WAIT)
    assert button.is_pressed
    client.write("sim.button", False)
    assert released.wait(WAIT)
    button.close()


def test_pwm_output_device_drives_sim_fan(client, factory):
    fan = PWMOutputDevice(18)
    assert fan.frequency == 100
    fan.value = 0.5
    assert client.read("sim.fan").value == 50
    fan.value = 0.25
    assert client.read("sim.fan").value == 25
    assert fan.value == 0.25
    with pytest.raises(PinPWMError, match="100 Hz"):
        fan.frequency = 1000
    fan.close()


def test_stop_raises_in_a_gpiozero_script(client, factory):
    led = LED("GPIO17")
    led.on()
    client.stop("bench fire")
    assert not led.is_lit  # the stop drove sim.led to its safe value; the pin says so
    with pytest.raises(GatewayRefused) as e:
        led.on()
    assert isinstance(e.value, GPIOZeroError)
    assert isinstance(e.value, PinStopped) and isinstance(e.value, openhal.GatewayStopped)
    assert e.value.code == -32006 and e.value.reason == "stopped"
    assert "refused" in str(e.value)
    led.off()  # its safe value passes while stopped

    # A blinking LED's thread raises too: the stop is never dropped silently.
    failed = []
    hook = threading.excepthook
    threading.excepthook = lambda args: failed.append(args.exc_value)
    try:
        led.blink(on_time=0.01, off_time=0.01, n=1)
        led._blink_thread.join(WAIT)
    finally:
        threading.excepthook = hook
    assert failed and isinstance(failed[0], GatewayRefused) and failed[0].code == -32006
    client.resume()
    led.on()
    led.close()


def test_heater_on_then_off_supersedes_the_request(gateway, client):
    """The issue's gpiozero script: heater.on(); heater.off() with a
    control_low token. on() waits for an admin (it raises
    PinApprovalPending), off() is applied and supersedes it: the admin's
    approval afterwards applies nothing, and the heater stays off."""
    f = OpenHALFactory(gateway.tcp, gateway.add_token("gpio-agent", "control_low"), timeout=WAIT, stop_script=False)
    Device.pin_factory = f
    try:
        heater = LED(23)
        assert heater.pin.device == "sim.heater"
        with pytest.raises(PinApprovalPending) as caught:
            heater.on()
        asked = caught.value
        assert asked.id.startswith("c-") and asked.value is True
        assert heater.value == 0  # read from the gateway: not applied
        heater.off()
        with pytest.raises(errors.ConfirmationClosed):
            client.approve(asked.id)
        assert client.read("sim.heater").value is False
        c = client.confirmation(asked.id)
        assert c.status == "superseded"
        assert c.superseded_by["principal"]["name"] == "gpio-agent" and c.superseded_by["value"] is False
        heater.close()
    finally:
        Device.pin_factory = None
        f.close()


def test_pins_that_are_not_what_the_script_wants(factory):
    with pytest.raises(PinInvalidFunction):
        LED(27)  # sim.button is an input
    with pytest.raises(PinInvalidFunction):
        Button(17)  # sim.led is an output
    with pytest.raises(PinPWMUnsupported):
        PWMOutputDevice(17)
    with pytest.raises(PinInvalidPin, match="sim.led=GPIO17"):
        LED(5)
    led = LED("BOARD11")  # the header pin of GPIO17
    assert led.pin.device == "sim.led"
    led.close()
    led = LED("sim.led")
    led.close()


def test_selected_by_environment(gateway, client):
    """GPIOZERO_PIN_FACTORY=openhal finds the entry point that `pip
    install clients/python` registers; here its metadata is written by
    hand (no pip), as pip would write it."""
    need("pkg_resources")
    with tempfile.TemporaryDirectory() as site:
        info = os.path.join(site, "openhal_gateway-0.1.0.dist-info")
        os.mkdir(info)
        with open(os.path.join(info, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: openhal-gateway\nVersion: 0.1.0\n")
        with open(os.path.join(info, "entry_points.txt"), "w") as f:
            f.write(entry_points())
        env = dict(os.environ, GPIOZERO_PIN_FACTORY="openhal", GATEWAY_HUB=gateway.tcp,
                   GATEWAY_TOKEN=gateway.admin_token,
                   PYTHONPATH=os.pathsep.join([site, os.path.dirname(HERE)]))
        script = ("from gpiozero import LED, Device\n"
                  "led = LED(17)\nled.on()\nprint(type(Device.pin_factory).__name__)\n")
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=WAIT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "OpenHALFactory"
    assert client.read("sim.led").value is True


def entry_points() -> str:
    """The [gpiozero_pin_factories] entry point, read from pyproject.toml
    so that the test checks what pip would register."""
    with open(os.path.join(os.path.dirname(HERE), "pyproject.toml")) as f:
        text = f.read()
    start = text.index('[project.entry-points."gpiozero_pin_factories"]')
    lines = text[start:].splitlines()[1:]
    body = []
    for line in lines:
        if not line.strip() or line.startswith("["):
            break
        name, _, target = line.partition("=")
        body.append("%s = %s" % (name.strip(), target.strip().strip('"')))
    return "[gpiozero_pin_factories]\n" + "\n".join(body) + "\n"


SCRIPT = """
from gpiozero import LED, Button, Device
from openhal.pinfactory import OpenHALFactory
Device.pin_factory = OpenHALFactory()
led = LED(17)
button = Button(27)
led.blink(on_time=0.02, off_time=0.02)
print("ready", flush=True)
button.wait_for_press()
print("pressed", flush=True)
"""


def test_stop_ends_a_waiting_script(gateway, client):
    """The issue's bench script: it blinks in gpiozero's thread and waits
    in the main one; the operator's stop ends it with the refusal, not a
    KeyboardInterrupt nor a silent wait."""
    env = dict(os.environ, GATEWAY_HUB=gateway.tcp, GATEWAY_TOKEN=gateway.admin_token,
               PYTHONPATH=os.path.dirname(HERE))
    p = subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "ready\n", p.stderr.read()
        client.stop("bench fire")
        out, err = p.communicate(timeout=WAIT)
    finally:
        p.kill()
        client.resume()
    assert p.returncode == 1, err
    # The blink thread's traceback, then the main thread's: the refusal.
    thread, _, main = err.partition("Exception in thread")[2].rpartition("Traceback (most recent call last):")
    assert "_blink_device" in thread and "wait_for_active" in main, err  # wait_for_press is wait_for_active
    last = main.strip().splitlines()[-1]
    assert last.startswith("openhal.pinfactory.PinStopped: ") and "(-32006, stopped)" in last, err
    assert "KeyboardInterrupt" not in err and "pressed" not in out


def test_ctrl_c_still_interrupts(gateway):
    """The factory's SIGINT handler passes a real Ctrl-C on, and close()
    puts the handler before it back."""
    before, hook = signal.getsignal(signal.SIGINT), threading.excepthook
    f = OpenHALFactory(gateway.tcp, gateway.admin_token, timeout=WAIT)
    assert signal.getsignal(signal.SIGINT) == f._on_sigint
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    f.close()
    assert signal.getsignal(signal.SIGINT) == before and threading.excepthook == hook


class _Expanders:
    """A client whose gateway serves an expander's pins (the descriptors
    as hal/devices/list gives them): no test machine has an MCP23017."""

    closed = False

    def devices(self):
        return [openhal.types.Descriptor.from_json(d) for d in (
            {"id": "arm.limit", "kind": "gpio.input", "access": "r", "risk": "low", "pin": "ex1:GPA0",
             "bus": "/dev/i2c-1", "address": "0x20", "chip": "mcp23017", "channel": 0},
            {"id": "arm.lamp", "kind": "gpio.output", "access": "rw", "risk": "high", "pin": "ex1:GPB1",
             "bus": "/dev/i2c-1", "address": "0x20", "chip": "mcp23017", "channel": 9},
            {"id": "bench.led", "kind": "gpio.output", "access": "rw", "risk": "low", "pin": "pinctrl-rp1:17"},
        )]


def test_expander_pins(monkeypatch):
    """Button("ex1:GPA0"): an expander's pin by its descriptor's name, its
    number, in any case; one pin to gpiozero's reservations whichever."""
    from openhal.pinfactory import expander_pin
    monkeypatch.setattr(OpenHALFactory, "client", lambda self: _Expanders())
    f = OpenHALFactory(token="t", stop_script=False)
    for spec, want in (("ex1:GPA0", "arm.limit"), ("ex1:0", "arm.limit"), ("EX1:gpb1", "arm.lamp"),
                       ("ex1:9", "arm.lamp"), ("arm.lamp", "arm.lamp"), (17, "bench.led")):
        assert f.pin(spec).device == want, spec
    with pytest.raises(PinInvalidPin, match="arm.limit=ex1:GPA0"):
        f.pin("ex1:GPA5")
    with pytest.raises(PinInvalidPin):
        f.pin("ex2:GPA0")
    assert f._key("ex1:0") == f._key("ex1:GPA0") == ("ex1", 0)
    assert f._key("J8:11") == 17
    assert [expander_pin(s) for s in ("ex1:GPB7", "ex8:GP7", "ex1:15", "ex1:GPA8", "ex1:16", "ex1:GP8", "GPIO17", 17)] == \
        [("ex1", 15), ("ex8", 7), ("ex1", 15), None, None, None, None, None]
