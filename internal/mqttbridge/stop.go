package mqttbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openhal/gateway/openhal"
)

// stopLane is the emergency stop's own way to the Hub, beside the
// commands' queue: a stop never waits behind commands (each may wait up
// to writeTimeout for a slow device) and is never dropped with them when
// a flood fills their queue. A stop asked while another is on its way to
// the Hub is sent again after it, once, with the newest reason: repeated
// stops coalesce, and none asked is left unsent.
type stopLane struct {
	mu     sync.Mutex
	due    bool   // a stop was asked since the last one was taken
	reason string // the newest asked
	wake   chan struct{}
}

func newStopLane() *stopLane { return &stopLane{wake: make(chan struct{}, 1)} }

// ask makes a stop due, and never blocks: it runs on the MQTT client's
// goroutine.
func (l *stopLane) ask(reason string) {
	l.mu.Lock()
	l.due, l.reason = true, reason
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take returns the due stop's reason, and false when none is due.
func (l *stopLane) take() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	due := l.due
	l.due = false
	return l.reason, due
}

// serveStops engages each stop the lane is asked for, until ctx ends.
func (b *Bridge) serveStops(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.stops.wake:
		}
		if reason, ok := b.stops.take(); ok {
			b.engageStop(ctx, reason)
		}
	}
}

// engageStop asks the Hub for the emergency stop (the adapter's
// hub.stop) and says what came of it.
func (b *Bridge) engageStop(ctx context.Context, reason string) {
	sctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	start := time.Now()
	if err := b.hub.Stop(sctx, reason); err != nil {
		b.count(func(s *Stats) { s.StopsRefused++ })
		b.log.Error("mqtt: the emergency stop asked on MQTT was NOT engaged", "topic", b.t.StopSet(b.gw), "reason", reason, "err", err)
		return
	}
	b.log.Warn("mqtt: emergency stop engaged", "topic", b.t.StopSet(b.gw), "reason", reason, "took", time.Since(start))
}

// stopReason is the reason of a stop asked on topic with payload. Any
// payload engages the stop (docs/mqtt.md): an emergency stop that a
// misspelt or unexpected payload left disengaged would fail the person
// who pressed it. A JSON object's "reason", when it is a non-empty
// string, is the reason; otherwise the topic is. The reason is cut to
// the Hub's bound, so that no payload makes the call too long to send.
func stopReason(topic string, payload []byte) string {
	var r struct {
		Reason string `json:"reason"`
	}
	if p := bytes.TrimLeft(payload, " \t\r\n"); len(p) > 0 && p[0] == '{' && json.Unmarshal(p, &r) == nil && r.Reason != "" {
		return cutText("mqtt: "+r.Reason, openhal.MaxReasonBytes)
	}
	return "mqtt: " + topic
}

// cutText is s cut to at most n bytes, at a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
