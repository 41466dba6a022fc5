//go:build unix && !linux

package statedir

import "context"

// kernelWatch is none: there is no inotify outside Linux.
type kernelWatch struct{}

func (w *Watcher) start() error {
	w.log.Info("state directory: no inotify on this system; checked at each probe only", "dir", w.dir)
	return nil
}

// Rewatch does nothing: nothing is watched here.
func (w *Watcher) Rewatch() {}

// Run waits for ctx: nothing is watched here.
func (w *Watcher) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
