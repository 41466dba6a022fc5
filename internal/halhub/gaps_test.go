package halhub

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

// Spec §8: a client tells values it missed from values of devices it
// cannot see. These tests are about what a token limited to some devices
// is sent (seqview.go); docs/protocol.md "Telling missed values".

// value reads one hal/value of a raw connection, with its raw line.
func (rc *rawConn) value() (openhal.ValueResult, string) {
	rc.t.Helper()
	m := rc.next()
	return valueOf(rc.t, m), m.raw
}

// A token limited to bench.scope reads every value of it with devSeq
// 1, 2, 3 and no seq, while other.scope changes 1000 times between them;
// an admin's connection sees the Hub-wide seq as before, one more for
// each value of any device, and each device's own devSeq.
func TestLimitedTokenSeesNoGapForHiddenDevices(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, lineSensor("bench.scope"))
	th.addDevice(t, lineSensor("other.scope"))
	limited := th.dialRaw(t, th.token(t, "scope-only", openhal.ScopeRead, "bench.scope"), 0)
	admin := th.dialRaw(t, th.admin, 0)

	// In lockstep, so that no value coalesces for the admin either.
	const hidden = 1000
	devSeq := map[string]uint64{}
	var prev uint64
	adminValue := func(want string) {
		t.Helper()
		v, raw := admin.value()
		if v.Value != want || (prev > 0 && v.Seq != prev+1) || v.DevSeq != devSeq[v.Device]+1 {
			t.Fatalf("admin: %s, want %s with seq %d and devSeq %d", raw, want, prev+1, devSeq[v.Device]+1)
		}
		prev, devSeq[v.Device] = v.Seq, v.DevSeq
	}
	for i := range 3 {
		a := fmt.Sprintf("a%d", i)
		th.reg.Publish("bench.scope", a, time.Time{})
		v, raw := limited.value()
		if v.Device != "bench.scope" || v.Value != a || v.DevSeq != uint64(i+1) {
			t.Fatalf("limited value %d: %s, want %s with devSeq %d", i, raw, a, i+1)
		}
		if strings.Contains(raw, `"seq"`) {
			t.Fatalf("limited value %d carries the Hub-wide seq: %s", i, raw)
		}
		adminValue(a)
		for j := range hidden {
			b := fmt.Sprintf("b%d", j)
			th.reg.Publish("other.scope", b, time.Time{})
			adminValue(b)
		}
	}
	if devSeq["bench.scope"] != 3 || devSeq["other.scope"] != 3*hidden {
		t.Errorf("admin saw devSeq %v, want bench.scope 3 and other.scope %d", devSeq, 3*hidden)
	}

	limited.send(request(3, "hal/read", map[string]any{"device": "bench.scope", "maxAgeMs": 60000}))
	if m := limited.next(); strings.Contains(m.raw, `"seq"`) || !strings.Contains(m.raw, `"devSeq":3`) {
		t.Errorf("limited hal/read: %s, want devSeq 3 and no seq", m.raw)
	}
	admin.send(request(3, "hal/read", map[string]any{"device": "bench.scope", "maxAgeMs": 60000}))
	snap, _ := th.reg.Value("bench.scope")
	if m := admin.next(); !strings.Contains(m.raw, fmt.Sprintf(`"seq":%d,"devSeq":3}`, snap.Seq)) {
		t.Errorf("admin hal/read: %s, want seq %d and devSeq 3", m.raw, snap.Seq)
	}
}

// A limited token whose client stops reading loses values of its own
// device to coalescing, and exactly those show as gaps in devSeq: each
// value it gets is the one its devSeq names, and the gaps add up to the
// values it did not get — while a hidden device changes as often, which
// would have made every seq gap larger.
func TestLimitedTokenGapsAreItsOwnLosses(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, lineSensor("bench.scope"))
	th.addDevice(t, lineSensor("other.scope"))
	stalled := th.dialRaw(t, th.token(t, "stalled", openhal.ScopeRead, "bench.scope"), 4096)
	s := th.stalledSession(t, "stalled")

	// Publish until the stalled connection's queue holds valueSlack values
	// (its socket is full), then a thousand more: past the slack they
	// coalesce, as soon as the Hub's writer is stuck for good.
	n, extra := 0, -1
	for ; extra != 0; n++ {
		if n == 50_000 {
			t.Fatal("the stalled connection's queue never filled")
		}
		th.reg.Publish("bench.scope", scopeLine(n), time.Time{})
		th.reg.Publish("other.scope", scopeLine(n), time.Time{})
		if _, values := s.q.queued(); extra < 0 && values == valueSlack {
			extra = 1000
		} else if extra > 0 {
			extra--
		}
	}
	if th.stalledSession(t, "stalled") == nil {
		t.Fatal("the stalled client was disconnected; values must coalesce instead")
	}

	got, missed, last := 0, uint64(0), uint64(0)
	for last != uint64(n) {
		v, raw := stalled.value()
		if v.Device != "bench.scope" || strings.Contains(raw, `"seq"`) {
			t.Fatalf("stalled client got %.120s", raw)
		}
		if want := fmt.Sprintf("%06d,", v.DevSeq-1); !strings.HasPrefix(v.Value.(string), want) {
			t.Fatalf("devSeq %d names value %q, want the one starting %q", v.DevSeq, v.Value.(string)[:7], want)
		}
		if v.DevSeq <= last {
			t.Fatalf("devSeq %d after %d", v.DevSeq, last)
		}
		missed += v.DevSeq - last - 1
		last = v.DevSeq
		got++
	}
	t.Logf("%d values published, %d received, %d shown missed by devSeq gaps", n, got, missed)
	if missed == 0 {
		t.Error("no devSeq gap: nothing coalesced, so nothing was stalled")
	}
	if uint64(got)+missed != uint64(n) {
		t.Errorf("received %d + missed %d != published %d", got, missed, n)
	}
}

// Nothing a token limited to bench.led and bench.heater is told — its
// initialize answer, reads, writes, confirmations, device list and
// every notification — changes when a hidden device (bench.fan)
// changes a thousand times between its steps; an admin's hal/read of
// the same device does (its seq counts every device).
func TestLimitedTokenLearnsNothingOfHiddenDevices(t *testing.T) {
	quiet, quietAdmin := limitedTranscript(t, 0)
	busy, busyAdmin := limitedTranscript(t, 1000)
	if len(quiet) != len(busy) {
		t.Fatalf("the limited token was told %d messages with the hidden device quiet, %d with it busy:\n%s\n---\n%s",
			len(quiet), len(busy), strings.Join(quiet, "\n"), strings.Join(busy, "\n"))
	}
	for i := range quiet {
		if quiet[i] != busy[i] {
			t.Errorf("message %d differs with the hidden device busy:\nquiet: %s\nbusy:  %s", i, quiet[i], busy[i])
		}
		if strings.Contains(quiet[i], `"seq"`) {
			t.Errorf("message %d carries the Hub-wide seq: %s", i, quiet[i])
		}
	}
	if quietAdmin == busyAdmin {
		t.Errorf("the admin's read is the same whether bench.fan changed or not (%s): the test shows nothing", quietAdmin)
	}
}

// limitedTranscript runs one session of a limited token on a bench whose
// hidden bench.fan changes hidden times between each of its steps, and
// returns every message it was sent (bootId blanked: it is random) and
// an admin's hal/read of bench.led at the end.
func limitedTranscript(t *testing.T, hidden int) (transcript []string, adminRead string) {
	t.Helper()
	b := newBench(t)
	busy := func() {
		for i := range hidden {
			b.reg.Publish("bench.fan", float64(i%100), time.Time{})
		}
	}
	c := b.dialTCP(t)
	m := c.call("hal/initialize", map[string]any{"protocolVersion": "0.1", "clientInfo": map[string]string{"name": "lim", "version": "1"},
		"token": b.token(t, "lim", openhal.ScopeControlLow, "bench.led", "bench.heater")})
	c.sendRaw(`{"jsonrpc":"2.0","method":"hal/initialized"}`)
	transcript = append(transcript, strings.Replace(m.raw, b.hub.bootID, "BOOT", 1))
	step := func(method string, params any) msg {
		busy()
		m := c.call(method, params)
		transcript = append(transcript, m.raw)
		return m
	}
	step("hal/ping", nil)
	step("hal/read", map[string]any{"device": "bench.led"})
	step("hal/write", map[string]any{"device": "bench.led", "value": true})
	cf := pending(t, step("hal/write", map[string]any{"device": "bench.heater", "value": true, "reason": "warm up"}))
	busy()
	admin := b.admin(t)
	if m := admin.call("hal/confirmations/approve", map[string]any{"id": cf.ID}); m.Error != nil {
		t.Fatalf("approve: %s", m.raw)
	}
	b.reg.Publish("bench.heater", true, time.Time{}) // a value of a visible device the Hub publishes itself
	step("hal/confirmations/list", nil)
	step("hal/devices/list", nil)
	step("hal/ping", nil) // every notification queued before it has arrived
	for _, m := range c.pending {
		transcript = append(transcript, m.raw)
	}
	return transcript, admin.call("hal/read", map[string]any{"device": "bench.led"}).raw
}
