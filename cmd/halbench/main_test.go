package main

import (
	"errors"
	"io"
	"slices"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	s, err := parseFlags([]string{"--quick", "--rounds", "3", "--clients", "1, 8,64"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// --quick's values, except the one given.
	if s.rounds != 3 || s.duration != 500*time.Millisecond || s.warmup != 100*time.Millisecond ||
		s.fanout != 2*time.Second || s.idle != 3*time.Second {
		t.Errorf("--quick --rounds 3: rounds %d, duration %s, warmup %s, fanout %s, idle %s",
			s.rounds, s.duration, s.warmup, s.fanout, s.idle)
	}
	if !slices.Equal(s.clients, []int{1, 8, 64}) {
		t.Errorf("clients = %v", s.clients)
	}
	d, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d.rounds != 5 || d.duration != 2*time.Second || d.fanout != 10*time.Second || d.idle != 10*time.Second ||
		d.watchers != 250 || d.writeRate != 1000 || d.rssConns != 100 || d.idleClients != 100 || d.idleAdapters != 20 ||
		!slices.Equal(d.clients, []int{1, 64}) || !slices.Equal(d.writers, []int{1, 64}) {
		t.Errorf("defaults: %+v", d)
	}
}

func TestParseFlagsRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"--hub-ws", "ws://127.0.0.1:1/hal"},
		{"--hub-ws", "ws://127.0.0.1:1/hal", "--hub-tcp", "tcp://127.0.0.1:2"},
		{"--pid", "12"},
		{"--clients", "1,0"},
		{"--writers", "x"},
		{"--idle-adapters", "-1"},
		{"--hub-ws", "ws://127.0.0.1:1/hal", "--hub-tcp", "tcp://127.0.0.1:2", "--token", "t"}, // --idle-adapters needs a gateway it starts
		{"--rounds", "0"},
		{"--write-window", "0"},
		{"extra"},
		{"--no-such-flag"},
	} {
		if _, err := parseFlags(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("parseFlags(%q) = %v, want a usage error", args, err)
		}
	}
}
