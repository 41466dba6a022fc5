//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/openhal/gateway/internal/atomicfile"

	"golang.org/x/sys/unix"
)

// Files the adapter keeps in $HOME (its state directory), for the tests
// to read.
const (
	fileStart    = "start.json"
	fileReceived = "received.jsonl"
	fileCalls    = "calls.jsonl"
	fileChildren = "children.txt"
)

// records appends to the files of $HOME. Each append is one write to a
// file opened O_APPEND and nothing is buffered, so a test that has seen
// the effect of a line also finds it recorded.
type records struct {
	dir string
	mu  sync.Mutex // one append at a time, whole lines
}

func (r *records) appendLine(name string, line []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := filepath.Join(r.dir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	buf := make([]byte, 0, len(line)+1)
	_, err = f.Write(append(append(buf, line...), '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", p, err)
	}
	return nil
}

// received records one line read on stdin, as received.
func (r *records) received(line []byte) error { return r.appendLine(fileReceived, line) }

// child records the pid of a process --fork left behind.
func (r *records) child(pid int) error {
	return r.appendLine(fileChildren, []byte(strconv.Itoa(pid)))
}

// call records the response to one of the script's requests. The
// response is kept as the bytes received (the decoder has checked it is
// one JSON object on one line); params are compacted onto the line.
func (r *records) call(method string, params, response json.RawMessage) error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, params); err != nil {
		return fmt.Errorf("compact params of %s: %w", method, err)
	}
	name, err := marshal(method)
	if err != nil {
		return fmt.Errorf("encode call record of %s: %w", method, err)
	}
	line := append([]byte(`{"method":`), name...)
	line = append(append(line, `,"params":`...), compact.Bytes()...)
	line = append(append(line, `,"response":`...), response...)
	return r.appendLine(fileCalls, append(line, '}'))
}

// startInfo is start.json: who and where the supervisor started us as.
type startInfo struct {
	PID    int        `json:"pid"`
	PPID   int        `json:"ppid"`
	PGID   int        `json:"pgid"`
	SID    int        `json:"sid"`
	UID    int        `json:"uid"`
	GID    int        `json:"gid"`
	Groups []int      `json:"groups"`
	Cwd    string     `json:"cwd"`
	Env    []string   `json:"env"`
	Args   []string   `json:"args"`
	Probe  *probeInfo `json:"probe,omitempty"`
}

type probeInfo struct {
	Path     string `json:"path"`
	Readable bool   `json:"readable"`
	Error    string `json:"error,omitempty"`
}

// start writes start.json at once (temporary file, then rename), so that
// a test polling for it never reads half of it.
func (r *records) start(probe string) error {
	info := startInfo{
		PID: os.Getpid(), PPID: os.Getppid(), UID: os.Getuid(), GID: os.Getgid(),
		Env: os.Environ(), Args: os.Args,
	}
	var err error
	if info.PGID, err = unix.Getpgid(0); err != nil {
		return fmt.Errorf("getpgid: %w", err)
	}
	if info.SID, err = unix.Getsid(0); err != nil {
		return fmt.Errorf("getsid: %w", err)
	}
	if info.Groups, err = os.Getgroups(); err != nil {
		return fmt.Errorf("getgroups: %w", err)
	}
	if info.Groups == nil {
		info.Groups = []int{}
	}
	if info.Cwd, err = os.Getwd(); err != nil {
		return fmt.Errorf("getwd: %w", err)
	}
	if probe != "" {
		info.Probe = &probeInfo{Path: probe, Readable: true}
		if _, err := os.ReadFile(probe); err != nil {
			info.Probe.Readable, info.Probe.Error = false, err.Error()
		}
	}
	b, err := marshal(info)
	if err != nil {
		return fmt.Errorf("encode %s: %w", fileStart, err)
	}
	p := filepath.Join(r.dir, fileStart)
	if err := atomicfile.Write(p, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// marshal encodes v on one line without HTML escaping, so that a raw
// response is recorded with the bytes it came with.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
