"""What the Hub answers, as small dataclasses.

Each keeps the message it came from in ``raw``, so that a gateway
extension this client does not name yet is still within reach.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class ModbusRegister:
    """Where an ``x.modbus`` device's value sits on its unit (the
    descriptor's ``modbus``): ``table`` is "coil", "discrete", "input" or
    "holding"; ``address`` the first coil or register, 0-based as on the
    wire; ``type`` "bool", "int16", "uint16", "int32", "uint32",
    "float32", "int64", "uint64" or "float64", spanning ``words``
    registers (1 for a coil or a discrete input, one bit); ``swap`` the byte order
    across them when not big-endian ("byte", "word" or "word_byte"); the
    value is raw × ``scale`` + ``offset``. The unit id is the
    descriptor's ``address``, the line its ``bus``."""

    table: str
    address: int
    type: str
    words: int = 1
    swap: str = ""
    scale: float = 1.0
    offset: float = 0.0

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "ModbusRegister":
        return cls(table=d.get("table", ""), address=d.get("address", 0), type=d.get("type", ""),
                   words=d.get("words") or 1, swap=d.get("swap", ""), scale=d.get("scale") or 1.0,
                   offset=d.get("offset") or 0.0)


@dataclass
class Descriptor:
    """A device as hal/devices/list describes it (spec §6). ``pin`` and
    ``frequency`` are gateway extensions: the GPIO line a gpio/pwm device
    is wired to, and a pwm device's frequency in Hz. So are ``bus``,
    ``address``, ``chip``, ``channel`` and ``differential``: where a
    device on a bus sits ("/dev/spidev0.0", "mcp3008", channel 0; a
    PCA9685 output's "pca9685"), and an ``x.servo``'s ``min_pulse_us``,
    ``max_pulse_us`` (its pulses at its schema's minimum and maximum
    angle) and ``rate`` (°/s, 0: none). An ``x.modbus`` device has
    ``modbus`` (a ModbusRegister), its unit id in ``address``, its line
    (a serial port, or "tcp://host:port") in ``bus``, ``chip`` "modbus"."""

    id: str
    kind: str
    access: str
    risk: str
    source: str = ""
    label: str = ""
    schema: Dict[str, Any] = field(default_factory=dict)
    safe: Any = None
    state: str = "ok"
    fault: str = ""
    tags: List[str] = field(default_factory=list)
    pin: str = ""
    frequency: Optional[float] = None
    no_safe_reason: str = ""
    bus: str = ""
    address: str = ""
    chip: str = ""
    channel: Optional[int] = None
    differential: bool = False
    min_pulse_us: Optional[float] = None
    max_pulse_us: Optional[float] = None
    rate: float = 0.0
    modbus: Optional[ModbusRegister] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Descriptor":
        return cls(id=d["id"], kind=d.get("kind", ""), access=d.get("access", ""), risk=d.get("risk", ""),
                   source=d.get("source", ""), label=d.get("label", ""), schema=d.get("schema") or {},
                   safe=d.get("safe"), state=d.get("state", "ok"), fault=d.get("fault", ""),
                   tags=list(d.get("tags") or []), pin=d.get("pin", ""), frequency=d.get("frequency"),
                   no_safe_reason=d.get("noSafeReason", ""), bus=d.get("bus", ""), address=d.get("address", ""),
                   chip=d.get("chip", ""), channel=d.get("channel"), differential=bool(d.get("differential")),
                   min_pulse_us=d.get("minPulseUs"), max_pulse_us=d.get("maxPulseUs"), rate=d.get("rate") or 0.0,
                   modbus=ModbusRegister.from_json(d["modbus"]) if d.get("modbus") else None, raw=d)

    def readable(self) -> bool:
        return "r" in self.access

    def writable(self) -> bool:
        return "w" in self.access


@dataclass
class Value:
    """One value of a device: a hal/read answer, a hal/value notification,
    or an item of a Watch.

    ``seq`` is absent (None) for a token limited to some devices; ``dev_seq``
    is the device's own count in this run of the gateway. In a Watch,
    ``missed`` counts the values of this device that were never seen before
    this one (a coalesced queue, or a reconnection), ``restarted`` says
    the gateway restarted since the last value (its counts began again),
    ``reconnected`` that it was read after a lost connection, and
    ``initial`` that it is the value the device held when the Watch
    started (read then, not a change).
    """

    device: str
    value: Any
    ts: str = ""
    seq: Optional[int] = None
    dev_seq: Optional[int] = None
    missed: int = 0
    restarted: bool = False
    reconnected: bool = False
    initial: bool = False

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Value":
        return cls(device=d["device"], value=d.get("value"), ts=d.get("ts", ""),
                   seq=d.get("seq"), dev_seq=d.get("devSeq"))


@dataclass
class WriteResult:
    """A hal/write answer: ``status`` "applied" (with the value's ``seq``
    and ``dev_seq``, and ``reply`` for a serial device asked for one) or
    "pending" (with the Confirmation Request an admin must approve)."""

    status: str
    device: str = ""
    value: Any = None
    ts: str = ""
    seq: Optional[int] = None
    dev_seq: Optional[int] = None
    reply: Any = None
    confirmation: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "WriteResult":
        return cls(status=d.get("status", ""), device=d.get("device", ""), value=d.get("value"),
                   ts=d.get("ts", ""), seq=d.get("seq"), dev_seq=d.get("devSeq"), reply=d.get("reply"),
                   confirmation=d.get("confirmation"), raw=d)


@dataclass
class Confirmation:
    """A Confirmation Request as hal/confirmations/list shows it (spec §7).

    ``value`` is the value asked for; ``current``, while the request is
    pending, the device's value when the Hub answered (a Value; None when
    the device has none yet or the request is resolved), so that whoever
    approves sees what approving would change. ``status`` is "pending",
    "approved", "rejected", "cancelled", "expired", "failed" or
    "superseded": a write applied to the device after the request was
    made, or its creator's newer request for the device, took its place
    (``superseded_by``: ``{principal, value, ts, seq?, devSeq?,
    confirmation?, request?}``), and approving it applies nothing.
    """

    id: str
    device: str
    value: Any
    status: str
    requested_by: Dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    created_at: str = ""
    expires_at: str = ""
    resolved_at: str = ""
    current: Optional[Value] = None
    superseded_by: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Confirmation":
        cur = d.get("current")
        current = None
        if isinstance(cur, dict):
            current = Value(device=d.get("device", ""), value=cur.get("value"), ts=cur.get("ts", ""),
                            seq=cur.get("seq"), dev_seq=cur.get("devSeq"))
        return cls(id=d["id"], device=d.get("device", ""), value=d.get("value"), status=d.get("status", ""),
                   requested_by=d.get("requestedBy") or {}, reason=d.get("reason", ""),
                   created_at=d.get("createdAt", ""), expires_at=d.get("expiresAt", ""),
                   resolved_at=d.get("resolvedAt", ""), current=current, superseded_by=d.get("supersededBy"), raw=d)


@dataclass
class InitResult:
    """The hal/initialize answer: who the token is, what the Hub sends,
    which run of the gateway this is (``boot_id``) and the emergency stop
    in force when the client connected (``stopped``, None when none)."""

    protocol_version: str
    hub_info: Dict[str, Any]
    conformance: str
    principal: Dict[str, Any]
    notifications: List[str]
    boot_id: str = ""
    stopped: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "InitResult":
        caps = d.get("capabilities") or {}
        return cls(protocol_version=d.get("protocolVersion", ""), hub_info=d.get("hubInfo") or {},
                   conformance=d.get("conformance", ""), principal=d.get("principal") or {},
                   notifications=list(caps.get("notifications") or []), boot_id=d.get("bootId", ""),
                   stopped=d.get("stopped"), raw=d)
