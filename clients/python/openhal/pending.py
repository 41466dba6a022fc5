"""A write that waits for a person: the typed answer of a pending hal/write.

A ``control_low`` token's write of a high-risk device is not applied: the
Hub makes a Confirmation Request that an admin approves or rejects (spec
§7). ``Client.write`` answers it as a :class:`Pending`, whose ``wait()``
follows the request to its end as the gateway's MCP tool does: it
subscribes to the Hub's notifications first, then looks the request up,
then waits for the ``hal/confirmationResolved`` of its id (every
resolution is sent to every client that sees the device, spec §7, §8),
so that no resolution can fall between the look and the wait.
"""

import queue
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Dict, Optional

from .errors import (ApprovalCancelled, ApprovalError, ApprovalExpired, ApprovalFailed, ApprovalPending,
                     ApprovalRejected, ApprovalSuperseded, ConnectionLost, FailedByStop, GatewayStopped,
                     RejectedByStop, hub_error)
from .types import Confirmation, WriteResult

if TYPE_CHECKING:
    from .client import Client

# How long wait() waits on its queue before it looks the request up again:
# the notification is what ends a wait; this only bounds how stale a
# wait can be if one were ever lost.
_RELOOK = 30.0

RESOLVED_NOTE = "hal/confirmationResolved"


@dataclass
class Pending(WriteResult):
    """A write that became a Confirmation Request: not applied, waiting
    for an admin. A WriteResult (``status`` "pending", ``confirmation``
    the request as the Hub answered it), so code that checked
    ``res.status == "pending"`` keeps working, with the request's ``id``,
    ``device``, ``value`` and ``expires_at`` (RFC 3339, UTC; ``expires``:
    a datetime) as fields, and:

    - ``wait(timeout=None)``: the applied write (a WriteResult) once an
      admin approves; raises ApprovalRejected, ApprovalExpired,
      ApprovalSuperseded, ApprovalCancelled or ApprovalFailed (all
      NotApproved) when the request ends otherwise, RejectedByStop (also
      a GatewayStopped) when the emergency stop rejects it, and
      ApprovalPending when ``timeout`` seconds pass first.
    - ``check()``: the request as the gateway lists it now (a Confirmation).
    - ``cancel()``: withdraws it (its creator only).
    """

    id: str = ""
    expires_at: str = ""
    client: Optional["Client"] = field(default=None, repr=False, compare=False)

    @classmethod
    def from_write(cls, d: Dict[str, Any], client: "Client") -> "Pending":
        c = d.get("confirmation") or {}
        return cls(status=d.get("status", "pending"), device=c.get("device", ""), value=c.get("value"),
                   confirmation=c, raw=d, id=c.get("id", ""), expires_at=c.get("expiresAt", ""), client=client)

    @property
    def expires(self) -> Optional[datetime]:
        """expires_at as an aware datetime (None if the Hub sent none)."""
        return parse_time(self.expires_at)

    def _client(self) -> "Client":
        if self.client is None:
            raise ConnectionLost("confirmation %s: this Pending has no connection to follow it on" % self.id)
        return self.client

    def check(self, timeout: Optional[float] = None) -> Confirmation:
        return self._client().confirmation(self.id, timeout)

    def cancel(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        return self._client().cancel(self.id, timeout)

    def wait(self, timeout: Optional[float] = None, client: Optional["Client"] = None) -> WriteResult:
        """Waits until the request is resolved, at most timeout seconds
        (None: until it is; its lifetime bounds that). Returns the applied
        write when approved; raises as the class says otherwise. A lost
        connection raises ConnectionLost: the request outlives it, and
        ``wait(client=)`` follows it on a new connection of the same token.
        A restart of the gateway drops every request: ConfirmationNotFound."""
        c = client or self._client()
        deadline = None if timeout is None else time.monotonic() + max(timeout, 0.0)
        q = c.subscribe()  # before the first look: no resolution falls between
        try:
            while True:
                conf = c.confirmation(self.id)
                if conf.status != "pending":
                    return outcome(conf)
                got = self._next_resolution(q, deadline)
                if got is not None:
                    return outcome(got)
                if deadline is not None and time.monotonic() >= deadline:
                    raise self.still_pending(timeout or 0.0, conf)
        finally:
            c.unsubscribe(q)

    def _next_resolution(self, q: "queue.Queue[Any]", deadline: Optional[float]) -> Optional[Confirmation]:
        """The request's resolution from the queue, or None when it is time
        to look again (the deadline, or _RELOOK)."""
        end = time.monotonic() + _RELOOK
        if deadline is not None:
            end = min(end, deadline)
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                note = q.get(timeout=left)
            except queue.Empty:
                return None
            if note is None:
                raise ConnectionLost("the connection ended while confirmation %s (%s = %r) waited for an admin; "
                                     "the request outlives it" % (self.id, self.device, self.value))
            method, params = note
            conf = params.get("confirmation") if method == RESOLVED_NOTE else None
            if isinstance(conf, dict) and conf.get("id") == self.id:
                return Confirmation.from_json(conf)

    def still_pending(self, waited: float, conf: Optional[Confirmation] = None) -> ApprovalPending:
        """The ApprovalPending of this request after waited seconds."""
        what = "waits" if waited <= 0 else "still waits, after %.3g s," % waited
        return ApprovalPending("the write of %s = %s %s for an admin's approval (confirmation %s, until %s): "
                               "not applied; the device keeps its value until an admin approves "
                               "(gateway confirm approve %s)"
                               % (self.device, _js(self.value), what, self.id, self.expires_at, self.id),
                               waited=waited, id=self.id, device=self.device, value=self.value,
                               expires_at=self.expires_at, confirmation=conf)


def outcome(conf: Confirmation) -> WriteResult:
    """The applied write of an approved request; raises for any other end."""
    if conf.status == "approved":
        res = conf.raw.get("result")
        if isinstance(res, dict):
            return WriteResult.from_json(res)
        return WriteResult(status="applied", device=conf.device, value=conf.value)
    raise resolution_error(conf)


def resolution_error(conf: Confirmation) -> ApprovalError:
    """The exception of a request resolved without being applied."""
    what = "confirmation %s (%s = %s)" % (conf.id, conf.device, _js(conf.value))
    kw: Dict[str, Any] = dict(id=conf.id, device=conf.device, value=conf.value, expires_at=conf.expires_at,
                              status=conf.status, confirmation=conf)
    raw = conf.raw
    if conf.status == "rejected":
        why, by = raw.get("resolveReason", ""), raw.get("rejectedBy") or {}
        if why == "emergency_stop":
            return RejectedByStop("%s was rejected by the emergency stop: not applied" % what,
                                  resolve_reason=why, by=by, **kw)
        return ApprovalRejected("%s was rejected by %s%s: not applied"
                                % (what, by.get("name", "an admin"), ": " + why if why else ""),
                                resolve_reason=why, by=by, **kw)
    if conf.status == "expired":
        return ApprovalExpired("%s expired at %s without an admin's approval: not applied" % (what, conf.expires_at), **kw)
    if conf.status == "superseded":
        s = conf.superseded_by or {}
        by = (s.get("principal") or {}).get("name", "another write")
        return ApprovalSuperseded("%s was superseded by %s's write of %s: not applied, and never will be"
                                  % (what, by, _js(s.get("value"))), superseded_by=s, **kw)
    if conf.status == "cancelled":
        return ApprovalCancelled("%s was cancelled by its creator: not applied" % what, **kw)
    err = hub_error(raw["error"]) if isinstance(raw.get("error"), dict) else None
    msg = "%s was approved, and the write was refused: %s" % (what, err.message if err else conf.status)
    if conf.status == "failed" and isinstance(err, GatewayStopped):
        return FailedByStop(msg, error=err, **kw)
    return ApprovalFailed(msg, error=err, **kw)


def parse_time(s: str) -> Optional[datetime]:
    """An RFC 3339 time as the Hub writes it (UTC, up to nanoseconds), as
    an aware datetime; None for ""."""
    if not s:
        return None
    t = s.replace("Z", "+00:00")
    head, dot, rest = t.partition(".")
    if dot:  # Python takes at most 6 digits of fraction before 3.11
        digits = len(rest) - len(rest.lstrip("0123456789"))
        t = head + "." + rest[:min(digits, 6)].ljust(6, "0") + rest[digits:]
    return datetime.fromisoformat(t).astimezone(timezone.utc)


def _js(v: Any) -> str:
    """A value as JSON writes it (true, not True): as the CLI prints it."""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    return repr(v) if isinstance(v, str) else str(v)
