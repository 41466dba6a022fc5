"""Errors of the OpenHAL client.

Every error the Hub answers becomes a :class:`HubError` carrying the Hub's
``code``, ``message`` and ``data`` (spec §9), as a subclass named for the
code, so that a script can catch exactly what it can handle
(``except Stopped``) and still see ``data.reason`` for anything else.
Errors of the connection itself are :class:`ConnectionLost` and
:class:`CallTimeout`: nothing was answered, so there is no Hub code.
"""

from typing import Any, Dict, Optional, Type

__all__ = [
    "OpenHALError", "ConnectionLost", "CallTimeout", "VersionMismatch", "FingerprintMismatch", "UnknownGateway",
    "GatewayChanged", "ClearTextRefused", "HubError",
    "ParseError", "InvalidRequest", "MethodNotFound", "InvalidParams", "InternalError", "NotInitialized",
    "Unauthorized", "Forbidden", "DeviceNotFound", "Blocked", "Stopped", "DeviceFault", "NotSupported",
    "Timeout", "Busy", "ConfirmationNotFound", "ConfirmationClosed", "hub_error",
    "GatewayStopped", "ApprovalError", "ApprovalPending", "NotApproved", "ApprovalRejected", "ApprovalExpired",
    "ApprovalSuperseded", "ApprovalCancelled", "ApprovalFailed", "RejectedByStop", "FailedByStop",
]


class OpenHALError(Exception):
    """The root of every error this package raises."""


class ConnectionLost(OpenHALError):
    """The connection ended before the answer came (the Hub restarted,
    the network went away, or the client was closed)."""


class CallTimeout(OpenHALError):
    """No answer within the call's timeout. The request may still be
    applied by the Hub: a write that timed out has an unknown outcome."""


class VersionMismatch(OpenHALError):
    """The Hub answered a protocol version this client cannot use
    (seed 3.1.2, 5: the client disconnects and says which each side has)."""


class FingerprintMismatch(OpenHALError):
    """The TLS certificate the Hub presented is not the pinned one."""


class UnknownGateway(OpenHALError):
    """A gateway met for the first time: no pin was given, and the
    known-gateways file does not have its certificate (openhal.known).
    ``presented`` says what it showed. Nothing was sent to it."""

    def __init__(self, message: str, presented: Any = None):
        super().__init__(message)
        self.presented = presented


class GatewayChanged(FingerprintMismatch):
    """The gateway's certificate is not the one the known-gateways file
    trusts for its id, name or address (``recorded``, on ``line``): it
    made a new one, or something in between is not the gateway. Nothing
    was sent to it."""

    def __init__(self, message: str, presented: Any = None, recorded: str = "", line: int = 0):
        super().__init__(message)
        self.presented, self.recorded, self.line = presented, recorded, line


class ClearTextRefused(OpenHALError):
    """A plain URL (ws://, tcp://) to a host off loopback without
    insecure=True: the token would cross the network in clear."""


class HubError(OpenHALError):
    """An error object the Hub answered: ``{code, message, data}``.

    ``reason`` is ``data["reason"]``, the Hub's machine-readable word
    (always there, spec §1).
    """

    code = 0

    def __init__(self, code: int, message: str, data: Optional[Dict[str, Any]] = None):
        super().__init__("%s (%d, %s)" % (message, code, (data or {}).get("reason", "")))
        self.code = code
        self.message = message
        self.data = data or {}

    @property
    def reason(self) -> str:
        return str(self.data.get("reason", ""))


class GatewayStopped(HubError):
    """The emergency stop is engaged (code -32006): nothing but safe values
    is written until an admin resumes. Catch this one type for the stop,
    whoever raises it: the client's ``Stopped``, the pin factory's
    ``PinStopped``, and a write that waited for approval when the stop
    rejected it (``RejectedByStop``) are all GatewayStopped."""

    code = -32006


def _named(name: str, code: int, doc: str, base: Type[HubError] = HubError) -> Type[HubError]:
    return type(name, (base,), {"code": code, "__doc__": doc})


ParseError = _named("ParseError", -32700, "The Hub could not parse the message.")
InvalidRequest = _named("InvalidRequest", -32600, "Not a request the Hub takes (too large, initialized twice).")
MethodNotFound = _named("MethodNotFound", -32601, "Unknown method, or above the Hub's conformance level.")
InvalidParams = _named("InvalidParams", -32602, "A bad param or a value outside the device's schema.")
InternalError = _named("InternalError", -32603, "A bug in the Hub, or its audit log could not be written.")
NotInitialized = _named("NotInitialized", -32001, "A request before hal/initialize.")
Unauthorized = _named("Unauthorized", -32002, "The token is missing, unknown, revoked or conflicting.")
Forbidden = _named("Forbidden", -32003, "The token's scope does not allow this.")
DeviceNotFound = _named("DeviceNotFound", -32004, "No such device, or not visible to this token.")
Blocked = _named("Blocked", -32005, "A safety rule refused the write (data['rule']).")
Stopped = _named("Stopped", -32006, "The emergency stop is engaged: only safe values are written (a GatewayStopped).",
                 GatewayStopped)
DeviceFault = _named("DeviceFault", -32007, "The hardware or adapter failed.")
NotSupported = _named("NotSupported", -32008, "Read of a write-only device, or write of a read-only one.")
Timeout = _named("Timeout", -32009, "The hardware or adapter did not answer in time.")
Busy = _named("Busy", -32010, "Too many requests in flight, or the Hub is full.")
ConfirmationNotFound = _named("ConfirmationNotFound", -32011, "No such confirmation request.")
ConfirmationClosed = _named("ConfirmationClosed", -32012, "The confirmation request is already resolved.")

_BY_CODE = {cls.code: cls for cls in (
    ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError,
    NotInitialized, Unauthorized, Forbidden, DeviceNotFound, Blocked, Stopped,
    DeviceFault, NotSupported, Timeout, Busy, ConfirmationNotFound,
    ConfirmationClosed)}


def hub_error(obj: Dict[str, Any]) -> HubError:
    """Turns an answer's ``error`` object into the HubError of its code
    (a plain HubError for a code this client does not know)."""
    code = obj.get("code")
    if not isinstance(code, int):
        code = -32603
    data = obj.get("data")
    cls = _BY_CODE.get(code, HubError)
    return cls(code, str(obj.get("message", "")), data if isinstance(data, dict) else {})


# -- writes that wait for a person (spec §7; openhal.pending) ---------------


class ApprovalError(OpenHALError):
    """A write that became a Confirmation Request and was not applied (yet).

    ``id`` is the request's id, ``device`` and ``value`` what was asked,
    ``expires_at`` when it expires, ``status`` the request's status when
    this was raised ("pending", "rejected", "expired", ...), and
    ``confirmation`` the request as the Hub last told it (an
    openhal.Confirmation; None when only the write's answer is known)."""

    def __init__(self, message: str, *, id: str, device: str, value: Any, expires_at: str = "",
                 status: str = "pending", confirmation: Any = None):
        OpenHALError.__init__(self, message)
        self.id, self.device, self.value, self.expires_at = id, device, value, expires_at
        self.status, self.confirmation = status, confirmation


class ApprovalPending(ApprovalError):
    """The write waits for an admin's approval and was not applied: the
    device keeps its value. Raised by ``Pending.wait(timeout)`` when the
    timeout ends first (``waited`` says how long it waited), and by the
    pin factory (as its ``PinApprovalPending``) on a write that became a
    request. The request stays pending: an admin may still approve it,
    its creator cancel it, and a later write of the device supersedes it."""

    def __init__(self, message: str, *, waited: float = 0.0, **kw: Any):
        super().__init__(message, **kw)
        self.waited = waited


class NotApproved(ApprovalError):
    """The request was resolved without its write being applied, and never
    will be: ``status`` says how (a subclass each)."""


class ApprovalRejected(NotApproved):
    """An admin rejected it (``resolve_reason``: their words, the request's
    ``resolveReason``; ``by``: who, its ``rejectedBy``)."""

    def __init__(self, message: str, *, resolve_reason: str = "", by: Optional[Dict[str, Any]] = None, **kw: Any):
        super().__init__(message, **kw)
        self.resolve_reason, self.by = resolve_reason, by or {}


class ApprovalExpired(NotApproved):
    """Nobody resolved it within its lifetime (120 s unless the device's
    ``confirmTtl`` says otherwise)."""


class ApprovalSuperseded(NotApproved):
    """A write applied to the device after the request was made, or its
    creator's newer request for the device, took its place
    (``superseded_by``: ``{principal, value, ts, ...}``)."""

    def __init__(self, message: str, *, superseded_by: Optional[Dict[str, Any]] = None, **kw: Any):
        super().__init__(message, **kw)
        self.superseded_by = superseded_by or {}


class ApprovalCancelled(NotApproved):
    """Its creator cancelled it."""


class ApprovalFailed(NotApproved):
    """An admin approved it, and the write, run again as its creator, was
    refused (a rule, a revoked token, a fault): ``error`` is the Hub's
    refusal, a HubError of its code."""

    def __init__(self, message: str, *, error: Optional[HubError] = None, **kw: Any):
        super().__init__(message, **kw)
        self.error = error


def _stop_fields(err: HubError, message: str, data: Dict[str, Any]) -> None:
    err.code, err.message, err.data = GatewayStopped.code, message, data


class RejectedByStop(ApprovalRejected, GatewayStopped):
    """The emergency stop rejected the request (spec §6: a stop rejects
    every pending request): an ApprovalRejected and a GatewayStopped."""

    def __init__(self, message: str, **kw: Any):
        ApprovalRejected.__init__(self, message, **kw)
        _stop_fields(self, message, {"reason": "stopped", "id": self.id, "status": self.status})


class FailedByStop(ApprovalFailed, GatewayStopped):
    """An admin approved the request, and the emergency stop refused the
    write: an ApprovalFailed and a GatewayStopped."""

    def __init__(self, message: str, **kw: Any):
        ApprovalFailed.__init__(self, message, **kw)
        _stop_fields(self, message, dict(self.error.data) if self.error is not None else {"reason": "stopped"})
