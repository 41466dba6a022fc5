"""Modbus values (x.modbus, issue 31) in the client: the descriptor's
``modbus`` is a typed ModbusRegister beside its bus and unit id, and the
gpiozero pin factory takes none of them for a pin."""

import pytest

import openhal
from conftest import WAIT, need

PORT = "/dev/serial/by-id/usb-FTDI_FT232R-if00-port0"

# issue 31's descriptors, as hal/devices/list gives them.
SPEED = {"id": "vfd.speed", "kind": "x.modbus", "label": "Pump speed", "source": "board", "access": "rw",
         "risk": "high", "schema": {"type": "number", "minimum": 0, "maximum": 50, "unit": "Hz"}, "safe": 0,
         "state": "ok", "bus": PORT, "address": "1", "chip": "modbus",
         "modbus": {"table": "holding", "address": 8193, "type": "uint16", "words": 1, "scale": 0.01}}
RUN = {"id": "vfd.run", "kind": "x.modbus", "label": "Pump run", "source": "board", "access": "rw", "risk": "high",
       "schema": {"type": "boolean"}, "safe": False, "state": "ok", "bus": PORT, "address": "1", "chip": "modbus",
       "modbus": {"table": "coil", "address": 0, "type": "bool"}}
VOLTAGE = {"id": "meter.voltage", "kind": "x.modbus", "source": "board", "access": "r", "risk": "low",
           "schema": {"type": "number", "unit": "V"}, "state": "ok", "bus": "tcp://192.168.1.50:502",
           "address": "7", "chip": "modbus",
           "modbus": {"table": "input", "address": 0, "type": "float32", "words": 2, "swap": "word", "offset": -1.5}}


@pytest.mark.parametrize("raw, want", [
    (SPEED, openhal.ModbusRegister(table="holding", address=8193, type="uint16", words=1, swap="", scale=0.01, offset=0.0)),
    (RUN, openhal.ModbusRegister(table="coil", address=0, type="bool", words=1, swap="", scale=1.0, offset=0.0)),
    (VOLTAGE, openhal.ModbusRegister(table="input", address=0, type="float32", words=2, swap="word", scale=1.0,
                                     offset=-1.5)),
])
def test_descriptor_modbus(raw, want):
    d = openhal.Descriptor.from_json(raw)
    assert d.kind == "x.modbus" and d.chip == "modbus"
    assert d.modbus == want
    assert (d.bus, d.address) == (raw["bus"], raw["address"])  # the line, and the unit id
    assert d.raw["modbus"] is raw["modbus"]  # and the message itself, as for any extension


def test_descriptor_without_modbus():
    d = openhal.Descriptor.from_json({"id": "sim.led", "kind": "gpio.output", "access": "rw", "risk": "low"})
    assert d.modbus is None


class WithModbus:
    """The factory's client, listing issue 31's Modbus devices beside the
    sim board's."""

    def __init__(self, client):
        self._client = client

    def devices(self, *args, **kwargs):
        return self._client.devices(*args, **kwargs) + [openhal.Descriptor.from_json(d) for d in (SPEED, RUN, VOLTAGE)]

    def __getattr__(self, name):
        return getattr(self._client, name)


def test_pin_factory_takes_no_modbus_device(gateway, monkeypatch):
    need("gpiozero")
    from gpiozero import LED, Button, Device, PWMOutputDevice
    from gpiozero.exc import PinInvalidPin
    from openhal.pinfactory import OpenHALFactory

    f = OpenHALFactory(gateway.tcp, gateway.admin_token, timeout=WAIT, stop_script=False)
    real = f.client()
    monkeypatch.setattr(f, "client", lambda: WithModbus(real))
    Device.pin_factory = f
    try:
        assert "vfd.run" in [d.id for d in f.client().devices()]  # the client does list them
        for make, spec in ((LED, "vfd.run"), (PWMOutputDevice, "vfd.speed"), (Button, "meter.voltage")):
            with pytest.raises(PinInvalidPin, match="no GPIO, PWM or servo device") as e:
                make(spec)
            assert "vfd" not in str(e.value).split("wired:")[1], e.value  # nor lists them as wired
        led = LED("sim.led")  # the pins are still found
        assert led.pin.device == "sim.led"
        led.close()
    finally:
        Device.pin_factory = None
        f.close()
