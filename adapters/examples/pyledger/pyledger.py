#!/usr/bin/env python3
"""pyledger: an example service adapter for the oxidepmd adapter protocol v1.

It is written from the protocol's seed pages alone, to show that an adapter
whose author never read the gateway's code runs under it. It keeps a ledger
of the events the daemon sends (events.jsonl in its state directory), adds
two devices at run time (pyledger.events, the count of events received, and
pyledger.note, a text a HAL client may write) and answers reads and writes
of them.

Standard output carries protocol and nothing else: print() is redirected to
standard error, which is the adapter's log. Python 3.9+, standard library
only.
"""

import collections
import datetime
import json
import logging
import os
import sys

NAME = "pyledger"
VERSION = "0.1.0"
SUPPORTED = (1,)  # protocol versions this adapter speaks
ENV_PROTOCOLS = "OXIDEPM_ADAPTER_PROTOCOLS"
DEFAULT_MAX_LINE = 262144
NOTE_MAX = 200  # maxLength of the note device, in characters
CANCELLED_KEPT = 64  # how many cancelled ids are remembered for the log

# Error codes: JSON-RPC's own, and the protocol's.
E_INVALID_REQUEST = -32600
E_METHOD_NOT_FOUND = -32601
E_INVALID_PARAMS = -32602
E_INTERNAL = -32603
E_SERVER = -32000
E_UNSUPPORTED_PROTOCOL = -32022

# The devices added at run time, with their ids unprefixed: devices.add
# gets the descriptor the gateway checks (no source, state or fault: the
# daemon sets those).
DESCRIPTORS = {
    "events": {
        "id": "events",
        "kind": "sensor",
        "label": "events received by pyledger",
        "access": "r",
        "risk": "low",
        "schema": {"type": "integer"},
    },
    "note": {
        "id": "note",
        "kind": "x.note",
        "label": "pyledger note",
        "access": "rw",
        "risk": "low",
        "schema": {"type": "string", "maxLength": NOTE_MAX},
    },
}

log = logging.getLogger(NAME)


class RPCError(Exception):
    """An error answer to a daemon request."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def reject_constant(name):
    # NaN and Infinity are not JSON; Python's decoder accepts them unless told.
    raise ValueError("not JSON: " + name)


def encode(obj):
    """Encodes one frame: compact, ASCII only, so it never holds a raw newline."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")


def parse_protocols(text):
    """Reads the comma-separated protocol numbers of OXIDEPM_ADAPTER_PROTOCOLS."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if part.isascii() and part.isdigit():
            out.append(int(part))
        elif part:
            log.warning("ignoring bad protocol %r in %s", part, ENV_PROTOCOLS)
    return out


def shared_protocol(offered):
    """The highest protocol in offered that this adapter speaks, or None."""
    if not isinstance(offered, list):
        return None
    common = [p for p in offered if type(p) is int and p in SUPPORTED]
    return max(common) if common else None


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


class Ledger:
    """The adapter's files in its state directory. A file that cannot be
    written is logged, never fatal: the protocol keeps running."""

    def __init__(self, state_dir):
        self.dir = state_dir
        self.events = None
        if not state_dir:
            log.error("no state directory (paths.state and HOME are empty): nothing is recorded")
            return
        try:
            os.makedirs(state_dir, exist_ok=True)
            self.events = open(os.path.join(state_dir, "events.jsonl"), "ab")
        except OSError as e:
            log.error("open events.jsonl in %s: %s", state_dir, e)

    def append_event(self, params):
        if self.events is None:
            return
        try:
            line = encode(params)
        except (ValueError, TypeError) as e:
            # Only a number JSON cannot hold (1e400) gets here.
            log.warning("event %r cannot be re-encoded (%s): data kept as text", params.get("seq"), e)
            line = encode(dict(params, data=repr(params.get("data"))))
        try:
            self.events.write(line + b"\n")
            self.events.flush()
        except OSError as e:
            log.error("append to events.jsonl: %s", e)

    def append_note(self, value):
        if not self.dir:
            return
        try:
            with open(os.path.join(self.dir, "note.txt"), "a", encoding="utf-8", errors="backslashreplace") as f:
                f.write(now() + "\t" + json.dumps(value) + "\n")
        except OSError as e:
            log.error("append to note.txt: %s", e)

    def close(self):
        if self.events is not None:
            try:
                self.events.close()
            except OSError as e:
                log.error("close events.jsonl: %s", e)
            self.events = None


class Adapter:
    """One connection to the daemon. Everything runs on one thread: daemon
    requests are answered as they are read, and the replies to this
    adapter's own requests are matched through self.pending, so that the
    reader never blocks waiting for one of them."""

    def __init__(self, out, env_protocols):
        self.out = out
        self.env_protocols = env_protocols
        self.initialized = False  # the initialize reply has been sent
        self.max_line = DEFAULT_MAX_LINE
        self.ledger = None
        self.next_id = 1
        self.pending = {}  # own request id -> callback(result, error)
        self.adding = set()  # devices with a devices.add in flight
        self.added = {}  # device -> published (prefixed) id, once devices.add answered
        self.cancelled = collections.deque(maxlen=CANCELLED_KEPT)
        self.count = 0  # events received
        self.dropped = 0  # events the daemon said it dropped
        self.note = ""
        self.done = False

    # --- output -----------------------------------------------------------

    def send(self, obj):
        self.out.write(encode(obj) + b"\n")
        self.out.flush()

    def reply(self, id_, result):
        self.send({"jsonrpc": "2.0", "id": id_, "result": result})

    def reply_error(self, id_, code, message, data=None):
        err = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self.send({"jsonrpc": "2.0", "id": id_, "error": err})

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, callback):
        id_ = self.next_id
        self.next_id += 1
        self.pending[id_] = callback
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})

    def publish(self, device, value):
        # Only a device the daemon has accepted is published: a value for
        # a device that is not (yet) ours would be refused.
        if device in self.added:
            self.notify("value.publish", {"device": device, "value": value})

    # --- input --------------------------------------------------------------

    def handle_line(self, line):
        """Handles one line from the daemon, without its newline. Nothing
        the daemon sends can end the process here."""
        msg = self.decode(line)
        if msg is None:
            return
        if "method" in msg:
            if not isinstance(msg["method"], str):
                log.warning("dropping a message whose method is not a string")
            elif "id" in msg:
                self.handle_request(msg["id"], msg["method"], msg.get("params"))
            else:
                self.handle_notification(msg["method"], msg.get("params"))
        elif "id" in msg and ("result" in msg or "error" in msg):
            self.handle_response(msg)
        else:
            log.warning("dropping a message that is neither request, notification nor response")

    def decode(self, line):
        line = line.rstrip(b"\r")
        if not line.strip():
            return None
        if b"\x00" in line:
            log.warning("dropping a line with a NUL byte")
            return None
        try:
            msg = json.loads(line.decode("utf-8"), parse_constant=reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            log.warning("dropping a line that is not a JSON frame: %s", str(e)[:200])
            return None
        if not isinstance(msg, dict):
            log.warning("dropping a frame that is not an object (%s)", type(msg).__name__)
            return None
        if msg.get("jsonrpc") != "2.0":
            log.warning("dropping a frame without jsonrpc 2.0")
            return None
        return msg

    def handle_request(self, id_, method, params):
        if not self.initialized and method != "initialize":
            # Silent until initialize: not even an error goes out before it.
            log.warning("dropping request %r before initialize", method)
            return
        if params is None:
            params = {}
        try:
            if not isinstance(params, dict):
                raise RPCError(E_INVALID_PARAMS, "params must be an object")
            handler = self.requests().get(method)
            if handler is None:
                raise RPCError(E_METHOD_NOT_FOUND, "method not found: " + method[:64])
            result = handler(params)
        except RPCError as e:
            self.reply_error(id_, e.code, e.message, e.data)
            return
        except OSError:
            raise  # standard output is gone: nobody to answer
        except Exception:  # a bug here must not end the connection
            log.exception("request %r failed", method)
            self.reply_error(id_, E_INTERNAL, "internal error")
            return
        self.reply(id_, result)
        if method == "shutdown":
            self.done = True

    def handle_notification(self, method, params):
        if not self.initialized:
            log.warning("dropping notification %r before initialize", method)
            return
        if params is None:
            params = {}
        if not isinstance(params, dict):
            log.warning("dropping notification %r whose params are not an object", method[:64])
            return
        handler = self.notifications().get(method)
        if handler is None:
            log.info("ignoring unknown notification %r", method[:64])
            return
        handler(params)

    def handle_response(self, msg):
        callback = self.pending.pop(msg["id"], None) if type(msg["id"]) is int else None
        if callback is None:
            log.warning("dropping a response to id %r, which is not in flight", msg["id"])
            return
        err = msg.get("error")
        callback(msg.get("result") if err is None else None, err)

    def requests(self):
        return {
            "initialize": self.on_initialize,
            "ping": lambda params: {},
            "shutdown": self.on_shutdown,
            "device.read": self.on_read,
            "device.write": self.on_write,
        }

    def notifications(self):
        return {
            "initialized": self.on_initialized,
            "event": self.on_event,
            "cancel": self.on_cancel,
        }

    # --- daemon requests and notifications ---------------------------------

    def on_initialize(self, params):
        if self.initialized:
            raise RPCError(E_INVALID_REQUEST, "already initialized")
        offered = params.get("protocols")
        if self.env_protocols and isinstance(offered, list) and sorted(set(offered)) != sorted(set(self.env_protocols)):
            log.warning("initialize offers %r but %s says %r", offered, ENV_PROTOCOLS, self.env_protocols)
        protocol = shared_protocol(offered)
        if protocol is None:
            log.error("no protocol in common: offered %r, supported %r", offered, list(SUPPORTED))
            raise RPCError(E_UNSUPPORTED_PROTOCOL, "unsupported protocol",
                           {"supported": list(SUPPORTED), "code": "E_ADAPTER_PROTOCOL"})
        adapter = params.get("adapter")
        if isinstance(adapter, dict) and (adapter.get("name"), adapter.get("version")) != (NAME, VERSION):
            log.warning("the daemon has %r on record, this is %s %s", adapter, NAME, VERSION)
        limits = params.get("limits")
        if isinstance(limits, dict) and type(limits.get("max_line")) is int and limits["max_line"] > 0:
            self.max_line = limits["max_line"]
        paths = params.get("paths")
        state = paths.get("state") if isinstance(paths, dict) else None
        if not isinstance(state, str) or not state:
            state = os.environ.get("HOME", "")
            log.warning("initialize has no paths.state; using HOME %r", state)
        self.ledger = Ledger(state)
        self.initialized = True
        log.info("initialized: protocol %d, state %s", protocol, state)
        return {"protocol": protocol, "name": NAME, "version": VERSION}

    def on_initialized(self, params):
        # Both devices are asked for at once; each reply is matched by id,
        # and the device's first value goes out once the daemon accepted it.
        for dev in DESCRIPTORS:
            if dev in self.added or dev in self.adding:
                continue
            self.adding.add(dev)
            self.request("devices.add", {"device": DESCRIPTORS[dev]},
                         lambda result, err, dev=dev: self.on_added(dev, result, err))

    def on_added(self, dev, result, err):
        self.adding.discard(dev)
        if err is not None:
            log.error("devices.add %s refused: %r", dev, err)
            return
        want = NAME + "." + dev
        got = result.get("id") if isinstance(result, dict) else None
        if got != want:
            log.warning("devices.add %s: daemon says id %r, expected %r", dev, got, want)
        self.added[dev] = got if isinstance(got, str) else want
        log.info("device added: %s", self.added[dev])
        self.publish(dev, self.value(dev))

    def on_event(self, params):
        self.count += 1
        dropped = params.get("dropped")
        if type(dropped) is int and dropped > 0:
            self.dropped += dropped
            log.warning("the daemon dropped %d events (%d in all)", dropped, self.dropped)
        self.ledger.append_event(params)
        # Published after every event: one notification per event keeps the
        # count exact without a timer thread.
        self.publish("events", self.count)

    def on_cancel(self, params):
        # Requests are answered as they are read, so by now the cancelled
        # one has its answer: there is nothing to stop.
        self.cancelled.append(params.get("id"))
        log.info("cancel %r: already answered", params.get("id"))

    def on_shutdown(self, params):
        log.info("shutdown: %d events recorded", self.count)
        return {}

    def value(self, dev):
        return self.count if dev == "events" else self.note

    def device_param(self, params):
        dev = params.get("device")
        if not isinstance(dev, str):
            raise RPCError(E_INVALID_PARAMS, "device must be a string")
        if dev not in DESCRIPTORS:
            raise RPCError(E_INVALID_PARAMS, "unknown device: " + dev[:64], {"device": dev[:64]})
        return dev

    def on_read(self, params):
        return {"value": self.value(self.device_param(params))}

    def on_write(self, params):
        dev = self.device_param(params)
        if dev != "note":
            raise RPCError(E_SERVER, "device %s is read-only" % dev)
        if "value" not in params:
            raise RPCError(E_INVALID_PARAMS, "value is required")
        value = params["value"]
        if not isinstance(value, str):
            raise RPCError(E_INVALID_PARAMS, "note must be a string")
        if len(value) > NOTE_MAX:
            raise RPCError(E_INVALID_PARAMS, "note is longer than %d characters" % NOTE_MAX)
        self.note = value
        self.ledger.append_note(value)
        self.publish("note", value)
        return {"value": value}

    def close(self):
        if self.ledger is not None:
            self.ledger.close()


def read_lines(inp, max_line):
    """Yields the lines of inp without their newline. A line longer than
    max_line() is skipped as it streams in, never held whole."""
    while True:
        line = inp.readline(max_line() + 1)
        if not line:
            return
        if line.endswith(b"\n"):
            yield line[:-1]
            continue
        if len(line) <= max_line():
            yield line  # the last line, without a newline
            continue
        log.warning("skipping a line longer than %d bytes", max_line())
        while line and not line.endswith(b"\n"):
            line = inp.readline(65536)


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s " + NAME + ": %(message)s")
    env = os.environ.get(ENV_PROTOCOLS)
    if env is None:
        sys.stderr.write("%s: %s is not set: this adapter is started by the gateway's daemon, "
                         "not by hand\n" % (NAME, ENV_PROTOCOLS))
        return 2
    protocols = parse_protocols(env)
    if shared_protocol(protocols) is None:
        log.warning("%s=%r shares no protocol with %r", ENV_PROTOCOLS, env, list(SUPPORTED))
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must not reach the protocol
    adapter = Adapter(out, protocols)
    try:
        for line in read_lines(sys.stdin.buffer, lambda: adapter.max_line):
            try:
                adapter.handle_line(line)
            except OSError:
                raise
            except Exception:  # never die on what the daemon sends
                log.exception("handling a line failed")
            if adapter.done:
                break
    except OSError as e:
        log.error("connection to the daemon lost: %s", e)
        return 1
    finally:
        adapter.close()
    log.info("exiting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
