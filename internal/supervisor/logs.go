package supervisor

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/openhal/gateway/internal/supervisor/stderrlog"
)

// Logs returns the last n lines of the enabled adapter name's standard
// error, oldest first, as stored (stamped): what `gateway adapter logs`
// reads from the files, for a client of the running gateway (the
// console). A running adapter's log is flushed first, so that its latest
// lines are there; an adapter whose install did not load has no open log
// but may have the files of earlier runs. No log at all is no lines.
func (s *Supervisor) Logs(name string, n int) ([]string, error) {
	s.mu.Lock()
	a, ok := s.adapters[name]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("adapter %s is not enabled", name)
	}
	if a.stderr != nil {
		lines, err := a.stderr.Tail(n)
		if err != nil {
			return nil, fmt.Errorf("read the log of adapter %s: %w", name, err)
		}
		return lines, nil
	}
	lines, err := stderrlog.ReadTail(LogDir(s.opt.StateDir), name, n)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the log of adapter %s: %w", name, err)
	}
	return lines, nil
}
