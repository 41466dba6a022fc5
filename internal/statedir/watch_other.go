//go:build unix && !linux

package statedir

import "context"

// Watch has no kernel watch to put in place outside Linux (inotify): the
// directory is checked at each probe only. The loop waits for ctx.
func (m *Monitor) Watch(ctx context.Context) (loop func() error, err error) {
	m.opt.Log.Info("state directory: no inotify on this system; checked at each probe only", "dir", m.lock.Dir())
	return func() error {
		<-ctx.Done()
		return nil
	}, nil
}
