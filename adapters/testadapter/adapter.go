//go:build unix

package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sync"
)

// adapter is one running test adapter: its behaviour, its two outputs, its
// records, and the state its protocol loop, delayed answers and script
// share under mu.
type adapter struct {
	cfg    *config
	out    *wire
	rec    *records
	log    *slog.Logger
	stderr io.Writer
	exit   func(code int) // os.Exit: a failed step or an exit step ends the program

	mu          sync.Mutex
	values      map[string]json.RawMessage // device id → value
	open        map[uint64]bool            // daemon's requests answered later, not yet answered
	calls       map[uint64]*call           // our requests not yet answered
	nextID      uint64                     // the last id our script used
	initialize  bool                       // initialize received: no longer silent
	initialized bool                       // initialized received: fork and script started
}

// call is one of the script's requests waiting for its response.
type call struct {
	method string
	params json.RawMessage
	done   chan struct{} // closed once the response is recorded; nil for nowait
}

func newAdapter(cfg *config, out *wire, rec *records, log *slog.Logger, stderr io.Writer) *adapter {
	values := make(map[string]json.RawMessage, len(cfg.values))
	for k, v := range cfg.values {
		values[k] = v
	}
	return &adapter{
		cfg: cfg, out: out, rec: rec, log: log, stderr: stderr, exit: os.Exit,
		values: values,
		open:   map[uint64]bool{},
		calls:  map[uint64]*call{},
	}
}

// fatal ends the program when a step or a background answer cannot go on.
func (a *adapter) fatal(what string, err error) {
	a.log.Error(what, "err", err)
	a.exit(1)
}
