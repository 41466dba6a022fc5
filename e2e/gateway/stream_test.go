package gateway_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// stream collects what a child process writes to one of its outputs, line
// by line, so that a test can wait for a line with a deadline.
type stream struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	ended   bool
	changed chan struct{} // closed and replaced on every new line and at the end
}

func newStream() *stream { return &stream{changed: make(chan struct{})} }

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	grew := false
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.lines = append(s.lines, string(s.partial[:i]))
		s.partial = s.partial[i+1:]
		grew = true
	}
	if grew {
		s.signal()
	}
	return len(p), nil
}

// end marks the stream finished: the process exited and its output was
// read in full. An unfinished last line counts as a line.
func (s *stream) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.lines = append(s.lines, string(s.partial))
		s.partial = nil
	}
	s.ended = true
	s.signal()
}

func (s *stream) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// len returns how many lines have been written so far: a mark for
// waitFor to look only at what comes after.
func (s *stream) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lines)
}

func (s *stream) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n") + string(s.partial)
}

// waitFor waits until a line from index from on matches pattern, and
// returns the index of that line and the submatches. It fails the test
// when within passes first or when the stream ends without one.
func (s *stream) waitFor(t testing.TB, from int, pattern string, within time.Duration) (int, []string) {
	t.Helper()
	i, m, err := s.await(from, pattern, within)
	if err != nil {
		t.Fatalf("%v:\n%s", err, s.text())
	}
	return i, m
}

// await is waitFor without the test: it returns an error when within
// passes first or when the stream ends without a matching line.
func (s *stream) await(from int, pattern string, within time.Duration) (int, []string, error) {
	re := regexp.MustCompile(pattern)
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for i := from; i < len(s.lines); i++ {
			if m := re.FindStringSubmatch(s.lines[i]); m != nil {
				s.mu.Unlock()
				return i, m, nil
			}
		}
		from = max(from, len(s.lines))
		ended, changed := s.ended, s.changed
		s.mu.Unlock()
		if ended {
			return 0, nil, fmt.Errorf("the output ended without a line matching %s", pattern)
		}
		select {
		case <-changed:
		case <-timer.C:
			return 0, nil, fmt.Errorf("no line matching %s within %s", pattern, within)
		}
	}
}
