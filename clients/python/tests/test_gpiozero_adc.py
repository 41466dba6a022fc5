"""gpiozero's MCP3004/3008/3204/3208 on the gateway's SPI ADC channels.

The gateway here is the real binary on a generic board whose
configuration declares ADC channels on /dev/spidev0.0, 0.1, 1.0 and 1.1.
This machine has no SPI (no /dev/spidev, and no emulated SPI controller
with an MCP3xxx behind it), so every channel is in fault: the tests of
faults, of finding the channel by its descriptor, and of a script that
names a channel the gateway lacks run against it as it is. A reading
cannot come from it; for the tests of counts, the one thing replaced is
the client's read of the channel, which answers volts the test chose,
while the descriptors (bus, chip, channel, differential, VREF) are the
real gateway's. The gateway's own reading of the chip is tested on
periph's playback of the datasheets' bytes (internal/board/hardware).
"""

import os

import pytest

import openhal
from conftest import WAIT, Gateway, need

gpiozero = need("gpiozero")
from gpiozero import MCP3004, MCP3008, MCP3204, MCP3208, Device, GPIOZeroError  # noqa: E402
from gpiozero.exc import SPIBadArgs, SPIBadChannel, SPIError  # noqa: E402

from openhal.pinfactory import OpenHALFactory  # noqa: E402
from openhal.pinfactory_spi import ADCUnreadable, decode_command, encode_answer  # noqa: E402

CONFIG = """board: generic
devices:
  greenhouse.soil:
    kind: sensor
    driver: mcp3008
    bus: /dev/spidev0.0
    channel: 0
    scale: 30.303
    unit: "%"
    quantity: moisture
    interval: 1h
  greenhouse.bridge:
    kind: sensor
    driver: mcp3008
    bus: "0.0"
    channel: 2
    differential: true
    interval: 1h
  greenhouse.tank:
    kind: sensor
    driver: mcp3208
    bus: /dev/spidev0.1
    channel: 5
    vref: 4.096
    interval: 1h
  greenhouse.light:
    kind: sensor
    driver: mcp3004
    bus: /dev/spidev1.0
    channel: 3
    interval: 1h
  greenhouse.strain:
    kind: sensor
    driver: mcp3204
    bus: /dev/spidev1.1
    channel: 1
    differential: true
    interval: 1h
"""


@pytest.fixture
def adc_gateway(state_dir):
    if os.path.exists("/dev/spidev0.0"):
        pytest.skip("this machine has /dev/spidev0.0: the channels would not all be in fault")
    path = os.path.join(state_dir, "gateway.yaml")
    with open(path, "w") as f:
        f.write(CONFIG)
    g = Gateway(os.path.join(state_dir, "state"), extra=["--config", path])
    yield g
    g.stop()


@pytest.fixture
def adc_factory(adc_gateway):
    f = OpenHALFactory(adc_gateway.tcp, adc_gateway.admin_token, timeout=WAIT, stop_script=False)
    Device.pin_factory = f
    yield f
    Device.pin_factory = None
    f.close()


class InjectedReads:
    """The real gateway's client, except that a read of a device answers
    the volts the test set for it: the one thing a machine without SPI
    cannot give."""

    def __init__(self, real, volts):
        self.real, self.volts, self.reads = real, volts, []
        self.closed = False

    def devices(self, **kw):
        return self.real.devices(**kw)

    def read(self, device, max_age_ms=None, timeout=None):
        self.reads.append((device, max_age_ms))
        return openhal.Value(device=device, value={"voltage": self.volts[device]})


def test_a_channel_in_fault_raises_what_the_gateway_says(adc_factory):
    adc = MCP3008(channel=0)
    with pytest.raises(ADCUnreadable) as e:
        adc.value
    err = e.value
    assert isinstance(err, SPIError) and isinstance(err, GPIOZeroError) and isinstance(err, openhal.HubError)
    assert err.device == "greenhouse.soil" and err.code == -32007  # DEVICE_FAULT
    assert str(err).startswith("SPI(port=0, device=0): the gateway could not read greenhouse.soil: ")
    assert "no /dev/spidev0.0: is SPI enabled (dtparam=spi=on" in str(err)
    adc.close()
    with pytest.raises(ADCUnreadable, match="greenhouse.strain"):
        MCP3204(channel=1, differential=True, port=1, device=1).value


def test_the_channel_is_found_by_its_descriptor(adc_factory):
    with pytest.raises(SPIBadChannel) as e:
        MCP3008(channel=5).value
    assert "no ADC channel of the gateway" in str(e.value) and "reads CH5 on /dev/spidev0.0" in str(e.value)
    assert "there: greenhouse.soil=CH0, greenhouse.bridge=CH2-CH3" in str(e.value) or \
        "there: greenhouse.bridge=CH2-CH3, greenhouse.soil=CH0" in str(e.value)
    with pytest.raises(SPIBadChannel, match=r"reads CH0-CH1 \(differential\) on /dev/spidev0.0"):
        MCP3008(channel=0, differential=True).value  # CH0 is there single-ended only
    with pytest.raises(SPIError, match=r"greenhouse.soil is an MCP3008 \(10 bits\); the script reads it as a 12-bit chip"):
        MCP3208(channel=0).value
    with pytest.raises(SPIBadChannel, match="on /dev/spidev1.1 .there: greenhouse.strain=CH1-CH0"):
        MCP3204(channel=1, port=1, device=1).value  # the strain gauge is differential


def test_counts_from_the_channels_volts(adc_factory, monkeypatch):
    real = adc_factory.client()
    injected = InjectedReads(real, {"greenhouse.soil": 1.65, "greenhouse.bridge": 0.825, "greenhouse.tank": 2.048,
                                    "greenhouse.light": 3.3, "greenhouse.strain": 0.0})
    monkeypatch.setattr(adc_factory, "client", lambda: injected)
    for adc, count in [
        (MCP3008(channel=0), 512),                                   # 1.65 V of 3.3 V, 10 bits
        (MCP3008(channel=2, differential=True), 256),                # CH2-CH3
        (MCP3208(channel=5, device=1), 2048),                        # 2.048 V of 4.096 V, 12 bits
        (MCP3004(channel=3, port=1), 1023),                          # VREF itself: the top count
        (MCP3204(channel=1, differential=True, port=1, device=1), 0),
    ]:
        assert adc.raw_value == count, adc
        bits = adc.bits
        assert adc.value == pytest.approx(2 * (count + 2 ** bits) / (2 ** (bits + 1) - 1) - 1)  # gpiozero's scale
        adc.close()
    # raw_value and value: each a fresh conversion, as on a chip.
    assert injected.reads == [(d, 0) for d in ("greenhouse.soil", "greenhouse.bridge", "greenhouse.tank",
                                               "greenhouse.light", "greenhouse.strain") for _ in range(2)]


def test_the_transfer_answers_as_the_chip(adc_factory, monkeypatch):
    injected = InjectedReads(adc_factory.client(), {"greenhouse.soil": 1.65, "greenhouse.tank": 4.095})
    monkeypatch.setattr(adc_factory, "client", lambda: injected)
    spi = adc_factory.spi(port=0, device=0)
    # The datasheet's command for CH0, and the answer: the null bit, then 512.
    assert spi.transfer([0x01, 0x80, 0x00]) == [0x00, 0x02, 0x00]
    assert spi.clock_mode == 0 and spi.bits_per_word == 8 and repr(spi) == "SPI(port=0, device=0)"
    by_pins = adc_factory.spi(clock_pin=11, mosi_pin=10, miso_pin=9, select_pin="GPIO7")
    assert by_pins.bus == "/dev/spidev0.1"
    assert by_pins.transfer([0x07, 0x40, 0x00]) == [0x00, 0x0f, 0xff]  # MCP3208 CH5 at 4.095 V of 4.096 V
    spi.close()
    assert spi.closed
    with pytest.raises(GPIOZeroError):
        spi.transfer([0x01, 0x80, 0x00])
    with pytest.raises(SPIBadArgs, match="port 2"):
        adc_factory.spi(port=2, device=0)
    with pytest.raises(SPIBadArgs, match="not a hardware SPI port"):
        adc_factory.spi(clock_pin=4, mosi_pin=5, miso_pin=6, select_pin=13)
    with pytest.raises(SPIBadArgs, match="combinations"):
        adc_factory.spi(port=0, select_pin=8)
    with pytest.raises(SPIError, match="not an MCP3004/3008/3204/3208 conversion"):
        spi2 = adc_factory.spi()
        spi2.transfer([0x00, 0x0c, 0x00, 0x00])  # an MCP3302's start, 13 bits


def test_every_command_gpiozero_sends_is_decoded(adc_factory):
    """gpiozero's own MCP3xxx._send for every model, input and mode."""
    for cls, inputs, bits in ((MCP3004, 4, 10), (MCP3008, 8, 10), (MCP3204, 4, 12), (MCP3208, 8, 12)):
        for ch in range(inputs):
            for diff in (False, True):
                adc = cls(channel=ch, differential=diff)
                assert decode_command(adc._send()) == (bits, ch, diff), (cls.__name__, ch, diff)
                adc.close()
    assert encode_answer(0x29a, 3) == [0x00, 0x02, 0x9a]
