package halclient

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// EventKind says what a WatchEvent reports.
type EventKind string

const (
	// EventConnected: a connection is up (Init). Reconnected is set when
	// it follows a lost one to the same run of the Hub.
	EventConnected EventKind = "connected"
	// EventRestarted: after a lost connection, the Hub answered with a new
	// bootId (Init): it restarted, and its seq counter began again.
	EventRestarted EventKind = "restarted"
	// EventDevices: the device list, on every (re)connection (Devices).
	EventDevices EventKind = "devices"
	// EventValue: a device's value (Value): Resync when read on
	// (re)connection, otherwise a hal/value notification (Notification).
	EventValue EventKind = "value"
	// EventReadFailed: reading a device on (re)connection failed (Device,
	// Err); a device with no value yet, or in fault.
	EventReadFailed EventKind = "read-failed"
	// EventMissed: Missed values of Device were never passed on, either
	// while disconnected (Reconnected set) or because its devSeq jumped
	// (the Hub coalesced values for a slow reader, or this client dropped
	// them). Only values of devices this watch's token sees count: a gap
	// is a device's own (docs/protocol.md, "Telling missed values").
	// Device is empty when the Hub sends no devSeq (an older Hub), where
	// the Hub-wide seq is all there is to go by.
	EventMissed EventKind = "missed"
	// EventDropped: Dropped notifications were lost in this client because
	// the watch function kept up too slowly.
	EventDropped EventKind = "dropped"
	// EventNotification: any other notification (Notification).
	EventNotification EventKind = "notification"
	// EventDisconnected: the connection was lost or could not be made
	// (Err); the next attempt is in Retry.
	EventDisconnected EventKind = "disconnected"
)

// WatchEvent is one thing that Watch reports. Which fields are set
// depends on Kind.
type WatchEvent struct {
	Kind         EventKind
	Init         *openhal.InitializeResult
	Reconnected  bool
	Devices      []device.Descriptor
	Device       string
	Value        *openhal.ValueResult
	Resync       bool
	Notification *Notification
	Missed       uint64
	Dropped      uint64
	Err          error
	Retry        time.Duration
}

// Backoff between attempts: from minBackoff, doubling up to maxBackoff.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
	// resyncParallel bounds the reads in flight during a resync, well
	// below the Hub's per-connection limit.
	resyncParallel = 8
	// resyncMaxAgeMs lets a resync take the value the Hub holds rather
	// than a fresh measurement. A fresh one is a new value event: its seq
	// would count as missed on every reconnection, and every watch coming
	// back after a restart would make every sensor measure. A device with
	// no value yet is still measured. A hundred years: older than any
	// value, and far from overflowing a Hub that counts in nanoseconds.
	resyncMaxAgeMs = int64(100 * 365 * 24 * time.Hour / time.Millisecond)
)

// Watch keeps a watch on the Hub at url until ctx ends, calling fn for each
// event, one at a time. On every connection it lists the devices and
// reads the value the Hub holds for each readable one (a resync), then
// passes on notifications. A lost connection is redialled with backoff; on
// return, Watch tells a restart of the Hub (new bootId) from a gap in the
// same run.
//
// A gap is told by each device's devSeq, its own count of values (spec
// §8): values of devices the token does not see never count, whatever
// they do. A write-only device, which a resync cannot read, shows the
// values it missed while disconnected with its next hal/value. With a
// Hub that sends no devSeq, the Hub-wide seq is used as before.
//
// Watch returns ctx's error when ctx ends, and at once on an error that
// retrying cannot mend: a refused token, a protocol version this client
// cannot use, a bad URL or fingerprint, a certificate it does not trust.
func Watch(ctx context.Context, url string, opt Options, fn func(WatchEvent)) error {
	if opt.NotificationBuffer == 0 {
		opt.NotificationBuffer = 4096
	}
	w := &watcher{url: url, opt: opt, fn: fn}
	delay := minBackoff
	for {
		up, err := w.session(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if permanent(err) {
			return err
		}
		if up {
			delay = minBackoff
		}
		wait := jitter(delay)
		fn(WatchEvent{Kind: EventDisconnected, Err: err, Retry: wait})
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, maxBackoff)
	}
}

// jitter spreads reconnections over [d/2, d], so that many clients of a
// restarted Hub do not all come back at the same moment.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// permanent reports whether retrying err is pointless.
func permanent(err error) bool {
	var he *HubError
	var ve *VersionError
	var ue *URLError
	var ce *CertificateError
	var oe *OptionError
	var ug *UnknownGatewayError
	var cg *ChangedGatewayError
	var ct *ClearTextError
	return errors.As(err, &he) || errors.As(err, &ve) || errors.As(err, &ue) || errors.As(err, &ce) || errors.As(err, &oe) ||
		errors.As(err, &ug) || errors.As(err, &cg) || errors.As(err, &ct)
}

// watcher is what Watch remembers across connections.
type watcher struct {
	url string
	opt Options
	fn  func(WatchEvent)

	bootID string
	// last is, per device, the value last passed on (a resync's or a
	// notification's), in this bootId.
	last    map[string]mark
	seq     uint64 // highest seq seen in this bootId (a Hub without devSeq)
	haveSeq bool   // seq means something
	dropped uint64
}

// session runs one connection: dial, resync, notifications until it ends.
// up reports whether the connection was made.
func (w *watcher) session(ctx context.Context) (up bool, err error) {
	c, err := Dial(ctx, w.url, w.opt)
	if err != nil {
		return false, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	w.connected(c.Init())
	if err := w.resync(ctx, c); err != nil {
		return true, err
	}
	w.dropped = 0
	for n := range c.Notifications() {
		w.notification(n)
		if d := c.Dropped(); d > w.dropped {
			w.fn(WatchEvent{Kind: EventDropped, Dropped: d - w.dropped})
			w.dropped = d
		}
	}
	return true, c.Err()
}

// connected reports the connection and tells a restart by its bootId.
func (w *watcher) connected(init openhal.InitializeResult) {
	reconnected := w.bootID != ""
	restarted := reconnected && init.BootID != w.bootID
	if restarted || !reconnected {
		w.seq, w.haveSeq, w.last = 0, false, map[string]mark{}
	}
	w.bootID = init.BootID
	kind := EventConnected
	if restarted {
		kind = EventRestarted
	}
	w.fn(WatchEvent{Kind: kind, Init: &init, Reconnected: reconnected && !restarted})
}

// resync lists the devices and reads the values the Hub holds for the
// readable ones. Values that happened while disconnected show as a devSeq
// beyond the last one passed on for that device.
func (w *watcher) resync(ctx context.Context, c *Conn) error {
	devs, err := c.Devices(ctx)
	if err != nil {
		return err
	}
	w.fn(WatchEvent{Kind: EventDevices, Devices: devs})
	results := readAll(ctx, c, devs)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.Err(); err != nil {
		return err
	}
	var missed []WatchEvent
	var top uint64
	got := false
	for _, r := range results {
		if r.err != nil {
			w.fn(WatchEvent{Kind: EventReadFailed, Device: r.id, Err: r.err})
			continue
		}
		if n := w.gap(r.v); n > 0 {
			missed = append(missed, WatchEvent{Kind: EventMissed, Device: r.id, Missed: n, Reconnected: true})
		}
		if r.v.DevSeq == 0 {
			top, got = max(top, r.v.Seq), true
		}
		w.last[r.id] = mark{seq: r.v.Seq, devSeq: r.v.DevSeq}
		w.fn(WatchEvent{Kind: EventValue, Device: r.id, Value: &r.v, Resync: true})
	}
	for _, e := range missed {
		w.fn(e)
	}
	if !got {
		return nil // nothing to compare by seq; the next hal/value sets the mark
	}
	if w.haveSeq && top > w.seq {
		w.fn(WatchEvent{Kind: EventMissed, Missed: top - w.seq, Reconnected: true})
	}
	w.seq, w.haveSeq = max(w.seq, top), true
	return nil
}

// mark is the value of a device last passed on.
type mark struct{ seq, devSeq uint64 }

// gap is how many values of v's device came between the one last passed
// on and v, by devSeq: 0 for a device not seen before in this bootId, or
// from a Hub that sends no devSeq.
func (w *watcher) gap(v openhal.ValueResult) uint64 {
	m, ok := w.last[v.Device]
	if !ok || v.DevSeq == 0 || m.devSeq == 0 || v.DevSeq <= m.devSeq+1 {
		return 0
	}
	return v.DevSeq - m.devSeq - 1
}

// newer reports whether v comes after the value of its device last passed
// on: by devSeq, or by seq from a Hub that sends no devSeq.
func (w *watcher) newer(v openhal.ValueResult) bool {
	m, ok := w.last[v.Device]
	switch {
	case !ok:
		return true
	case v.DevSeq > 0 && m.devSeq > 0:
		return v.DevSeq > m.devSeq
	}
	return v.Seq > m.seq
}

type readResult struct {
	id  string
	v   openhal.ValueResult
	err error
}

// readAll reads the readable devices a few at a time; results keep the
// list's order.
func readAll(ctx context.Context, c *Conn, devs []device.Descriptor) []readResult {
	var out []readResult
	for _, d := range devs {
		if d.Access.CanRead() {
			out = append(out, readResult{id: d.ID})
		}
	}
	sem := make(chan struct{}, resyncParallel)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i].v, out[i].err = c.Read(ctx, out[i].id, resyncMaxAgeMs)
		}()
	}
	wg.Wait()
	return out
}

// notification passes one notification on. A hal/value whose devSeq
// jumps past the last one passed on for its device reports the values of
// that device missed in between (with a Hub that sends no devSeq: a seq
// that jumps past the last one seen); one no newer than what was passed
// on for its device (the resync read it) is not passed on.
func (w *watcher) notification(n Notification) {
	if n.Method != openhal.NotifyValue {
		w.fn(WatchEvent{Kind: EventNotification, Notification: &n})
		return
	}
	var v openhal.ValueResult
	if err := json.Unmarshal(n.Params, &v); err != nil {
		w.fn(WatchEvent{Kind: EventNotification, Notification: &n})
		return
	}
	if v.DevSeq == 0 {
		w.seqGap(v)
	}
	if !w.newer(v) {
		return
	}
	if gap := w.gap(v); gap > 0 {
		w.fn(WatchEvent{Kind: EventMissed, Device: v.Device, Missed: gap})
	}
	w.last[v.Device] = mark{seq: v.Seq, devSeq: v.DevSeq}
	w.fn(WatchEvent{Kind: EventValue, Device: v.Device, Value: &v, Notification: &n})
}

// seqGap reports values missed by the Hub-wide seq, for a Hub that sends
// no devSeq.
func (w *watcher) seqGap(v openhal.ValueResult) {
	if w.haveSeq && v.Seq > w.seq+1 {
		w.fn(WatchEvent{Kind: EventMissed, Missed: v.Seq - w.seq - 1})
	}
	if v.Seq > w.seq || !w.haveSeq {
		w.seq, w.haveSeq = v.Seq, true
	}
}
