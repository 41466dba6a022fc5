"""gpiozero's SPI ADCs (``MCP3008(channel=0)``) on the gateway's ADC devices.

gpiozero drives an MCP3004/3008/3204/3208 by sending the chip's command
bits over an SPI interface and reading the count out of the answer. The
factory's ``spi(port=, device=)`` returns an :class:`OpenHALSPI`, which
has gpiozero's SPI interface but never sends a byte anywhere: it decodes
the command gpiozero sends (start bit, SGL/DIFF, D2 D1 D0, and from the
start bit's place the chip's resolution), reads the gateway's device for
that channel of that chip (found by its descriptor's ``bus``, ``chip``,
``channel`` and ``differential``), and answers the count the chip would
have: ``round(voltage × 2^bits / VREF)``, VREF being the volts schema's
``maximum``. The gateway's own driver talks to the chip; the script's
reads go through the Hub like every client's, under its token.

The chips' datasheets (DS21295, DS21298, figure 6-1) and gpiozero's
``MCP3xxx._send`` lay the bits out the same way: ``Tx 00000001 MCCCxxxx
xxxxxxxx / Rx xxxxxxxx xxxxx0RR RRRRRRRR`` for the 10-bit parts,
``Tx 000001MC CCxxxxxx xxxxxxxx / Rx xxxxxxxx xxx0RRRR RRRRRRRR`` for the
12-bit ones. MCP3001/3002/3201/3202 and the MCP330x are not gateway
devices, and their commands are refused.
"""

from typing import Any, Dict, List, Sequence, Tuple

from gpiozero.exc import SPIBadArgs, SPIBadChannel, SPIError, SPIFixedClockMode, SPIFixedWordSize
from gpiozero.pins import SPI

from .errors import HubError, OpenHALError
from .types import Descriptor

# The gateway's ADC drivers: (inputs, bits).
ADC_CHIPS = {"mcp3004": (4, 10), "mcp3008": (8, 10), "mcp3204": (4, 12), "mcp3208": (8, 12)}

# The Raspberry Pi's hardware SPI ports by BCM line, as gpiozero names
# them by pins: SPI0 (CE0 GPIO8, CE1 GPIO7) and the auxiliary SPI1 (CE0
# GPIO18, CE1 GPIO17, CE2 GPIO16).
SPI_PORTS = {
    0: {"clock": 11, "mosi": 10, "miso": 9, "select": (8, 7)},
    1: {"clock": 21, "mosi": 20, "miso": 19, "select": (18, 17, 16)},
}


class ADCUnreadable(SPIError, HubError):
    """The gateway could not read an ADC channel: its device is in fault
    (``/dev/spidev0.0`` missing, a chip that does not answer), or the token
    may not read it. It is a gpiozero SPIError and a HubError with the
    Hub's ``code``, ``message`` and ``data``; ``device`` is the gateway's
    device id."""

    def __init__(self, where: str, device: str, err: HubError):
        HubError.__init__(self, err.code, "%s: the gateway could not read %s: %s" % (where, device, err.message), err.data)
        self.device, self.hub_error = device, err


def port_device(bcm: Any, spi_args: Dict[str, Any]) -> Tuple[int, int]:
    """The (port, device) gpiozero's spi_args name: port and device
    (default 0, 0), or the pins of a hardware port (clock_pin, mosi_pin,
    miso_pin, select_pin: BCM numbers or names such as "GPIO8"). bcm maps
    a pin spec to its BCM number."""
    dev_keys, pin_keys = {"port", "device"}, {"clock_pin", "mosi_pin", "miso_pin", "select_pin"}
    keys = set(spi_args)
    if keys - dev_keys - pin_keys:
        raise SPIBadArgs("unrecognized keyword argument %s" % sorted(keys - dev_keys - pin_keys)[0])
    if keys & dev_keys and keys & pin_keys:
        raise SPIBadArgs("you must either specify port and device, or clock_pin, mosi_pin, miso_pin and select_pin; "
                         "combinations of the two schemes are not permitted")
    if not keys & pin_keys:
        port, device = spi_args.get("port", 0), spi_args.get("device", 0)
        if port not in SPI_PORTS:
            raise SPIBadArgs("port %r is not a hardware SPI port of the Raspberry Pi (0 or 1)" % (port,))
        if not 0 <= device < len(SPI_PORTS[port]["select"]):
            raise SPIBadArgs("device must be in the range 0..%d for port %d" % (len(SPI_PORTS[port]["select"]) - 1, port))
        return port, device
    pins = {k: bcm(v) if v is not None else None for k, v in spi_args.items()}
    for port, hw in SPI_PORTS.items():
        if (pins.get("clock_pin", hw["clock"]) == hw["clock"] and pins.get("mosi_pin", hw["mosi"]) in (None, hw["mosi"])
                and pins.get("miso_pin", hw["miso"]) in (None, hw["miso"])
                and pins.get("select_pin", hw["select"][0]) in hw["select"]):
            return port, hw["select"].index(pins.get("select_pin", hw["select"][0]))
    raise SPIBadArgs("the gateway reads its ADCs itself: pins %s are not a hardware SPI port's (SPI0: clock 11, "
                     "MOSI 10, MISO 9, select 8 or 7; SPI1: clock 21, MOSI 20, MISO 19, select 18, 17 or 16)"
                     % {k: v for k, v in pins.items()})


def decode_command(words: Sequence[int], bits_per_word: int = 8) -> Tuple[int, int, bool]:
    """(bits, channel, differential) of the MCP3004/3008/3204/3208
    conversion gpiozero sends as words: the first 1 is the start bit, then
    SGL/DIFF (1: single-ended) and D2 D1 D0; the result's bits end with
    the last clock, after a sample clock and the null bit, so the start
    bit's place gives the resolution."""
    total = len(words) * bits_per_word
    stream = 0
    for w in words:
        if not 0 <= w < 1 << bits_per_word:
            raise SPIError("word %r does not fit %d bits" % (w, bits_per_word))
        stream = stream << bits_per_word | w
    if stream == 0:
        raise SPIError("not an MCP3xxx conversion: no start bit in %r" % (list(words),))
    start = total - stream.bit_length()  # bits before the start bit
    bits = total - start - 7
    if bits not in (10, 12):
        raise SPIError("not an MCP3004/3008/3204/3208 conversion (%r): the gateway's ADCs are those" % (list(words),))
    field = stream >> (total - start - 5) & 0b1111  # SGL/DIFF D2 D1 D0
    return bits, field & 0b111, not field >> 3


def encode_answer(count: int, words: int, bits_per_word: int = 8) -> List[int]:
    """The words an MCP3xxx answers with count: its bits at the end, the
    null bit and everything before it 0."""
    mask = (1 << bits_per_word) - 1
    return [count >> (bits_per_word * i) & mask for i in reversed(range(words))]


class OpenHALSPI(SPI):
    """gpiozero's SPI interface for the gateway's ADC channels on one
    port and device (/dev/spidev<port>.<device>). Mode 0, 8-bit words,
    MSB first, chip select active low: what the MCP3xxx take, and all it
    offers."""

    def __init__(self, factory: Any, port: int, device: int):
        self._factory = factory
        self._port, self._device = port, device
        self._bus = "/dev/spidev%d.%d" % (port, device)
        self._found: Dict[Tuple[int, bool], Descriptor] = {}
        self._open = True
        super().__init__(pin_factory=factory)

    def __repr__(self) -> str:
        return "SPI(port=%d, device=%d)" % (self._port, self._device)

    @property
    def closed(self) -> bool:
        return not getattr(self, "_open", False)

    def close(self) -> None:
        self._open = False
        super().close()

    @property
    def bus(self) -> str:
        """The gateway's name of this port and device: /dev/spidevP.D."""
        return self._bus

    def transfer(self, data: Sequence[int]) -> List[int]:
        self._check_open()
        bits, channel, differential = decode_command(data)
        desc = self._channel(bits, channel, differential)
        volts, vref = self._volts(desc)
        top = (1 << bits) - 1
        count = max(0, min(top, int(round(volts * (1 << bits) / vref))))
        return encode_answer(count, len(data))

    def _channel(self, bits: int, channel: int, differential: bool) -> Descriptor:
        """The gateway's device for that channel of the chip on this bus."""
        key = (channel, differential)
        desc = self._found.get(key)
        if desc is None:
            desc = self._find(bits, channel, differential)
            self._found[key] = desc
        return desc

    def _find(self, bits: int, channel: int, differential: bool) -> Descriptor:
        adcs = [d for d in self._factory.client().devices(kind="sensor") if d.bus == self._bus and d.chip in ADC_CHIPS]
        what = "CH%d-CH%d" % (channel, channel ^ 1) if differential else "CH%d" % channel
        for d in adcs:
            if d.channel == channel and d.differential == differential:
                if ADC_CHIPS[d.chip][1] != bits:
                    raise SPIError("%r: the gateway's %s is an %s (%d bits); the script reads it as a %d-bit chip (%s): use %s(...)"
                                   % (self, d.id, d.chip.upper(), ADC_CHIPS[d.chip][1], bits,
                                      "MCP3204 or MCP3208" if bits == 12 else "MCP3004 or MCP3008", d.chip.upper()))
                return d
        have = ", ".join("%s=%s" % (d.id, ("CH%d-CH%d" % (d.channel, d.channel ^ 1)) if d.differential else "CH%s" % d.channel)
                         for d in adcs) or "none"
        raise SPIBadChannel("%r: no ADC channel of the gateway at %s reads %s%s on %s (there: %s)"
                            % (self, self._factory._hub, what, " (differential)" if differential else "", self._bus, have))

    def _volts(self, desc: Descriptor) -> Tuple[float, float]:
        """The channel's volts, read now, and its VREF."""
        vref = ((desc.schema.get("properties") or {}).get("voltage") or {}).get("maximum")
        if not isinstance(vref, (int, float)) or vref <= 0:
            raise SPIError("%r: the gateway does not say the VREF of %s (its voltage has no maximum)" % (self, desc.id))
        try:
            v = self._factory.client().read(desc.id, max_age_ms=0)
        except HubError as e:
            raise ADCUnreadable(repr(self), desc.id, e) from e
        except OpenHALError as e:
            from .pinfactory import GatewayUnreachable  # a cycle at import time otherwise
            raise GatewayUnreachable("%r: read %s: %s" % (self, desc.id, e)) from e
        volts = v.value.get("voltage") if isinstance(v.value, dict) else None
        if not isinstance(volts, (int, float)):
            raise SPIError("%r: %s's value %r has no voltage" % (self, desc.id, v.value))
        return float(volts), float(vref)

    def _get_clock_mode(self) -> int:
        return 0

    def _set_clock_mode(self, value: int) -> None:
        if value != 0:
            raise SPIFixedClockMode("clock_mode cannot be changed on %r: the gateway's ADCs run in mode 0" % self)

    def _get_bits_per_word(self) -> int:
        return 8

    def _set_bits_per_word(self, value: int) -> None:
        if value != 8:
            raise SPIFixedWordSize("bits_per_word cannot be changed on %r" % self)


def open_spi(factory: Any, bcm: Any, spi_args: Dict[str, Any]) -> OpenHALSPI:
    """The factory's spi(**spi_args): gpiozero's SPIDevice passes its
    port and device (or pins) and shared=."""
    args = dict(spi_args)
    args.pop("shared", None)
    port, device = port_device(bcm, args)
    return OpenHALSPI(factory, port, device)


__all__ = ["ADCUnreadable", "OpenHALSPI", "decode_command", "encode_answer", "port_device", "open_spi"]
