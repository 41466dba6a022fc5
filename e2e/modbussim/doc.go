// Package modbussim is a real Modbus peer for tests: Debian's pymodbus 3.0
// (python3-pymodbus, under /usr/bin/python3) as a slave simulator over TCP
// on loopback or RTU on a pseudo-terminal, a Go handle that drives it, and
// a serial relay that injects noise, unplugs the port and paces bytes at a
// baud rate. The gateway's black-box tests and internal/hw tests import it;
// it is a test helper, with no promise beyond this repository.
//
// # Use
//
//	units := modbussim.Units{
//		1: {modbussim.Holding: {100: {0x42F6, 0xE979}}, modbussim.Coil: {0: {1, 0, 1}}},
//		2: {modbussim.Input: {0: {17000, 16}}},
//	}
//	sim := modbussim.StartTCP(t, units)         // sim.Addr is "127.0.0.1:PORT"
//	sim, relay := modbussim.StartRTUBus(t, 19200, units) // the gateway opens relay.Gateway
//	sim.Set(1, modbussim.Holding, 100, 7)        // the instrument's value changes
//	got := sim.Get(1, modbussim.Coil, 0, 3)       // what the gateway wrote
//	sim.Silent(2); sim.Answer(2)                  // unit 2 stops answering, and comes back
//	sim.Delay(1, 300*time.Millisecond)            // unit 1 answers late; others do not wait
//	n := sim.Count()                              // responses sent, for rate figures
//	reqs := sim.Requests()                        // requests heard since the last call
//	relay.Noise([]byte{0xFF}, []byte{0x01, 0x10}) // bytes between frames, each way
//	relay.Unplug(); relay.Plug()                  // the adapter pulled out, and back in
//	relay.Pace(19200, 10)                         // bytes no faster than 19200 baud 8N1
//
// Tables are sparse: only the addresses given exist, and any other answers
// exception 2 (illegal data address); addresses are 0-based wire addresses.
// A unit id not configured never answers, as on a real bus. Every method
// waits for the simulator's answer; none sleeps. The simulator and the
// relay stop when the test ends (t.Cleanup); the simulator also exits when
// the test binary dies (its stdin closes). Without python3-pymodbus the
// test fails (not skips) saying to install it; CI's .ci/run installs it.
//
// The simulator, sim.py, is embedded and written to a temporary directory
// at each start; its protocol (a "ready" line, then one command a line on
// stdin answered by one "ok ..." or "err ..." line) is described in it,
// and Sim.Do sends any command.
//
// # The relay
//
// The gateway's port and the simulator's port are two pseudo-terminals
// from /dev/ptmx (openpty by hand, as the project's other pty tests do),
// with a Go relay copying between their masters. Not socat: socat links
// two ptys but cannot unplug one side, inject bytes or pace them, and the
// relay needs the masters for that anyway. The gateway's side is reached
// by a stable symbolic link in t.TempDir() (relay.Gateway), as
// /dev/serial/by-id gives; Unplug closes that pty's master (the port's
// reads fail, as a pulled USB adapter's do) and removes the link, Plug
// opens a new pty and points the link at it atomically. The relay holds
// each slave open itself, so a master never reads EIO while the gateway
// closes and reopens its port. One consequence: go.bug.st/serial marks
// the port exclusive (TIOCEXCL) and clears that on Close; a gateway killed
// with its port open leaves the mark, since the relay's descriptor keeps
// the terminal, and only root (as CI and these machines run) may then open
// it again. Unplug and Plug give a fresh terminal.
//
// Pace(baud, charBits) delivers each byte once its last bit would have
// arrived on a line at that rate (a byte is due charBits/baud after the
// previous one, or after it was written if the line was idle); a late
// wake-up sends every byte already due at once, so the rate stays the
// line's on a busy machine. The model is full duplex, like RS-232; Modbus
// never sends both ways at once. Noise goes after whatever the relay has
// already read in its direction, never inside a frame written at once.
//
// # pymodbus 3.0 pitfalls met here (Debian bookworm's 3.0.0, "3.0.0.rc1")
//
//   - Debian's python3-pymodbus depends on python3 alone, but its server
//     module imports serial and serial_asyncio: python3-serial-asyncio is
//     only Recommended, so .ci/run installs it by name.
//   - ModbusSlaveContext defaults to zero_mode=False, every address shifted
//     by one: the simulator passes zero_mode=True.
//   - ModbusServerContext(single=True) answers every unit id from one
//     context: the simulator uses single=False with ignore_missing_slaves,
//     so an unknown unit stays silent.
//   - An empty table must be ModbusSparseDataBlock({}): a sequential block
//     over [] raises IndexError, and leaving the table out gives a full
//     65536-address one.
//   - StartTcpServer cannot report the port it bound for port 0, and
//     ServerStop sleeps 10 s: the simulator builds ModbusTcpServer itself,
//     reads the port from its socket, and exits with os._exit.
//   - StartAsyncSerialServer defaults to the ASCII framer: the simulator
//     builds ModbusSerialServer with an RTU framer. Its start() raises for
//     a missing port but swallows other errors: the simulator checks that
//     the port is open before it says ready.
//   - The request handler takes the list of units before it waits for the
//     next request, and its framer drops a request for a unit not in that
//     list: a unit removed and added back would lose its first request.
//     The simulator's context always lists every configured unit, and
//     silences one by removing it from the dict the request looks up.
//   - The RTU server framer drops its whole buffer on a bad CRC or a frame
//     for another unit: noise before a request loses that request, and
//     noise that reads as a long write (function 16, a large byte count)
//     swallows the requests after it. The simulator's framer looks for the
//     first offset where a whole frame passes its CRC instead (a real slave
//     resynchronises on the silence between frames; timing in Python on a
//     busy machine would split frames that were not split).
//   - Every client disconnect is logged at ERROR: the simulator sets the
//     pymodbus logger to CRITICAL.
//   - Writes through the server store coils as True/False: Get reports 0/1.
//   - A unit's delay is applied when the response is sent (call_later on
//     the event loop), not by sleeping in the handler, which would stall
//     every unit and connection; a response held back is dropped if its
//     unit falls silent meanwhile. On a serial bus a late answer can still
//     arrive while the gateway waits for another unit's: as on a real bus.
package modbussim
