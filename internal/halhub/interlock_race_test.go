package halhub

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// The interlock race (spec §6): a write to the heater checked while the
// door is closed, and the door opening at each point of that write's way
// to its answer. Wherever the door opens, the heater must end safe, driven
// back at once, with one hal/blocked, and the answer and the audit log
// must tell what happened. The Hub is stopped at each point by a device
// that blocks inside its Write and an audit log that blocks inside its
// sync; the clock is the fake one, so no maxOnMs can help.

// pause is a point where a goroutine of the Hub stops until the test lets
// it go.
type pause struct {
	reached chan struct{}
	resume  chan struct{}
	once    sync.Once
}

func newPause() *pause { return &pause{reached: make(chan struct{}), resume: make(chan struct{})} }

// at stops the caller at the pause armed in slot, if one is; each pause
// stops one caller.
func at(slot *atomic.Pointer[pause]) {
	if p := slot.Swap(nil); p != nil {
		close(p.reached)
		<-p.resume
	}
}

// arm sets a pause in slot and returns it. The end of the test releases
// it, so that a failed test does not leave the Hub stopped there.
func arm(t *testing.T, slot *atomic.Pointer[pause]) *pause {
	p := newPause()
	slot.Store(p)
	t.Cleanup(p.release)
	return p
}

func (p *pause) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-p.reached:
	case <-time.After(5 * time.Second):
		t.Fatalf("the hub never reached %s", what)
	}
}

func (p *pause) release() { p.once.Do(func() { close(p.resume) }) }

// raceHeater is a heater relay whose Write the test can stop before and
// after the relay takes the value. With keep, it publishes its own value
// (Keep), at once when publish is set, else when the test says.
type raceHeater struct {
	desc    device.Descriptor
	keep    bool
	publish bool
	rep     device.Reporter

	beforeTake, afterTake atomic.Pointer[pause]

	mu      sync.Mutex
	history []any // every value the relay took, in order
}

func (d *raceHeater) Descriptor() device.Descriptor { return d.desc }

func (d *raceHeater) Write(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
	at(&d.beforeTake)
	d.mu.Lock()
	d.history = append(d.history, req.Value)
	d.mu.Unlock()
	at(&d.afterTake)
	if d.keep && d.publish {
		d.rep.Value(req.Value, time.Time{})
	}
	return device.WriteResult{Keep: d.keep}, nil
}

// took returns what the relay took, in order.
func (d *raceHeater) took() []any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]any(nil), d.history...)
}

// level is the relay's position: its last value, else off.
func (d *raceHeater) level() any {
	h := d.took()
	if len(h) == 0 {
		return false
	}
	return h[len(h)-1]
}

type raceBench struct {
	*testHub
	log    *audit.Log
	heater *raceHeater
	door   device.Reporter
	// syncStart stops the audit writer with its lines written and not yet
	// synced; syncEnd with them synced, before Append returns.
	syncStart, syncEnd atomic.Pointer[pause]
}

func newRaceBench(t *testing.T, heater *raceHeater) *raceBench {
	t.Helper()
	b := &raceBench{heater: heater}
	log, err := audit.Open(t.TempDir(), audit.Options{SyncFile: func(f *os.File) error {
		at(&b.syncStart)
		err := f.Sync()
		at(&b.syncEnd)
		return err
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	b.log = log
	b.testHub = newTestHub(t, func(o *Options) {
		o.Clock = clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		o.Audit = log
		o.Rules = map[string]device.Rules{
			"bench.heater": {Interlock: []device.Condition{{Device: "bench.door", Op: device.OpEq, Value: false}}, MaxOn: 10 * time.Minute},
		}
	})
	heater.desc = device.Descriptor{ID: "bench.heater", Kind: device.KindGPIOOutput, Source: "board", Access: device.AccessReadWrite,
		Risk: device.RiskHigh, Schema: device.Schema{Type: device.TypeBoolean}, Safe: false}
	heater.rep = b.addDevice(t, heater)
	door := &testDevice{desc: device.Descriptor{ID: "bench.door", Kind: device.KindGPIOInput, Source: "board", Access: device.AccessRead,
		Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}}}
	b.door = b.addDevice(t, door)
	b.door.Value(false, time.Time{})
	heater.rep.Value(false, time.Time{})
	return b
}

// client opens an initialized TCP connection for a new token of that
// scope.
func (b *raceBench) client(t *testing.T, name string, scope openhal.Scope) *client {
	t.Helper()
	c := b.dialTCP(t)
	c.init(b.token(t, name, scope))
	return c
}

// writeHeater starts an admin's write of the heater on; the answer comes
// on the channel.
func (b *raceBench) writeHeater(c *client) <-chan msg {
	ch := make(chan msg, 1)
	go func() { ch <- c.callAsync("hal/write", map[string]any{"device": "bench.heater", "value": true}) }()
	return ch
}

// loopRound waits until the safety loop has handled every event so far.
func (b *raceBench) loopRound(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.hub.loop.probe(ctx); err != nil {
		t.Fatalf("safety loop: %v", err)
	}
}

func answered(t *testing.T, ch <-chan msg) msg {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no answer to the write")
		return msg{}
	}
}

// wantHeaterSafe checks that the heater is off at the relay and in the
// registry, after the loop has gone round.
func (b *raceBench) wantHeaterSafe(t *testing.T) {
	t.Helper()
	b.loopRound(t)
	if lv := b.heater.level(); lv != false {
		t.Errorf("the relay is %v with the door open (it took %v)", lv, b.heater.took())
	}
	if snap, _ := b.reg.Value("bench.heater"); snap.Value != false {
		t.Errorf("the registry says the heater is %v with the door open", snap.Value)
	}
}

// blockedNotes returns the hal/blocked notifications the watcher has got
// once the loop has gone round and a ping has flushed its queue.
func blockedNotes(t *testing.T, b *raceBench, watcher *client) []openhal.BlockedParams {
	t.Helper()
	b.loopRound(t)
	watcher.call("hal/ping", nil)
	var out []openhal.BlockedParams
	for _, m := range watcher.pending {
		if m.Method == openhal.NotifyBlocked {
			var p openhal.BlockedParams
			json.Unmarshal(m.Params, &p)
			out = append(out, p)
		}
	}
	watcher.pending = nil
	for {
		select {
		case m := <-watcher.in:
			if m.Method == openhal.NotifyBlocked {
				var p openhal.BlockedParams
				json.Unmarshal(m.Params, &p)
				out = append(out, p)
			}
		default:
			return out
		}
	}
}

// wantDrivenBack checks the story of a write that raced the door: the
// answer says applied (the relay did take it), the relay took true then
// false, one hal/blocked names the writer and the broken condition, and
// the audit has the write then the interlock's drive-back.
func wantDrivenBack(t *testing.T, b *raceBench, watcher *client, answer msg, writer string) {
	t.Helper()
	if answer.Error != nil || !strings.Contains(string(answer.Result), `"status":"applied"`) {
		t.Errorf("answer %s, want applied", answer.raw)
	}
	b.wantHeaterSafe(t)
	if got := b.heater.took(); len(got) != 2 || got[0] != true || got[1] != false {
		t.Errorf("the relay took %v, want [true false]", got)
	}
	notes := blockedNotes(t, b, watcher)
	if len(notes) != 1 || notes[0].Device != "bench.heater" || notes[0].Rule != openhal.RuleInterlock || notes[0].Value != true ||
		notes[0].Principal.Name != writer || !strings.Contains(notes[0].Reason, "bench.door eq false") || !strings.Contains(notes[0].Reason, "driven to its safe value") {
		t.Errorf("hal/blocked %+v, want one for %s's write of true, naming the condition", notes, writer)
	}
	es := entries(t, b.log)
	if got := summary(es); !strings.HasSuffix(got, writer+":write:bench.heater:applied interlock:write:bench.heater:applied") {
		t.Errorf("audit %s, want the write applied then the interlock's drive-back", got)
	}
	if last := es[len(es)-1]; last.Value != false || !strings.Contains(last.Reason, "it broke while agent "+writer+"'s write of true was being applied") {
		t.Errorf("the drive-back's entry %+v does not say why", last)
	}
}

// TestInterlockRaceEveryPoint opens the door at each point of a heater
// write's way from its check to its answer.
func TestInterlockRaceEveryPoint(t *testing.T) {
	t.Run("before the check: refused", func(t *testing.T) {
		b := newRaceBench(t, &raceHeater{})
		admin, watcher := b.client(t, "root2", openhal.ScopeAdmin), b.client(t, "watcher", openhal.ScopeRead)
		b.door.Value(true, time.Time{})
		m := answered(t, b.writeHeater(admin))
		wantCode(t, m, openhal.CodeBlocked, "interlock")
		b.wantHeaterSafe(t)
		if got := b.heater.took(); len(got) != 0 {
			t.Errorf("the relay took %v", got)
		}
		if notes := blockedNotes(t, b, watcher); len(notes) != 1 || notes[0].Principal.Name != "root2" {
			t.Errorf("hal/blocked %+v, want one naming the writer", notes)
		}
		if got := summary(entries(t, b.log)); !strings.HasSuffix(got, "root2:write:bench.heater:blocked:interlock") {
			t.Errorf("audit %s", got)
		}
	})
	for _, point := range []struct {
		name string
		slot func(b *raceBench) *atomic.Pointer[pause]
	}{
		{"after the check, before the relay takes it", func(b *raceBench) *atomic.Pointer[pause] { return &b.heater.beforeTake }},
		{"the relay took it, Write not returned", func(b *raceBench) *atomic.Pointer[pause] { return &b.heater.afterTake }},
	} {
		t.Run(point.name+": undone before the audit sync", func(t *testing.T) {
			b := newRaceBench(t, &raceHeater{})
			admin, watcher := b.client(t, "root2", openhal.ScopeAdmin), b.client(t, "watcher", openhal.ScopeRead)
			inWrite := arm(t, point.slot(b))
			answer := b.writeHeater(admin)
			inWrite.wait(t, "the heater's Write")
			b.door.Value(true, time.Time{})
			b.loopRound(t) // the loop sees the door while the write holds the heater
			sync := arm(t, &b.syncStart)
			inWrite.release()
			sync.wait(t, "the sync of the write's entry")
			if got := b.heater.took(); len(got) != 2 || got[1] != false {
				t.Errorf("during the write's audit sync the relay has taken %v, want [true false]: driven back at once", got)
			}
			sync.release()
			wantDrivenBack(t, b, watcher, answered(t, answer), "root2")
		})
	}
	for _, point := range []struct {
		name string
		slot func(b *raceBench) *atomic.Pointer[pause]
	}{
		{"the write's entry written, its sync not begun", func(b *raceBench) *atomic.Pointer[pause] { return &b.syncStart }},
		{"the write's entry synced, not yet published", func(b *raceBench) *atomic.Pointer[pause] { return &b.syncEnd }},
	} {
		t.Run(point.name+": driven back before the answer", func(t *testing.T) {
			b := newRaceBench(t, &raceHeater{})
			admin, watcher := b.client(t, "root2", openhal.ScopeAdmin), b.client(t, "watcher", openhal.ScopeRead)
			inSync := arm(t, point.slot(b))
			answer := b.writeHeater(admin)
			inSync.wait(t, "the audit sync")
			b.door.Value(true, time.Time{})
			b.loopRound(t) // the heater is held: the loop leaves it to the write
			if got := b.heater.took(); len(got) != 1 {
				t.Errorf("the relay took %v while the write was in its sync", got)
			}
			inSync.release()
			wantDrivenBack(t, b, watcher, answered(t, answer), "root2")
		})
	}
	t.Run("after the answer: the loop drives it back", func(t *testing.T) {
		b := newRaceBench(t, &raceHeater{})
		admin, watcher := b.client(t, "root2", openhal.ScopeAdmin), b.client(t, "watcher", openhal.ScopeRead)
		wantOK(t, answered(t, b.writeHeater(admin)))
		b.door.Value(true, time.Time{})
		b.wantHeaterSafe(t)
		notes := blockedNotes(t, b, watcher)
		if len(notes) != 1 || notes[0].Principal.Name != "interlock" || notes[0].Value != true {
			t.Errorf("hal/blocked %+v, want one from the hub's interlock", notes)
		}
		es := entries(t, b.log)
		if last := es[len(es)-1]; last.Principal.Name != "interlock" || last.Value != false || last.Reason != "interlock bench.door eq false does not hold" {
			t.Errorf("last audit entry %+v, want the interlock's drive-back", last)
		}
	})
}

// A device that publishes its own value (Keep) may publish it after its
// write was settled: the door opening in between must not leave it on.
func TestInterlockRaceKeepPublishedLate(t *testing.T) {
	b := newRaceBench(t, &raceHeater{keep: true})
	admin, watcher := b.client(t, "root2", openhal.ScopeAdmin), b.client(t, "watcher", openhal.ScopeRead)
	wantOK(t, answered(t, b.writeHeater(admin)))
	b.door.Value(true, time.Time{})
	b.loopRound(t) // the registry still says off: nothing to do yet
	b.heater.rep.Value(true, time.Time{})
	b.loopRound(t)
	if got := b.heater.took(); len(got) != 2 || got[1] != false {
		t.Errorf("the relay took %v, want [true false]", got)
	}
	b.heater.rep.Value(b.heater.level(), time.Time{}) // the relay reports its position
	b.wantHeaterSafe(t)
	if notes := blockedNotes(t, b, watcher); len(notes) != 1 || notes[0].Principal.Name != "interlock" {
		t.Errorf("hal/blocked %+v, want one from the hub's interlock", notes)
	}
}

// A device that publishes its own value while the door opens during the
// write's audit sync: the write settles it.
func TestInterlockRaceKeepDuringSync(t *testing.T) {
	b := newRaceBench(t, &raceHeater{keep: true, publish: true})
	admin, watcher := b.client(t, "root2", openhal.ScopeAdmin), b.client(t, "watcher", openhal.ScopeRead)
	inSync := arm(t, &b.syncStart)
	answer := b.writeHeater(admin)
	inSync.wait(t, "the audit sync")
	b.door.Value(true, time.Time{})
	b.loopRound(t)
	inSync.release()
	wantDrivenBack(t, b, watcher, answered(t, answer), "root2")
}

// An approved confirmation is a write like any other: the door opening
// while the relay takes it drives it back, and the approval still says
// approved, with the applied result.
func TestInterlockRaceApprovedConfirmation(t *testing.T) {
	b := newRaceBench(t, &raceHeater{})
	agent, admin, watcher := b.client(t, "bot", openhal.ScopeControlLow), b.client(t, "root2", openhal.ScopeAdmin), b.client(t, "watcher", openhal.ScopeRead)
	pending := resultOf[openhal.PendingResult](t, write(agent, "bench.heater", true))
	inWrite := arm(t, &b.heater.afterTake)
	approval := make(chan msg, 1)
	go func() {
		approval <- admin.callAsync("hal/confirmations/approve", map[string]any{"id": pending.Confirmation.ID})
	}()
	inWrite.wait(t, "the heater's Write")
	b.door.Value(true, time.Time{})
	inWrite.release()
	c := resultOf[openhal.Confirmation](t, answered(t, approval))
	if c.Status != openhal.ConfirmApproved || c.Result == nil {
		t.Errorf("approval %+v, want approved with its result", c)
	}
	b.wantHeaterSafe(t)
	notes := blockedNotes(t, b, watcher)
	if len(notes) != 1 || notes[0].Principal.Name != "bot" || !strings.Contains(notes[0].Reason, "agent bot's write of true") {
		t.Errorf("hal/blocked %+v, want one naming the agent's write", notes)
	}
	if got := summary(entries(t, b.log)); !strings.Contains(got, "bot:write:bench.heater:applied interlock:write:bench.heater:applied") {
		t.Errorf("audit %s", got)
	}
}

// The heater already on, a second write of it stuck in its audit sync
// for longer than the loop's wait for a device (2 s), and the door opens:
// the loop must not give up on the heater behind the stuck write; the
// heater goes off when the write settles.
func TestInterlockRaceLoopBehindStuckWrite(t *testing.T) {
	b := newRaceBench(t, &raceHeater{})
	admin, watcher := b.client(t, "root2", openhal.ScopeAdmin), b.client(t, "watcher", openhal.ScopeRead)
	wantOK(t, answered(t, b.writeHeater(admin)))
	inSync := arm(t, &b.syncStart)
	answer := b.writeHeater(admin)
	inSync.wait(t, "the audit sync")
	b.door.Value(true, time.Time{})
	b.loopRound(t)
	inSync.release()
	if m := answered(t, answer); m.Error != nil {
		t.Errorf("answer %s", m.raw)
	}
	b.wantHeaterSafe(t)
	notes := blockedNotes(t, b, watcher)
	if len(notes) != 1 || strings.Contains(notes[0].Reason, "failed") {
		t.Errorf("hal/blocked %+v, want one drive-back that worked", notes)
	}
	if got := b.heater.took(); len(got) != 3 || got[2] != false {
		t.Errorf("the relay took %v, want [true true false]", got)
	}
}
