// Command sysinfo is an example tool adapter (adapter protocol 1), written
// with package adapters. It provides two read-only sensors, declared in
// its adapter.json and published as sysinfo.load and sysinfo.uptime: the
// load averages from /proc/loadavg and the time since boot from
// /proc/uptime. As a tool it is started for a request, kept warm for a
// while, and stopped when idle; it calls nothing of the daemon, so its
// grant is the least there is: read, over no device.
//
// Build it next to its adapter.json and install that folder:
//
//	go build -o bin/adapters/sysinfo/sysinfo ./adapters/examples/sysinfo
//	cp adapters/examples/sysinfo/adapter.json bin/adapters/sysinfo/
//	gateway adapter install bin/adapters/sysinfo
package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/openhal/gateway/adapter"
	"github.com/openhal/gateway/jsonrpc"
)

// Name and version must be those of adapter.json: the daemon fails an
// adapter that answers otherwise as tampered.
const (
	name    = "sysinfo"
	version = "0.1.0"
)

func main() {
	s := sysinfo{proc: "/proc", now: time.Now}
	a := s.adapter()
	a.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	a.Main()
}

// sysinfo reads its values from proc, a procfs mount (a fake one in
// tests).
type sysinfo struct {
	proc string
	now  func() time.Time
}

func (s sysinfo) adapter() adapter.Adapter {
	return adapter.Adapter{Name: name, Version: version, OnRead: s.read}
}

// read answers device.read for the adapter's own devices (unprefixed
// ids). A device it does not have is the daemon's mistake: invalid
// params.
func (s sysinfo) read(_ context.Context, _ *adapter.Conn, id string) (adapter.Reading, error) {
	var v any
	var err error
	switch id {
	case "load":
		v, err = s.load()
	case "uptime":
		v, err = s.uptime()
	default:
		return adapter.Reading{}, &adapter.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no device %q", id)}
	}
	if err != nil {
		return adapter.Reading{}, err
	}
	return adapter.Reading{Value: v, TS: s.now()}, nil
}

// load reads "0.52 0.58 0.59 1/389 12345" from loadavg.
func (s sysinfo) load() (map[string]float64, error) {
	f, err := s.fields("loadavg", 3)
	if err != nil {
		return nil, err
	}
	return map[string]float64{"load1": f[0], "load5": f[1], "load15": f[2]}, nil
}

// uptime reads "12345.67 45678.90" from uptime: seconds since boot, then
// idle seconds.
func (s sysinfo) uptime() (float64, error) {
	f, err := s.fields("uptime", 1)
	if err != nil {
		return 0, err
	}
	return f[0], nil
}

// fields returns the first n fields of a proc file as numbers.
func (s sysinfo) fields(file string, n int) ([]float64, error) {
	p := filepath.Join(s.proc, file)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	words := strings.Fields(string(b))
	if len(words) < n {
		return nil, fmt.Errorf("read %s: %d fields, want %d", p, len(words), n)
	}
	out := make([]float64, n)
	for i := range out {
		if out[i], err = strconv.ParseFloat(words[i], 64); err != nil || out[i] < 0 || math.IsInf(out[i], 0) || math.IsNaN(out[i]) {
			return nil, fmt.Errorf("read %s: field %d is %q, not a number of 0 or more", p, i+1, words[i])
		}
	}
	return out, nil
}
