"""A Modbus slave simulator on Debian's pymodbus 3.0, driven by the gateway's tests.

Usage (the Go package e2e/modbussim writes this file and starts it):

    python3 sim.py tcp UNITS              serve Modbus TCP on 127.0.0.1, a free port
    python3 sim.py rtu PATH BAUD UNITS    serve Modbus RTU on the serial port PATH

UNITS is a JSON object, inline or the path of a file holding it:

    {"units": {"1": {"coil": {"0": [1, 0, 1]}, "holding": {"100": [17142, 59769]}}}}

Each table (coil, discrete, input, holding) is sparse: an address not given
answers exception 2 (illegal data address). Addresses are 0-based wire
addresses. A unit not given never answers, as on a real bus.

When serving it prints one line, "ready ADDR" (TCP: 127.0.0.1:PORT; RTU: PATH).
Then it reads commands on stdin, one a line, and answers each with one line
on stdout, "ok ..." or "err ...":

    silent U                     unit U stops answering
    answer U                     unit U answers again
    set U TABLE ADDR V1 V2 ...   write values (coils 0/1); new addresses are added
    get U TABLE ADDR N           "ok V1 V2 ..." (coils as 0/1)
    delay U MS                   unit U answers MS milliseconds late (0: at once)
    count                        "ok N": responses sent so far
    requests                     "ok U:FC:ADDR:N ...": the requests heard since the
                                 last "requests" (unit, function code, first address,
                                 how many coils or registers), oldest first, silent
                                 units' too; at most the last 10000 are kept
    quit                         "ok", then exit; so does the end of stdin
"""

import asyncio
import json
import logging
import os
import sys

try:
    from pymodbus.datastore import (
        ModbusServerContext,
        ModbusSlaveContext,
        ModbusSparseDataBlock,
    )
    from pymodbus.exceptions import NoSuchSlaveException
    from pymodbus.framer.rtu_framer import ModbusRtuFramer
    from pymodbus.framer.socket_framer import ModbusSocketFramer
    from pymodbus.server.async_io import (
        ModbusConnectedRequestHandler,
        ModbusSerialServer,
        ModbusSingleRequestHandler,
        ModbusTcpServer,
    )
    from pymodbus.utilities import checkCRC
except ImportError as exc:
    print(f"err no pymodbus: {exc}", flush=True)
    sys.exit(3)

# The store of each table in a ModbusSlaveContext, and the keyword that
# builds it.
TABLES = {"coil": ("c", "co"), "discrete": ("d", "di"), "input": ("i", "ir"), "holding": ("h", "hr")}
BITS = ("coil", "discrete")
# The most requests "requests" keeps between two calls.
MAX_HEARD = 10000


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Context(ModbusServerContext):
    """The units, by id. slaves() names every configured unit, silent or
    not: pymodbus's handler takes that list before it waits for the next
    request, so a unit added back after the wait began would have its
    first request dropped by the framer. A silent unit is instead missing
    from the dict, and the request's execution finds no slave (silence,
    with ignore_missing_slaves)."""

    def __init__(self, units):
        super().__init__(slaves=dict(units), single=False)
        self.ids = sorted(units)

    def slaves(self):
        return list(self.ids)


class Sim:
    """The state the control commands change."""

    def __init__(self, units):
        self.units = units  # every configured unit, silent or not
        self.context = Context(units)
        self.delays = {}  # unit -> seconds
        self.served = 0
        self.heard = []  # "U:FC:ADDR:N" of each request since the last "requests"

    def command(self, line):
        words = line.split()
        if not words:
            return "err empty command"
        name, args = words[0], words[1:]
        handler = getattr(self, "cmd_" + name, None)
        if handler is None:
            return f"err unknown command {name!r}"
        try:
            return handler(*args)
        except TypeError:
            return f"err {name}: wrong number of arguments"
        except ValueError as exc:
            return f"err {name}: {exc}"

    def unit(self, word):
        unit = int(word)
        if unit not in self.units:
            raise ValueError(f"unit {unit} is not configured")
        return unit

    def block(self, unit, table):
        if table not in TABLES:
            raise ValueError(f"table {table!r} is not coil, discrete, input or holding")
        return self.units[unit].store[TABLES[table][0]]

    def cmd_silent(self, unit):
        unit = self.unit(unit)
        if unit in self.context:
            del self.context[unit]
        return "ok"

    def cmd_answer(self, unit):
        unit = self.unit(unit)
        self.context[unit] = self.units[unit]
        return "ok"

    def cmd_set(self, unit, table, addr, *values):
        unit = self.unit(unit)
        block = self.block(unit, table)
        values = [parse_value(table, v) for v in values]
        if not values:
            raise ValueError("no values")
        block.setValues(parse_addr(addr, len(values)), values)
        return "ok"

    def cmd_get(self, unit, table, addr, count):
        unit = self.unit(unit)
        block = self.block(unit, table)
        count = int(count)
        addr = parse_addr(addr, count)
        if count < 1 or not block.validate(addr, count):
            raise ValueError(f"{table} {addr}+{count} of unit {unit} is not all defined")
        values = block.getValues(addr, count)
        return "ok " + " ".join(str(int(v)) for v in values)

    def cmd_delay(self, unit, ms):
        unit = self.unit(unit)
        ms = int(ms)
        if ms < 0:
            raise ValueError("negative delay")
        self.delays[unit] = ms / 1000
        return "ok"

    def cmd_count(self):
        return f"ok {self.served}"

    def cmd_requests(self):
        heard, self.heard = self.heard, []
        return " ".join(["ok"] + heard)

    def hear(self, request):
        """Notes a request for a configured unit that passed its CRC."""
        count = getattr(request, "count", None)
        if count is None:
            values = getattr(request, "values", None)
            count = len(values) if isinstance(values, list) else 1
        address = getattr(request, "address", 0)
        self.heard.append(f"{request.unit_id}:{request.function_code}:{address}:{count}")
        if len(self.heard) > MAX_HEARD:
            del self.heard[: len(self.heard) - MAX_HEARD]

    def cmd_quit(self):
        say("ok")
        os._exit(0)


def parse_value(table, word):
    value = int(word, 0)
    top = 1 if table in BITS else 0xFFFF
    if not 0 <= value <= top:
        raise ValueError(f"value {word} out of range 0..{top} for {table}")
    return bool(value) if table in BITS else value


def parse_addr(word, count):
    addr = int(word, 0)
    if addr < 0 or addr + max(count, 1) > 0x10000:
        raise ValueError(f"address {word}+{count} out of range 0..65535")
    return addr


def build_units(spec):
    """{"units": {"1": {"holding": {"100": [1, 2]}}}} -> {1: ModbusSlaveContext}."""
    units = {}
    for uid, tables in spec.get("units", {}).items():
        unit = int(uid)
        if not 1 <= unit <= 247:  # 0 is the broadcast address
            raise ValueError(f"unit {uid} out of range 1..247")
        blocks = {}
        for table, starts in tables.items():
            if table not in TABLES:
                raise ValueError(f"unit {uid}: table {table!r} is not coil, discrete, input or holding")
            values = {}
            for start, vals in starts.items():
                addr = parse_addr(start, len(vals))
                for i, v in enumerate(vals):
                    values[addr + i] = parse_value(table, str(v))
            blocks[TABLES[table][1]] = ModbusSparseDataBlock(values)
        for table, (_, kw) in TABLES.items():
            # An empty table must be an empty sparse block: a sequential
            # block over [] raises IndexError, and the default is a full
            # 65536-address table.
            blocks.setdefault(kw, ModbusSparseDataBlock({}))
        units[unit] = ModbusSlaveContext(zero_mode=True, **blocks)
    return units


class Answering:
    """Mixed into pymodbus's request handlers: each request is noted (the
    "requests" command), a response is held back by its unit's delay (on
    the event loop, so other units and connections go on meanwhile),
    dropped if its unit fell silent while it waited, and counted when
    sent."""

    def execute(self, request, *addr):
        self.server.sim.hear(request)
        super().execute(request, *addr)

    def send(self, message, *addr, **kwargs):
        sim = self.server.sim
        delay = sim.delays.get(message.unit_id, 0)
        if delay > 0:
            asyncio.get_running_loop().call_later(delay, self.send_now, message, addr, kwargs)
        else:
            self.send_now(message, addr, kwargs)

    def send_now(self, message, addr, kwargs):
        sim = self.server.sim
        if not self.running or message.unit_id not in sim.context:
            return
        sim.served += 1
        super().send(message, *addr, **kwargs)


class TcpHandler(Answering, ModbusConnectedRequestHandler):
    pass


class SerialHandler(Answering, ModbusSingleRequestHandler):
    pass


class ResyncRtuFramer(ModbusRtuFramer):
    """pymodbus 3.0's RTU framer drops its whole buffer when a frame fails
    its CRC or names another unit, so line noise before a request loses
    that request, and noise whose second byte reads as a long function
    (16 with a large byte count) swallows the requests after it. A real
    slave resynchronises on the silence between frames; this one looks
    for the first offset where a whole frame passes its CRC instead, with
    no timing, and skips frames for other units one by one."""

    MAX_BUFFER = 1024

    def frame_at(self, i):
        """The size of the frame at offset i: >0 whole and valid, 0 not a
        frame (bad CRC), None not yet whole."""
        buf = self._buffer[i:]
        if len(buf) < 4:
            return None
        try:
            size = self.decoder.lookupPduClass(buf[1]).calculateRtuFrameSize(buf)
        except IndexError:  # its byte count is not here yet
            return None
        except Exception:  # pylint: disable=broad-except
            return 0  # a function whose size pymodbus cannot tell
        if size < 4 or size > 256:
            return 0
        if len(buf) < size:
            return None
        crc = (buf[size - 2] << 8) | buf[size - 1]
        return size if checkCRC(buf[: size - 2], crc) else 0

    def processIncomingPacket(self, data, callback, unit, **kwargs):  # pylint: disable=arguments-differ
        units = unit if isinstance(unit, (list, tuple)) else [unit]
        self.addToFrame(data)
        if len(self._buffer) > self.MAX_BUFFER:
            self._buffer = self._buffer[-self.MAX_BUFFER :]
        while self._buffer:
            size = self.frame_at(0)
            if size is None:
                later = next((i for i in range(1, len(self._buffer) - 3) if self.frame_at(i)), None)
                if later is None:
                    return
                self._buffer = self._buffer[later:]
                continue
            if size == 0:
                self._buffer = self._buffer[1:]
                continue
            self._header = {"uid": self._buffer[0], "len": size, "crc": self._buffer[size - 2 : size]}
            if self._buffer[0] not in units:
                self.advanceFrame()
                continue
            try:
                self._process(callback)
            except Exception:  # pylint: disable=broad-except
                self.advanceFrame()


async def serve_tcp(sim):
    server = ModbusTcpServer(
        sim.context,
        framer=ModbusSocketFramer,
        address=("127.0.0.1", 0),
        handler=TcpHandler,
        ignore_missing_slaves=True,
    )
    server.sim = sim
    task = asyncio.create_task(server.serve_forever())
    await server.serving
    host, port = server.server.sockets[0].getsockname()[:2]
    return f"{host}:{port}", task


async def serve_rtu(sim, path, baud):
    server = ModbusSerialServer(
        sim.context,
        framer=ResyncRtuFramer,
        port=path,
        baudrate=baud,
        handler=SerialHandler,
        ignore_missing_slaves=True,
    )
    server.sim = sim
    await server.start()  # raises for a missing port, swallows other errors
    if server.transport is None:
        raise OSError(f"could not open serial port {path}")
    return path, server


async def control(sim):
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        line = await reader.readline()
        if not line:
            os._exit(0)  # the test that started us is gone
        say(sim.command(line.decode(errors="replace")))


async def main(argv):
    logging.getLogger("pymodbus").setLevel(logging.CRITICAL)
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    if len(argv) == 2 and argv[0] == "tcp":
        mode, spec = "tcp", argv[1]
    elif len(argv) == 4 and argv[0] == "rtu":
        mode, spec = "rtu", argv[3]
    else:
        say("err usage: sim.py tcp UNITS | sim.py rtu PATH BAUD UNITS")
        sys.exit(2)
    try:
        if spec.lstrip().startswith("{"):
            config = json.loads(spec)
        else:
            with open(spec, encoding="utf-8") as f:
                config = json.load(f)
        sim = Sim(build_units(config))
        if mode == "tcp":
            where, keep = await serve_tcp(sim)
        else:
            where, keep = await serve_rtu(sim, argv[1], int(argv[2]))
    except Exception as exc:  # pylint: disable=broad-except
        say(f"err start: {type(exc).__name__}: {exc}")
        sys.exit(1)
    say(f"ready {where}")
    await control(sim)
    del keep


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
