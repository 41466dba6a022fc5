"""A gpiozero pin factory whose pins are the gateway's devices.

An unchanged gpiozero script (``LED(17)``, ``Button(27)``,
``PWMOutputDevice(18)``, ``MCP3008(channel=0)``) drives the gateway's GPIO,
PWM and ADC devices through the Hub, so that tokens, safety rules, the
emergency stop and the audit log stand between the script and the pins,
as they do for every client.
Pins are found by the ``pin`` each device's descriptor carries (the
configuration's, or the sim board's documented ones); gpiozero's own
numbering (``17``, ``"GPIO17"``, ``"BCM17"``, ``"BOARD11"``, ``"J8:11"``) is
mapped to the Raspberry Pi's BCM numbers, a pin of an I/O expander the
configuration declares is named as its descriptor names it
(``"ex1:GPA0"``, or ``"ex1:0"``), and a device id (``"sim.led"``) names a
device directly.

A servo of the gateway (kind ``x.servo``) is a pin too, for gpiozero's
``Servo`` and ``AngularServo``: a PWM pin at 50 Hz whose duty cycle is
the pulse over the frame, converted to the servo's angle through the
pulse range its descriptor gives (``minPulseUs``, ``maxPulseUs``). A
servo on a PCA9685 has no pin of the Pi: name it by its id
(``AngularServo("arm.base", min_angle=0, max_angle=180)``).

Select it with ``Device.pin_factory = OpenHALFactory()``, or with
``GPIOZERO_PIN_FACTORY=openhal`` once the package is installed with its
entry point; both read ``GATEWAY_HUB`` and ``GATEWAY_TOKEN`` (and
``GATEWAY_FINGERPRINT`` for tls://).

A write that becomes a Confirmation Request (a high-risk device, a
``control_low`` token) is never silent: it raises PinApprovalPending, or
waits for an admin when ``OPENHAL_WAIT_APPROVAL=SECONDS`` (or
``wait_approval=``) says so (pinfactory_approval). The emergency stop
raises PinStopped, a GatewayRefused and an ``openhal.GatewayStopped``.
"""

import os
import signal
import threading
import time
import traceback
import warnings
from typing import Any, Dict, Optional, Tuple, Union

from gpiozero.exc import (
    GPIOZeroError, PinError, PinFixedPull, PinInvalidEdges, PinInvalidFunction, PinInvalidPin,
    PinInvalidPull, PinInvalidState, PinPWMError, PinPWMUnsupported, PinSetInput, PinWarning,
)
from gpiozero.pins import Factory, Pin

from .client import Client, connect
from .pinfactory_spi import OpenHALSPI, open_spi
from .errors import (ApprovalError, ClearTextRefused, FingerprintMismatch, GatewayStopped, HubError, OpenHALError,
                     Stopped, UnknownGateway)
from .pending import Pending
from .pinfactory_approval import (  # noqa: F401 (the pin factory's exceptions, named here too)
    PinApprovalCancelled, PinApprovalExpired, PinApprovalFailed, PinApprovalPending, PinApprovalRejected,
    PinApprovalSuperseded, PinFailedByStop, PinRejectedByStop, as_pin_error, is_pin_approval, settle, wait_setting,
)
from .types import Descriptor, Value
from .watch import Watch

# The Raspberry Pi's 40-pin header: physical pin -> BCM GPIO number.
HEADER = {3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23, 18: 24, 19: 10,
          21: 9, 22: 25, 23: 11, 24: 8, 26: 7, 27: 0, 28: 1, 29: 5, 31: 6, 32: 12, 33: 13, 35: 19,
          36: 16, 37: 26, 38: 20, 40: 21}

PIN_KINDS = ("gpio.input", "gpio.output", "pwm", "x.servo")

# SERVO_HZ is gpiozero's servo frame rate (Servo's frame_width, 20 ms): a
# gateway servo's pin starts there, whatever its PWM runs at, since what
# the servo reads is the pulse, which the gateway makes exactly.
SERVO_HZ = 50.0

# A pulse within this of the servo's range is taken as its end: gpiozero
# computes it as duty × frame, in floating point.
PULSE_SLACK_US = 0.5


def pca9685_prescale(hz: float) -> int:
    """The PCA9685's prescaler for hz (datasheet §7.3.5): two frequencies
    with one prescaler are the one frequency the chip makes."""
    return round(25e6 / (4096 * hz)) - 1


class ServoScale:
    """An x.servo's pulses and angles: gpiozero's pulse (its duty cycle
    over its frame) to the gateway's angle and back, linear from
    minPulseUs at the schema's minimum to maxPulseUs at its maximum."""

    def __init__(self, desc: Descriptor):
        if desc.min_pulse_us is None or desc.max_pulse_us is None:
            raise PinPWMUnsupported("%s: the gateway does not say the servo's pulse range (minPulseUs, maxPulseUs)" % desc.id)
        self.device = desc.id
        self.min_us, self.max_us = float(desc.min_pulse_us), float(desc.max_pulse_us)
        self.min_deg = float(desc.schema.get("minimum", 0.0))
        self.max_deg = float(desc.schema.get("maximum", 180.0))

    def angle(self, pulse_us: float) -> float:
        """The angle a pulse commands; a pulse outside the range is refused."""
        if not self.min_us - PULSE_SLACK_US <= pulse_us <= self.max_us + PULSE_SLACK_US:
            raise PinInvalidState("%s is a servo of %g to %g µs (%g° to %g°): a pulse of %.1f µs is outside it"
                                  % (self.device, self.min_us, self.max_us, self.min_deg, self.max_deg, pulse_us))
        f = (min(max(pulse_us, self.min_us), self.max_us) - self.min_us) / (self.max_us - self.min_us)
        return round(self.min_deg + f * (self.max_deg - self.min_deg), 6)

    def pulse_us(self, angle: float) -> float:
        """The pulse of an angle."""
        return self.min_us + (angle - self.min_deg) / (self.max_deg - self.min_deg) * (self.max_us - self.min_us)

def stops_script(err: Any) -> bool:
    """Whether err, ending one of gpiozero's threads, is raised in the
    script's main thread too: a refused write, or one not applied."""
    return isinstance(err, GatewayRefused) or is_pin_approval(err)

# The I/O expanders whose pins are gpio devices (a descriptor's ``chip``).
EXPANDER_CHIPS = ("mcp23017", "mcp23008")


class GatewayRefused(PinError, HubError):
    """The gateway refused a pin's write (or read): the emergency stop (code -32006),
    a safety rule (-32005), the token's scope (-32003), a fault. It is a
    gpiozero error (``except GPIOZeroError`` catches it) and a HubError
    with the Hub's ``code``, ``message`` and ``data``, and it is always
    raised: a refused write is never dropped silently."""

    def __init__(self, pin: str, what: str, err: HubError):
        HubError.__init__(self, err.code, "%s: the gateway refused the %s: %s" % (pin, what, err.message), err.data)
        self.pin, self.what, self.hub_error = pin, what, err

    def copy(self) -> "GatewayRefused":
        """The same refusal as a new exception, without this one's frames."""
        return refused(self.pin, self.what, self.hub_error)


class PinStopped(GatewayRefused, Stopped):
    """The emergency stop refused a pin's write (code -32006): a
    GatewayRefused (so a gpiozero PinError) and an ``openhal.GatewayStopped``
    (``except GatewayStopped`` catches the stop from the client and the
    pin factory alike)."""


def refused(pin: str, what: str, err: HubError) -> GatewayRefused:
    """The GatewayRefused of err: PinStopped for the emergency stop."""
    return (PinStopped if isinstance(err, GatewayStopped) else GatewayRefused)(pin, what, err)


# WriteAwaitsApproval was the warning a pending write gave before it
# raised: a script that filtered or caught it by that name still runs.
WriteAwaitsApproval = PinApprovalPending


class GatewayUnreachable(PinError):
    """The gateway did not answer a pin's request (lost connection, timeout)."""


def bcm_number(spec: Union[int, str]) -> Optional[int]:
    """The BCM GPIO number gpiozero's spec names (17, "17", "GPIO17",
    "BCM17", "BOARD11", "J8:11", "WPI" is not supported), or None when it
    names none (a device id, say)."""
    if isinstance(spec, int):
        return spec
    s = str(spec).strip().upper()
    for prefix in ("GPIO", "BCM"):
        if s.startswith(prefix) and s[len(prefix):].isdigit():
            return int(s[len(prefix):])
    for prefix in ("BOARD", "J8:"):
        if s.startswith(prefix) and s[len(prefix):].isdigit():
            return HEADER.get(int(s[len(prefix):]))
    return int(s) if s.isdigit() else None


def descriptor_bcm(pin: str) -> Optional[int]:
    """The BCM number a descriptor's ``pin`` names: "GPIO17", "pin11" (a
    header pin) or a Raspberry Pi GPIO chip and offset ("pinctrl-rp1:17",
    whose offsets are the BCM numbers). None for any other line name."""
    s = pin.strip()
    if s.lower().startswith("pin") and s[3:].isdigit():
        return HEADER.get(int(s[3:]))
    if ":" in s:
        chip, _, off = s.rpartition(":")
        return int(off) if chip.lower().startswith("pinctrl-") and off.isdigit() else None
    n = bcm_number(s) if s.upper().startswith("GPIO") else None
    return n


def expander_pin(spec: Union[int, str]) -> Optional[Tuple[str, int]]:
    """The chip and pin number an expander's pin names: ``"ex1:GPA0"``
    (GPA0..GPA7 are 0..7, GPB0..GPB7 8..15), ``"ex1:GP3"`` (an MCP23008),
    ``"ex1:9"``, in any case; None for any other spec."""
    if not isinstance(spec, str) or ":" not in spec:
        return None
    chip, _, pin = spec.strip().partition(":")
    p = pin.upper()
    if len(p) == 4 and p[:3] in ("GPA", "GPB") and p[3] in "01234567":
        n = int(p[3]) + (8 if p[2] == "B" else 0)
    elif len(p) == 3 and p[:2] == "GP" and p[2] in "01234567":
        n = int(p[2])
    elif p.isdigit() and len(p) <= 2 and int(p) <= 15:
        n = int(p)
    else:
        return None
    return (chip.lower(), n) if chip else None


class OpenHALFactory(Factory):
    """Pins that are the gateway's devices.

    hub and token default to $GATEWAY_HUB (default tcp://127.0.0.1:7751)
    and $GATEWAY_TOKEN, fingerprint to $GATEWAY_FINGERPRINT; a gateway on
    another machine is reached over tls:// or wss:// and trusted as
    openhal.connect says (tcp:// off loopback needs insecure=True). The
    factory keeps one connection for its requests (made again when lost)
    and one Watch for the inputs' edges.

    wait_approval (default $OPENHAL_WAIT_APPROVAL, else 0) is how many
    seconds a write that became a Confirmation Request waits for an
    admin: 0 raises PinApprovalPending at once; more waits, returning
    once approved and raising the outcome otherwise (pinfactory_approval).
    """

    def __init__(self, hub: Optional[str] = None, token: Optional[str] = None,
                 fingerprint: Optional[str] = None, timeout: float = 5.0, stop_script: bool = True,
                 insecure: bool = False, wait_approval: Optional[float] = None):
        super().__init__()
        self.wait_approval = wait_setting(wait_approval)
        self._hub = hub or os.environ.get("GATEWAY_HUB") or "tcp://127.0.0.1:7751"
        self._token = token or os.environ.get("GATEWAY_TOKEN") or ""
        if not self._token:
            raise GPIOZeroError("OpenHALFactory: no token: set GATEWAY_TOKEN or pass token=")
        self._fingerprint = fingerprint or os.environ.get("GATEWAY_FINGERPRINT") or None
        self._insecure = insecure
        self._timeout = timeout
        self._lock = threading.Lock()
        self._client: Optional[Client] = None
        self._pins: Dict[str, "OpenHALPin"] = {}
        self._watch: Optional[Watch] = None
        self._watch_thread: Optional[threading.Thread] = None
        self._refused: Optional[Exception] = None
        self._hooked = False
        self._prev_sigint: Any = None
        self._prev_excepthook: Any = None
        self.client()  # fail at once when the gateway cannot be reached
        if stop_script:
            self._hook_sigint()

    # A write refused in one of gpiozero's threads (a blink, a callback)
    # raises there, where the script never sees it; a script waiting in
    # pause() or wait_for_press() would go on as if its LED still blinked.
    # So when such a refusal ends a thread (threading.excepthook, after the
    # thread's traceback is printed) or a callback of the edges, the
    # factory sends the main thread SIGINT, whose handler (the factory's,
    # chained to the one before it) raises the refusal there instead of
    # KeyboardInterrupt. A refusal the script catches in its thread stays
    # there.

    def _hook_sigint(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers belong to the main thread
        if not hasattr(signal, "pthread_kill"):
            return  # Windows: no way to wake the main thread; refusals stay in their thread
        self._prev_sigint = signal.signal(signal.SIGINT, self._on_sigint)
        self._prev_excepthook = threading.excepthook
        threading.excepthook = self._on_thread_exception
        self._hooked = True

    def _unhook_sigint(self) -> None:
        if not self._hooked or threading.current_thread() is not threading.main_thread():
            return
        prev = self._prev_sigint
        signal.signal(signal.SIGINT, prev if prev is not None else signal.default_int_handler)
        if threading.excepthook == self._on_thread_exception:
            threading.excepthook = self._prev_excepthook
        self._hooked = False

    def _on_sigint(self, signum: int, frame: Any) -> None:
        err, self._refused = self._refused, None
        if err is not None:
            raise err from None  # its own copy: the thread printed the rest
        prev = self._prev_sigint
        if callable(prev):
            prev(signum, frame)
        elif prev != signal.SIG_IGN:
            raise KeyboardInterrupt  # SIG_DFL, or a handler not set from Python

    def _on_thread_exception(self, args: Any) -> None:
        self._prev_excepthook(args)
        if stops_script(args.exc_value):
            self._stop_main(args.exc_value)

    def _stop_main(self, err: Exception) -> None:
        """Raises a copy of err in the main thread (once)."""
        if not self._hooked or threading.current_thread() is threading.main_thread():
            return
        if self._refused is None:
            self._refused = err.copy() if isinstance(err, GatewayRefused) else as_pin_error(err, "")  # type: ignore[arg-type]
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # type: ignore[arg-type]

    def _connect(self) -> Client:
        return connect(self._hub, self._token, fingerprint=self._fingerprint, timeout=self._timeout, insecure=self._insecure,
                       client_name="openhal-gpiozero")

    def client(self) -> Client:
        """The factory's connection, made again if it was lost."""
        with self._lock:
            if self._client is None or self._client.closed:
                try:
                    self._client = self._connect()
                except (HubError, UnknownGateway, FingerprintMismatch, ClearTextRefused):
                    raise  # not reaching it would not be the trouble
                except (OSError, OpenHALError) as e:
                    raise GatewayUnreachable("cannot reach the gateway at %s: %s" % (self._hub, e)) from e
            return self._client

    def _resolve(self, spec: Union[int, str]) -> Descriptor:
        devs = [d for d in self.client().devices() if d.kind in PIN_KINDS]
        for d in devs:
            if isinstance(spec, str) and d.id == spec:
                return d
        n = bcm_number(spec)
        if n is not None:
            for d in devs:
                if d.pin and descriptor_bcm(d.pin) == n:
                    return d
        ep = expander_pin(spec)
        if n is None and ep is not None:
            for d in devs:
                if d.raw.get("chip") in EXPANDER_CHIPS and d.pin and expander_pin(d.pin) == ep:
                    return d
        wired = ", ".join("%s=%s" % (d.id, d.pin) for d in devs if d.pin) or "none"
        raise PinInvalidPin("%r: no GPIO, PWM or servo device of the gateway at %s is wired to it (wired: %s)"
                            % (spec, self._hub, wired))

    def _key(self, spec: Union[int, str]) -> Any:
        n = bcm_number(spec)
        if n is not None:
            return n
        return expander_pin(spec) or spec  # "ex1:0" and "ex1:GPA0" are one pin

    def reserve_pins(self, requester: Any, *pins: Union[int, str]) -> None:
        super().reserve_pins(requester, *(self._key(p) for p in pins))

    def release_pins(self, reserver: Any, *pins: Union[int, str]) -> None:
        super().release_pins(reserver, *(self._key(p) for p in pins))

    def pin(self, spec: Union[int, str]) -> "OpenHALPin":
        desc = self._resolve(spec)
        with self._lock:
            p = self._pins.get(desc.id)
            if p is None:
                p = self._pins[desc.id] = OpenHALPin(self, desc)
            return p

    def spi(self, **spi_args: Any) -> "OpenHALSPI":
        """gpiozero's SPI interface for the gateway's ADC channels on the
        port and device spi_args name (``MCP3008(channel=0)``: SPI0, CE0,
        the gateway's /dev/spidev0.0): see pinfactory_spi."""
        return open_spi(self, bcm_number, spi_args)

    def ticks(self) -> float:
        return time.monotonic()

    def ticks_diff(self, later: float, earlier: float) -> float:
        return later - earlier

    def _watch_inputs(self) -> None:
        """Starts the Watch that delivers the inputs' edges (once)."""
        with self._lock:
            if self._watch_thread is not None:
                return
            self._watch = Watch(self._connect)
            self._watch_thread = threading.Thread(target=self._edges, name="openhal-edges", daemon=True)
            self._watch_thread.start()

    def _edges(self) -> None:
        w = self._watch
        assert w is not None
        for v in w:
            p = self._pins.get(v.device)
            if p is None:
                continue
            try:
                p._changed(v)
            except Exception as e:  # a callback's error must not end the edges
                traceback.print_exc()
                if stops_script(e):
                    self._stop_main(e)

    def close(self) -> None:
        """Ends the factory's connections; the devices keep their values
        (the gateway's devices belong to the Hub, not to a script)."""
        with self._lock:
            w, c = self._watch, self._client
            self._watch, self._client = None, None
        if w is not None:
            w.close()
        if c is not None:
            c.close()
        self._unhook_sigint()
        super().close()


class OpenHALPin(Pin):
    """One of the gateway's gpio.input, gpio.output, pwm or x.servo devices.

    An input's ``state`` is the level gpiozero expects from the pull it
    asked for: the gateway's input value is "active" (true = pressed, the
    configuration's ``invert`` makes it so), and with a pull-up the active
    level is low, so ``Button(27)`` fires when_pressed when the device goes
    true, as does ``Button(27, pull_up=False)``.
    """

    def __init__(self, factory: OpenHALFactory, desc: Descriptor):
        super().__init__()
        self._factory = factory
        self._desc = desc
        self._number = descriptor_bcm(desc.pin) if desc.pin else None
        self._pull = "up" if desc.kind == "gpio.input" else "floating"
        self._bounce: Optional[float] = None
        self._edges = "both"
        self._when_changed: Any = None
        self._value: Any = None
        self._frequency = desc.frequency if desc.kind == "pwm" else None
        self._servo = ServoScale(desc) if desc.kind == "x.servo" else None
        if self._servo is not None:
            self._frequency = SERVO_HZ

    def __repr__(self) -> str:
        return "%s (%s)" % (self._desc.pin or self._desc.id, self._desc.id)

    @property
    def number(self) -> Union[int, str]:
        return self._number if self._number is not None else self._desc.id

    @property
    def device(self) -> str:
        """The gateway's device id."""
        return self._desc.id

    @property
    def factory(self) -> OpenHALFactory:
        return self._factory

    def close(self) -> None:
        self.when_changed = None

    # -- requests --------------------------------------------------------

    def _call(self, what: str, fn: Any) -> Any:
        try:
            return fn(self._factory.client())
        except ApprovalError:
            raise  # already the pin's (settle)
        except HubError as e:
            raise refused(repr(self), what, e) from e
        except OpenHALError as e:
            raise GatewayUnreachable("%r: %s: %s" % (self, what, e)) from e

    def _read(self) -> Any:
        """The device's value, asked each time: a stop, an interlock or
        maxOnMs may have changed an output since the script wrote it."""
        max_age = 0 if self._desc.kind == "gpio.input" else None  # an input: sampled now
        v: Value = self._call("read", lambda c: c.read(self._desc.id, max_age_ms=max_age))
        self._value = v.value
        return v.value

    def _write(self, value: Any) -> None:
        """Writes value; only a value the gateway applied is kept. A write
        that became a Confirmation Request raises, or waits for its end
        (the factory's wait_approval): never silent."""
        def write(c: Client) -> Any:
            res = c.write(self._desc.id, value, reason="gpiozero")
            if isinstance(res, Pending):
                res = settle(repr(self), res, self._factory.wait_approval, self._factory.client)
            return res
        res = self._call("write", write)
        self._value = res.value if res.value is not None else value

    # -- function, state ---------------------------------------------------

    def _get_function(self) -> str:
        return "input" if self._desc.kind == "gpio.input" else "output"

    def _set_function(self, value: str) -> None:
        if value not in ("input", "output"):
            raise PinInvalidFunction("%r: function must be input or output, not %r" % (self, value))
        if value != self._get_function():
            raise PinInvalidFunction("%r is the gateway's %s %s: it cannot be an %s"
                                     % (self, self._desc.kind, self._desc.id, value))

    def _get_state(self) -> Union[int, float]:
        v = self._read()
        if self._servo is not None:
            assert self._frequency is not None
            return self._servo.pulse_us(float(v)) * 1e-6 * self._frequency
        if self._desc.kind == "pwm":
            return float(v or 0) / 100.0
        return int(bool(v) != (self._pull == "up")) if self._desc.kind == "gpio.input" else int(bool(v))

    def _set_state(self, value: Union[int, float, bool]) -> None:
        if self._desc.kind == "gpio.input":
            raise PinSetInput("cannot set the state of %r: it is an input" % self)
        if not 0 <= value <= 1:
            raise PinInvalidState("%r: state must be between 0 and 1, not %r" % (self, value))
        if self._servo is not None:
            if value == 0:
                return  # no pulse (PWMOutputDevice before Servo's first value): the servo keeps its angle
            assert self._frequency is not None
            self._write(self._servo.angle(float(value) / self._frequency * 1e6))
        elif self._desc.kind == "pwm":
            self._write(round(float(value) * 100.0, 6))
        elif value not in (0, 1):
            raise PinPWMUnsupported("%r is a gpio.output, not pwm: state must be 0 or 1, not %r" % (self, value))
        else:
            self._write(bool(value))

    # -- pull, bounce, edges, frequency -------------------------------------

    def _get_pull(self) -> str:
        return self._pull

    def _set_pull(self, value: str) -> None:
        if self._desc.kind != "gpio.input":
            raise PinFixedPull("cannot set the pull of %r: it is an output" % self)
        if value not in ("up", "down", "floating"):
            raise PinInvalidPull("%r: pull must be up, down or floating, not %r" % (self, value))
        self._pull = value  # the line's own pull is the configuration's

    def _get_bounce(self) -> Optional[float]:
        return self._bounce

    def _set_bounce(self, value: Optional[float]) -> None:
        self._bounce = value  # the line's debounce is the configuration's

    def _get_edges(self) -> str:
        return self._edges

    def _set_edges(self, value: str) -> None:
        if value not in ("none", "falling", "rising", "both"):
            raise PinInvalidEdges("%r: edges must be none, falling, rising or both, not %r" % (self, value))
        self._edges = value

    def _get_frequency(self) -> Optional[float]:
        return self._frequency

    def _set_frequency(self, value: Optional[float]) -> None:
        if self._servo is not None:
            if value is not None and value > 0:
                self._frequency = float(value)  # the script's frame: pulses are its duty × 1/value
            return  # None (detach, close): the gateway keeps the servo's pulse
        if self._desc.kind != "pwm":
            if value is not None:
                raise PinPWMUnsupported("%r is the gateway's %s, not a pwm device" % (self, self._desc.kind))
            return
        if value is None:
            return  # a pwm device stays one: gpiozero asks this as it closes
        want = self._desc.frequency
        if want is not None and self._desc.chip == "pca9685" and value > 0 and pca9685_prescale(value) == pca9685_prescale(want):
            want = value  # the chip makes value as want: its prescaler's nearest
        if want is not None and abs(value - want) > 1e-9:
            raise PinPWMError("%r: the gateway drives %s at %g Hz (its configuration); asked %g Hz"
                              % (self, self._desc.id, want, value))
        if want is None:
            warnings.warn(PinWarning("%r: the gateway does not say its frequency; %g Hz assumed" % (self, value)))
        self._frequency = value

    # -- edges -------------------------------------------------------------

    def _get_when_changed(self) -> Any:
        return self._when_changed

    def _set_when_changed(self, value: Any) -> None:
        if value is not None and self._desc.kind != "gpio.input":
            raise PinInvalidFunction("%r is an output: it has no edges to watch" % self)
        self._when_changed = value
        if value is not None:
            self._factory._watch_inputs()

    def _changed(self, v: Value) -> None:
        """A value of this device came from the Hub: an edge."""
        old = self._value
        self._value = v.value
        cb = self._when_changed
        if v.initial:
            return  # the level when the watch began: no edge, as on a Pi
        if cb is None or self._desc.kind != "gpio.input" or bool(old) == bool(v.value):
            return
        state = int(bool(v.value) != (self._pull == "up"))
        if self._edges == "both" or self._edges == ("rising" if state else "falling"):
            cb(self._factory.ticks(), state)
