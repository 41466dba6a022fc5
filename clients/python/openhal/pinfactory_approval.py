"""Pending is never silent: a pin's write that became a Confirmation Request.

A ``control_low`` token's write of a high-risk device (``heater.on()`` on
``sim.heater``) is not applied: the gateway makes a request that an admin
approves or rejects (spec §7). The pin factory then raises
:class:`PinApprovalPending` at once, or, when the script opted into
waiting (``OPENHAL_WAIT_APPROVAL=SECONDS`` or the factory's
``wait_approval=``), waits for the request's end: it returns once an
admin approves (the write is applied), and raises the outcome otherwise.

Each exception here is a gpiozero ``PinError`` (``except GPIOZeroError``
catches it, as it catches every other pin failure) and the client's
exception of the same outcome (``except openhal.ApprovalRejected``,
``except openhal.NotApproved``, ``except openhal.ApprovalError``):

============================  ==============================================
PinApprovalPending            not applied, still waits (openhal.ApprovalPending)
PinApprovalRejected           an admin rejected it
PinRejectedByStop             the emergency stop rejected it (a GatewayStopped too)
PinApprovalExpired            nobody decided within its lifetime
PinApprovalSuperseded         a later write of the device took its place
PinApprovalCancelled          its creator cancelled it
PinApprovalFailed             approved, then refused when run (PinFailedByStop: by the stop)
============================  ==============================================
"""

import math
import os
import time
from typing import Any, Callable, Dict, Optional, Type

from gpiozero.exc import GPIOZeroError, PinError

from . import errors
from .client import Client
from .errors import ApprovalError, ConnectionLost
from .pending import Pending
from .types import WriteResult

WAIT_ENV = "OPENHAL_WAIT_APPROVAL"


def _pin_class(base: Type[ApprovalError]) -> Type[ApprovalError]:
    doc = "A pin's write: %s It is a gpiozero PinError and an openhal.%s." % (
        (base.__doc__ or "").split("\n\n")[0].strip(), base.__name__)
    return type("Pin" + base.__name__, (PinError, base), {"__doc__": doc, "__module__": "openhal.pinfactory"})


PinApprovalPending = _pin_class(errors.ApprovalPending)
PinApprovalRejected = _pin_class(errors.ApprovalRejected)
PinRejectedByStop = _pin_class(errors.RejectedByStop)
PinApprovalExpired = _pin_class(errors.ApprovalExpired)
PinApprovalSuperseded = _pin_class(errors.ApprovalSuperseded)
PinApprovalCancelled = _pin_class(errors.ApprovalCancelled)
PinApprovalFailed = _pin_class(errors.ApprovalFailed)
PinFailedByStop = _pin_class(errors.FailedByStop)

# The client's class -> the pin factory's.
_PIN: Dict[type, type] = {p.__bases__[1]: p for p in (
    PinApprovalPending, PinApprovalRejected, PinRejectedByStop, PinApprovalExpired, PinApprovalSuperseded,
    PinApprovalCancelled, PinApprovalFailed, PinFailedByStop)}


def as_pin_error(err: ApprovalError, pin: str) -> ApprovalError:
    """err as its pin factory class, its message prefixed by the pin (an
    instance of a Pin class is copied as it is: a new exception, without
    the frames of the one raised in another thread)."""
    base = next((b for b in type(err).__mro__ if b in _PIN), type(err))
    cls = _PIN.get(base, type(err))
    out = cls.__new__(cls)
    out.__dict__.update(err.__dict__)
    msg = str(err)
    out.args = (msg if not pin or msg.startswith(pin + ": ") else "%s: %s" % (pin, msg),)
    return out


def wait_setting(arg: Optional[float]) -> float:
    """How long a pin's write waits for approval, in seconds: the factory's
    wait_approval, else $OPENHAL_WAIT_APPROVAL, else 0 (raise at once).
    A value that is not a number ≥ 0 is refused, naming where it came from."""
    src, raw = ("wait_approval", arg) if arg is not None else (WAIT_ENV, os.environ.get(WAIT_ENV, "").strip() or "0")
    try:
        s = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        s = -1.0
    if math.isnan(s) or s < 0:
        raise GPIOZeroError("OpenHALFactory: %s=%r: want the seconds a write that needs an admin's approval waits "
                            "for it: a number, 0 (raise PinApprovalPending at once) or more" % (src, raw))
    return s


def settle(pin: str, pending: Pending, wait: float, client: Callable[[], Client]) -> WriteResult:
    """The applied write of a pin's pending write, after waiting for it at
    most wait seconds (0: not at all); raises its Pin exception otherwise.
    A lost connection is made again (client()) and the wait goes on: the
    request outlives the connection."""
    if wait <= 0:
        raise as_pin_error(pending.still_pending(0.0), pin)
    deadline = time.monotonic() + wait
    c: Optional[Client] = None
    while True:
        try:
            return pending.wait(max(deadline - time.monotonic(), 0.0), client=c)
        except ApprovalError as e:
            if isinstance(e, errors.ApprovalPending):
                e = pending.still_pending(wait, e.confirmation)
            raise as_pin_error(e, pin) from None
        except ConnectionLost:
            if time.monotonic() >= deadline:
                raise
            c = client()


def is_pin_approval(err: Any) -> bool:
    """Whether err is one of this module's exceptions."""
    return isinstance(err, PinError) and isinstance(err, ApprovalError)
