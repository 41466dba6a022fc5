//go:build unix

// Command testadapter is the scripted adapter of the supervisor's tests:
// by default a correct adapter of the oxidepmd adapter protocol v1, and,
// as its flags say, one that misbehaves in a chosen way. It writes the
// protocol itself, byte by byte, so that it can break any rule, and it
// records what it received and how it was started in $HOME (its state
// directory) for the tests to check. See README.md for the flags and files.
package main

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	errw := &lockedWriter{w: stderr}
	log := slog.New(slog.NewTextHandler(errw, nil)).With("prog", "testadapter", "pid", os.Getpid())
	cfg, err := parseFlags(args, errw)
	if err != nil {
		log.Error("bad arguments", "err", err)
		return 2
	}
	switch {
	case cfg.sleeper:
		return runSleeper(log)
	case cfg.sleeperParent:
		return runSleeperParent(log, stdout)
	}
	// A write to a closed stdout is an error to report, not a SIGPIPE death.
	signal.Ignore(syscall.SIGPIPE)
	if cfg.ignoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	home := os.Getenv("HOME")
	if home == "" {
		log.Error("HOME is not set: nowhere to keep the records")
		return 1
	}
	rec := &records{dir: home}
	if err := rec.start(cfg.probe); err != nil {
		log.Error("write start record", "err", err)
		return 1
	}
	if cfg.exitAtStart != nil {
		log.Info("exiting at start", "code", *cfg.exitAtStart)
		return *cfg.exitAtStart
	}
	a := newAdapter(cfg, &wire{w: stdout, silent: cfg.silent}, rec, log, errw)
	err = a.serve(stdin)
	if !errors.Is(err, io.EOF) && !errors.Is(err, errShutdown) {
		log.Error("protocol loop", "err", err)
		return 1
	}
	log.Info("input ended or shutdown", "reason", err)
	if cfg.ignoreSIGTERM {
		sleepForever()
	}
	return 0
}

// sleepForever blocks until the process is killed. A sleeping timer keeps
// the runtime from calling a process with nothing else to do deadlocked.
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// lockedWriter keeps the log and the --script stderr floods from cutting
// into each other's lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
