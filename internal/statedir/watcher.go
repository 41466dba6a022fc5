//go:build unix

package statedir

import (
	"log/slog"
	"slices"
	"sync"
)

// Watcher follows a state directory for everything in the gateway that
// must learn of a change there: the Monitor (the directory removed,
// moved, made unwritable, its lock file removed) and the token file's
// follower (the file replaced by `gateway token add`). One kernel watch
// (inotify, on Linux), on the directory and on its parent, and one
// reader serve them all: each subscribes to the names it cares for, and
// is told to look again, not what happened. It does not poll.
//
// A directory made again is watched again at once: the parent's watch
// sees it come, or, where the parent could not be watched, the Monitor
// calls Rewatch once it has locked the new one. Every subscriber is then
// told, since each of its files may be new. Outside Linux nothing is
// watched, and nobody is told (the Monitor checks at each probe).
type Watcher struct {
	dir string
	log *slog.Logger

	mu   sync.Mutex
	subs []subscription
	kw   kernelWatch // watch_linux.go, watch_other.go
}

// subscription is one subscriber: the names it cares for ("" the
// directory itself), and the channel that tells it to look.
type subscription struct {
	names []string
	c     chan struct{}
}

// NewWatcher puts the kernel's watches on dir and its parent in place;
// Run then reads what they report. It fails when dir cannot be watched
// (it does not exist); a parent that cannot be is logged, and a directory
// made again is then seen by the Monitor's probe (Rewatch).
func NewWatcher(dir string, log *slog.Logger) (*Watcher, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{dir: dir, log: log}
	if err := w.start(); err != nil {
		return nil, err
	}
	return w, nil
}

// Subscribe returns a channel that receives whenever one of names in the
// directory may have changed: written, replaced, removed, moved away, its
// mode changed, or the directory made again, or events were lost. The
// name "" stands for the directory itself: removed, moved, its mode or
// owner changed. The channel holds one value: a subscriber that looks
// again after each receive sees every change, however many came in
// between. Changes before Subscribe are not told: a subscriber reads
// once after it subscribes.
func (w *Watcher) Subscribe(names ...string) <-chan struct{} {
	s := subscription{names: names, c: make(chan struct{}, 1)}
	w.mu.Lock()
	w.subs = append(w.subs, s)
	w.mu.Unlock()
	return s.c
}

// tell tells the subscribers to one of names, or all of them (all).
func (w *Watcher) tell(all bool, names ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.subs {
		if all || slices.ContainsFunc(names, func(n string) bool { return slices.Contains(s.names, n) }) {
			select {
			case s.c <- struct{}{}:
			default: // one waiting value stands for any number
			}
		}
	}
}
