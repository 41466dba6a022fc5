// Package statedir keeps one gateway per state directory and watches
// that directory for as long as the gateway runs.
//
// Lock takes the kernel's lock (flock) on gateway.lock in the directory
// and writes the gateway's pid there: a second `gateway run` on the same
// directory is refused, naming that pid, and a crashed gateway leaves no
// stale lock, since the kernel drops a lock with its last descriptor.
// The commands that write the state directory beside a running gateway
// (token add and revoke, adapter install and remove) do not take it:
// they write whole files by rename under locks of their own, and the
// gateway follows them.
//
// Watcher is the gateway's one watch of the directory: the kernel's
// (inotify) on the directory and its parent, read once and told to each
// part that subscribed to a name there (the Monitor to the directory and
// its lock, the token file's follower to tokens.json).
//
// Monitor tells whether the directory is still usable: the one the
// gateway locked (not removed, moved, or replaced by another), and
// writable. It learns of a change from the Watcher and checks again,
// cheaply, whenever it is asked (the /healthz and watchdog probe). When
// the directory is usable again it takes the lock again and calls the
// gateway back, which writes its state (the stop latch) there again.
//
// It builds on every Unix; outside Linux (no inotify) the directory is
// checked at each probe only. `gateway run` itself needs Linux.
package statedir
