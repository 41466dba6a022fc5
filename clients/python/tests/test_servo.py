"""gpiozero's Servo and AngularServo on a servo of the real gateway, through the pin factory.

No servo moves here: the machine has no I2C bus, so the gateway's servo
sits on a PCA9685 whose bus is not there. That is honest for what these
tests show — the gateway serves the servo in fault and refuses its writes
with what failed, and the factory finds the servo by its id, shows it as a
50 Hz pin, converts the angle it holds to gpiozero's duty cycle and
gpiozero's pulse to the gateway's angle (the audit log records the angle
each refused write asked for). The servo's moves on a chip are the Go
tests' (internal/board/hardware: the PCA9685's register traffic).
"""

import os

import pytest

from conftest import WAIT, Gateway, need

gpiozero = need("gpiozero")
from gpiozero import AngularServo, Device, Servo  # noqa: E402
from gpiozero.exc import PinInvalidState, PinPWMError  # noqa: E402

import openhal  # noqa: E402
from openhal.pinfactory import GatewayRefused, OpenHALFactory  # noqa: E402

CONFIG = """board: rpi4b
chips:
  servos: {type: pca9685, bus: 1, address: 0x40, frequency: 50}
devices:
  arm.base:
    kind: servo
    pwm: {chip: servos, channel: 0}
    minPulseUs: 500
    maxPulseUs: 2500
    minAngle: -90
    maxAngle: 90
    initial: 30
    safe: 0
    risk: low
  arm.lamp:
    kind: pwm
    pwm: {chip: servos, channel: 15}
    risk: low
"""


@pytest.fixture
def arm(state_dir):
    path = os.path.join(state_dir, "arm.yaml")
    with open(path, "w") as f:
        f.write(CONFIG)
    g = Gateway(state_dir, ["--config", path])
    yield g
    g.stop()


@pytest.fixture
def arm_client(arm):
    c = openhal.connect(arm.tcp, arm.admin_token, timeout=WAIT)
    yield c
    c.close()


@pytest.fixture
def factory(arm, arm_client):
    f = OpenHALFactory(arm.tcp, arm.admin_token, timeout=WAIT, stop_script=False)
    Device.pin_factory = f
    yield f
    Device.pin_factory = None
    f.close()


def asked(client, device):
    """The values the audit log records written to device, in order."""
    return [e.get("value") for e in client.audit(limit=1000)["entries"]
            if e.get("action") == "write" and e.get("device") == device]


def wait_fault(client, device):
    """The device's descriptor once it is in fault: now, or at the
    hal/deviceState that says so."""
    q = client.subscribe()
    try:
        d = client.device(device)
        while d.state != "fault":
            n = q.get(timeout=WAIT)
            assert n is not None, "connection ended"
            method, params = n
            if method == "hal/deviceState" and params.get("device") == device:
                d = client.device(device)
        return d
    finally:
        client.unsubscribe(q)


def test_servo_descriptor_and_fault(arm, arm_client):
    d = arm_client.device("arm.base")
    assert d.kind == "x.servo" and d.chip == "pca9685"
    assert (d.min_pulse_us, d.max_pulse_us) == (500, 2500)
    assert d.schema["unit"] == "deg" and (d.schema["minimum"], d.schema["maximum"]) == (-90, 90)
    assert abs(d.frequency - 50.0288) < 1e-3  # the prescaler's nearest to 50 Hz
    # The chip's bus is not there: no start failure, a fault saying so,
    # reported as the servo sends its initial angle, just after the start.
    d = wait_fault(arm_client, "arm.base")
    assert "chips.servos (pca9685 at 0x40 on I2C bus 1): open its bus: open I2C bus 1: no I2C bus" in d.fault, d
    with pytest.raises(openhal.HubError) as e:
        arm_client.write("arm.base", 10)
    assert e.value.code == -32007 and "open I2C bus 1" in str(e.value)


def test_angular_servo_converts_through_the_pulse_range(arm_client, factory):
    # The script's own scale is the gateway's: angles pass as they are.
    s = AngularServo("arm.base", initial_angle=None, min_angle=-90, max_angle=90,
                     min_pulse_width=0.5 / 1000, max_pulse_width=2.5 / 1000)
    assert s.pwm_device.pin.frequency == 50
    assert abs(s.angle - 30) < 1e-6  # the gateway's initial angle, read
    with pytest.raises(GatewayRefused) as e:
        s.angle = 45
    assert e.value.code == -32007
    s.close()
    # gpiozero's Servo is 1..2 ms over -1..1: its min() is 1 ms, which is
    # -45° on this 0.5..2.5 ms servo; its max() 2 ms, +45°.
    s = Servo("arm.base", initial_value=None)
    assert abs(s.value - (1833.333333 - 1500) / 500) < 1e-6  # 30° is 1.8333 ms: beyond Servo's max
    for move in (s.min, s.max):
        with pytest.raises(GatewayRefused):
            move()
    s.close()
    assert asked(arm_client, "arm.base")[-3:] == [45, -45, 45]
    # A pulse the servo does not take is refused before anything is sent.
    s = AngularServo("arm.base", initial_angle=None, min_pulse_width=0.3 / 1000, max_pulse_width=2.5 / 1000)
    with pytest.raises(PinInvalidState, match="a pulse of 300.0 µs is outside it"):
        s.min()
    s.close()
    assert len(asked(arm_client, "arm.base")) == 3


def test_pca9685_pwm_frequency(factory):
    pin = factory.pin("arm.lamp")
    pin.frequency = 50  # PWMOutputDevice(frequency=50): the chip makes 50 Hz as 50.03 Hz, the same
    assert pin.frequency == 50
    with pytest.raises(PinPWMError, match="50.0288 Hz"):
        pin.frequency = 60
