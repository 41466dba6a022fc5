package gatewayd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/hardware"
	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/hw/modbus"
)

// cmdModbus is `gateway modbus SUBCOMMAND`: scan, for now.
func cmdModbus(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("modbus", "scan [flags]")
	switch {
	case len(args) == 0:
		return cli.Usagef(fs, "missing subcommand (scan)")
	case args[0] == "scan":
		return cmdModbusScan(args[1:], stdout, stderr)
	case strings.HasPrefix(args[0], "-"):
		if err := cli.ParseFlags(fs, args[:1]); err != nil {
			return err
		}
	}
	return cli.Usagef(fs, "unknown subcommand %q (want scan)", args[0])
}

// scanFlags are `gateway modbus scan`'s flags.
type scanFlags struct {
	fs                         *flag.FlagSet
	port, parity, stopBits, de string
	tcp, units, probe          string
	baud                       int
	timeout                    time.Duration
	asJSON                     bool
}

func newScanFlags() *scanFlags {
	f := &scanFlags{fs: cli.NewFlagSet("modbus scan", "(--port PATH --baud N | --tcp HOST[:PORT]) [--units 1-10] [flags]")}
	fs := f.fs
	fs.StringVar(&f.port, "port", "", "the serial `port` of an RS-485 line (RTU)")
	fs.IntVar(&f.baud, "baud", 0, "the line's bits per second (RTU)")
	fs.StringVar(&f.parity, "parity", "", "none, even or odd (RTU; none)")
	fs.StringVar(&f.stopBits, "stop-bits", "", "1 or 2 (RTU; 1)")
	fs.StringVar(&f.de, "de", "", "none, rts or rts-low: how the RS-485 driver is enabled (RTU; none)")
	fs.StringVar(&f.tcp, "tcp", "", "a Modbus TCP `host[:port]` (port 502 if left out)")
	fs.StringVar(&f.units, "units", "1-247", "the unit ids to ask: `N`, N-M, or a list of them (1,5,10-12)")
	fs.StringVar(&f.probe, "probe", "holding:0", "the `table:address` each unit is asked for (holding, input, coil or discrete)")
	fs.DurationVar(&f.timeout, "timeout", 200*time.Millisecond, "how long a unit is given to answer")
	fs.BoolVar(&f.asJSON, "json", false, "machine-readable output: one JSON object a unit that answered")
	return f
}

// scanResult is what one unit answered.
type scanResult struct {
	Unit      int    `json:"unit"`
	Answer    string `json:"answer"`              // "value", "exception" or "garbled"
	Value     any    `json:"value,omitempty"`     // the probe's raw value
	Exception string `json:"exception,omitempty"` // "exception 2: illegal data address"
}

// cmdModbusScan asks each unit id on a line for one register or coil and
// lists those that answer. An exception is an answer: the unit is there,
// without that address. A garbled answer is shown too: a unit is there at
// another baud rate or parity, or two answer to one id.
func cmdModbusScan(args []string, stdout, stderr io.Writer) error {
	f := newScanFlags()
	if err := cli.ParseFlags(f.fs, args); err != nil {
		return err
	}
	if err := cli.WantArgs(f.fs, f.fs.Args(), 0); err != nil {
		return err
	}
	lc, err := f.line()
	if err != nil {
		return err
	}
	units, err := parseUnits(f.units, lc.IsTCP())
	if err != nil {
		return cli.Usagef(f.fs, "--units: %v", err)
	}
	table, addr, err := parseProbe(f.probe)
	if err != nil {
		return cli.Usagef(f.fs, "--probe: %v", err)
	}
	ctx := context.Background()
	t, err := hardware.OpenModbus(ctx, lc)
	if err != nil {
		return fmt.Errorf("modbus scan: %w", err)
	}
	defer t.Close()
	c := &modbus.Client{T: t}
	start, found := time.Now(), 0
	for _, u := range units {
		r, ok, err := probe(ctx, c, byte(u), table, addr, f.timeout)
		if err != nil {
			return fmt.Errorf("modbus scan: unit %d: %w", u, err)
		}
		if !ok {
			continue
		}
		found++
		if err := f.print(stdout, r, table, addr); err != nil {
			return err
		}
	}
	if !f.asJSON {
		fmt.Fprintf(stdout, "%d of %d unit ids answered (%s on %s) in %s\n", found, len(units), f.probe, lc.Where(), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// line makes the line the flags describe, judged as the file's would be.
func (f *scanFlags) line() (board.ModbusLineConfig, error) {
	lc := board.ModbusLineConfig{Port: f.port, Parity: f.parity, StopBits: f.stopBits, DE: f.de, TCP: f.tcp, Timeout: &f.timeout}
	if f.baud != 0 {
		lc.Baud = &f.baud
	}
	if f.port == "" && f.tcp == "" {
		return lc, cli.Usagef(f.fs, "--port PATH --baud N (a serial line) or --tcp HOST[:PORT] is required")
	}
	errs := board.CheckModbusLine("scan", lc)
	if len(errs) == 0 {
		return lc, nil
	}
	msgs := make([]string, len(errs))
	flags := map[string]string{"stopBits": "stop-bits", "": "port"}
	for i, e := range errs {
		field := strings.TrimPrefix(strings.TrimPrefix(e.Path, "modbus.scan"), ".")
		if fl, ok := flags[field]; ok {
			field = fl
		}
		msgs[i] = "--" + field + ": " + e.Msg
	}
	return lc, cli.Usagef(f.fs, "%s", strings.Join(msgs, "; "))
}

// probe asks one unit; ok says whether anything answered.
func probe(ctx context.Context, c *modbus.Client, unit byte, t modbus.Table, addr uint16, timeout time.Duration) (scanResult, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := scanResult{Unit: int(unit), Answer: "value"}
	var err error
	if t.Bits() {
		var bits []bool
		if bits, err = c.ReadBits(ctx, unit, t, addr, 1); err == nil {
			r.Value = bits[0]
		}
	} else {
		var regs []uint16
		if regs, err = c.ReadRegisters(ctx, unit, t, addr, 1); err == nil {
			r.Value = regs[0]
		}
	}
	var exc *modbus.Exception
	switch {
	case err == nil:
		return r, true, nil
	case errors.As(err, &exc):
		r.Answer, r.Exception = "exception", exc.Error()
		return r, true, nil
	case errors.Is(err, modbus.ErrCRC) || errors.Is(err, modbus.ErrBadReply):
		r.Answer = "garbled"
		return r, true, nil
	case errors.Is(err, modbus.ErrTimeout):
		return r, false, nil
	}
	return r, false, err
}

func (f *scanFlags) print(w io.Writer, r scanResult, t modbus.Table, addr uint16) error {
	if f.asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	var what string
	switch r.Answer {
	case "value":
		what = fmt.Sprintf("%s %d = %v", t, addr, r.Value)
	case "exception":
		what = fmt.Sprintf("answers %s %d with %s (it is there, without that address)", t, addr, r.Exception)
	default:
		what = "a garbled answer: a unit at another baud rate or parity, or two units with this id"
	}
	_, err := fmt.Fprintf(w, "unit %d: %s\n", r.Unit, what)
	return err
}

// parseUnits reads "1-10", "5" or "1,5,10-12": unit ids, each once, in
// order; 1 to 247 on a serial line, 0 to 255 on TCP.
func parseUnits(s string, tcp bool) ([]int, error) {
	lo, hi := 1, 247
	if tcp {
		lo, hi = 0, 255
	}
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(strings.TrimSpace(part), "-")
		first, err1 := strconv.Atoi(a)
		last, err2 := first, error(nil)
		if isRange {
			last, err2 = strconv.Atoi(b)
		}
		switch {
		case err1 != nil || err2 != nil:
			return nil, fmt.Errorf("%q: want N, N-M or a list of them", part)
		case first < lo || last > hi || first > last:
			return nil, fmt.Errorf("%q: want ids from %d to %d, the first of a range not above its last", part, lo, hi)
		}
		for u := first; u <= last; u++ {
			if !seen[u] {
				seen[u] = true
				out = append(out, u)
			}
		}
	}
	return out, nil
}

// parseProbe reads "holding:0".
func parseProbe(s string) (modbus.Table, uint16, error) {
	name, a, ok := strings.Cut(s, ":")
	t, known := modbus.ParseTable(name)
	addr, err := strconv.ParseUint(a, 10, 16)
	if !ok || !known || err != nil {
		return 0, 0, fmt.Errorf("%q: want TABLE:ADDRESS, such as holding:0 (coil, discrete, input or holding; 0-based)", s)
	}
	return t, uint16(addr), nil
}
