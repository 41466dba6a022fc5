//go:build linux

package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/e2e/modbussim"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// reloadUnits is one Modbus unit with four coils, all off.
var reloadUnits = modbussim.Units{1: {modbussim.Coil: {0: {0, 0, 0, 0}}}}

// reloadYAML is a generic board whose devices are coils of reloadUnits,
// each on a Modbus TCP line of its own (four lines to the one
// simulator), so that a reload closes and opens each alone.
func reloadYAML(addr string, devices ...string) string {
	var b strings.Builder
	b.WriteString("board: generic\nmodbus:\n")
	for _, line := range []string{"a", "b", "c", "d"} {
		fmt.Fprintf(&b, "  %s: {tcp: %s, timeout: 2s}\n", line, addr)
	}
	b.WriteString("devices:\n")
	for _, d := range devices {
		b.WriteString("  " + d + "\n")
	}
	return b.String()
}

const (
	reloadKeep   = "keep.pump: {kind: modbus, label: Pump, bus: a, slave: 1, table: coil, address: 0, risk: low}"
	reloadValve  = "change.valve: {kind: modbus, label: Valve, bus: b, slave: 1, table: coil, address: 1, risk: high}"
	reloadValve2 = "change.valve: {kind: modbus, label: Inlet valve, bus: b, slave: 1, table: coil, address: 1, risk: high}"
	reloadGone   = "gone.fan: {kind: modbus, label: Fan, bus: c, slave: 1, table: coil, address: 2, risk: low}"
	reloadNew    = "new.light: {kind: modbus, label: Light, bus: d, slave: 1, table: coil, address: 3, risk: low}"
)

// TestBinaryReload (issue 32 point 6): SIGHUP applies a changed file to a
// running gateway whose devices are Modbus coils on pymodbus. A client
// connected across the reload stays connected and is told of each device
// removed and added; the device whose entry did not change is neither
// removed nor written again (its coil stays on, and the simulator hears
// no write to it); a confirmation request waiting on the device that
// changed is rejected; a bad file is refused with `gateway check`'s
// errors and the running configuration still serves; systemd hears
// RELOADING=1 with MONOTONIC_USEC, then READY=1 and the outcome in
// STATUS; the audit log has an entry per reload.
func TestBinaryReload(t *testing.T) {
	t.Parallel()
	gatewayBinary(t) // skipped with -short before anything starts
	sim := modbussim.StartTCP(t, reloadUnits)
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	writeFile(t, cfg, reloadYAML(sim.Addr, reloadKeep, reloadValve, reloadGone))
	gwOK(t, "check", "--config", cfg)
	notify := newNotifySocket(t)
	c := newChild("gateway run", exec.Command(gatewayBinary(t), gatewayRunArgs(dir, "--config", cfg)...))
	c.cmd.Env = append(childEnv(), "NOTIFY_SOCKET="+notify.path)
	c.start(t)
	g := readyGateway(t, c, dir, 3)
	notify.waitFor(`(^|\n)READY=1`, waitLong)

	admin := adminConn(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if _, err := admin.Write(ctx, "keep.pump", true, "before the reload"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pump's coil on", func() bool { return sim.Get(1, modbussim.Coil, 0, 1)[0] == 1 })
	before, err := admin.Read(ctx, "keep.pump", 0)
	if err != nil || before.Value != true {
		t.Fatalf("keep.pump before the reload: %+v, %v", before, err)
	}
	agent, err := dial(t, g.ws, g.addToken(t, "reload-agent", "control_low"))
	if err != nil {
		t.Fatal(err)
	}
	pending, err := agent.Write(ctx, "change.valve", true, "open it")
	if err != nil || pending.Confirmation == nil {
		t.Fatalf("write to the high-risk valve: %+v, %v; want a confirmation request", pending, err)
	}
	sim.Requests() // forget what came before the reload
	notes := collect(admin)

	writeFile(t, cfg, reloadYAML(sim.Addr, reloadKeep, reloadValve2, reloadNew))
	from := g.err.len()
	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	g.err.waitFor(t, from, `msg="configuration reloaded" part=reload added=new\.light removed=gone\.fan changed=change\.valve`, waitLong)
	got := notify.waitFor(`(^|\n)READY=1`, waitLong)
	wantReload(t, got, `^STATUS=devices 3, .*, reloaded at `)

	// The same connection, still open, was told what changed.
	if p := notes.waitFor(t, openhal.NotifyDeviceRemoved, "gone.fan"); !strings.Contains(p, `"reason":"configuration reload"`) {
		t.Errorf("hal/deviceRemoved of gone.fan: %s", p)
	}
	notes.waitFor(t, openhal.NotifyDeviceRemoved, "change.valve")
	if p := notes.waitFor(t, openhal.NotifyDeviceAdded, "change.valve"); !strings.Contains(p, `"label":"Inlet valve"`) {
		t.Errorf("hal/deviceAdded of the changed valve: %s; want its new label", p)
	}
	notes.waitFor(t, openhal.NotifyDeviceAdded, "new.light")
	c1 := notes.waitFor(t, openhal.NotifyConfirmationResolved, "change.valve")
	if !strings.Contains(c1, `"status":"rejected"`) || !strings.Contains(c1, "changed by a configuration reload") {
		t.Errorf("the request on the changed valve resolved as %s", c1)
	}
	if n := notes.count(openhal.NotifyDeviceRemoved, "keep.pump") + notes.count(openhal.NotifyDeviceAdded, "keep.pump"); n != 0 {
		t.Errorf("the unchanged pump was removed or added again (%d notifications)", n)
	}
	devs, err := admin.Devices(ctx)
	if err != nil {
		t.Fatalf("devices on the connection opened before the reload: %v", err)
	}
	if ids := deviceIDs(devs); !slices.Equal(ids, []string{"change.valve", "keep.pump", "new.light"}) {
		t.Errorf("devices after the reload: %v", ids)
	}
	after, err := admin.Read(ctx, "keep.pump", 0)
	if err != nil || after.Value != true || after.DevSeq < before.DevSeq {
		t.Errorf("keep.pump after the reload: %+v, %v; before %+v", after, err, before)
	}
	for _, r := range sim.Requests() {
		if (r.Function == 5 || r.Function == 15) && r.Address == 0 {
			t.Errorf("the unchanged pump's coil was written during the reload: %v", r)
		}
	}
	if got := sim.Get(1, modbussim.Coil, 0, 1)[0]; got != 1 {
		t.Errorf("the pump's coil is %d after the reload, want still on", got)
	}

	// A bad file: refused whole, with check's words, and the devices stay.
	bad := reloadYAML(sim.Addr, reloadKeep, reloadValve2, "new.light: {kind: modbus, bus: e, slave: 1, table: coil, address: 3, risk: low}")
	writeFile(t, cfg, bad)
	check := gw(t, "check", "--config", cfg)
	if check.code != 1 || check.stderr == "" {
		t.Fatalf("gateway check of the bad file: exit %d, stderr %q", check.code, check.stderr)
	}
	from = g.err.len()
	if err := c.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	g.err.waitFor(t, from, `msg="reload refused; the running configuration stays"`, waitLong)
	for _, line := range strings.Split(strings.TrimSpace(check.stderr), "\n") {
		if !strings.Contains(g.err.text()[from:], fmt.Sprintf("msg=\"reload refused\" part=reload error=%q", line)) {
			t.Errorf("the log does not refuse the reload with check's line %q", line)
		}
	}
	wantReload(t, notify.waitFor(`(^|\n)READY=1`, waitLong), `^STATUS=devices 3, .*, reload refused at \S+: `+regexp.QuoteMeta(cfg)+`: 1 error$`)
	if _, err := admin.Write(ctx, "new.light", true, "after the refused reload"); err != nil {
		t.Errorf("write to new.light after the refused reload: %v", err)
	}
	waitFor(t, "the light's coil on", func() bool { return sim.Get(1, modbussim.Coil, 3, 1)[0] == 1 })

	outcomes := reloadAudit(t, ctx, admin)
	if !slices.Equal(outcomes, []string{"applied", "refused"}) {
		t.Errorf("config.reload audit entries: %v, want applied then refused", outcomes)
	}
	select {
	case <-admin.Done():
		t.Errorf("the admin's connection ended: %v", admin.Err())
	default:
	}
	g.stop(t)
}

// wantReload checks that the messages systemd got up to READY=1 are
// RELOADING=1 with MONOTONIC_USEC, then a STATUS that matches status.
func wantReload(t *testing.T, got []string, status string) {
	t.Helper()
	i := slices.IndexFunc(got, func(m string) bool { return regexp.MustCompile(`^RELOADING=1\nMONOTONIC_USEC=\d+$`).MatchString(m) })
	j := slices.IndexFunc(got, regexp.MustCompile(status).MatchString)
	if i < 0 || j < i {
		t.Errorf("systemd heard %q up to READY=1; want RELOADING=1 with MONOTONIC_USEC, then a STATUS matching %s", got, status)
	}
}

// adminConn is a connection with the state directory's admin token.
func adminConn(t *testing.T, g *gateway) *halclient.Conn {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(g.dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := dial(t, g.ws, strings.TrimSpace(string(tok)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func deviceIDs(devs []device.Descriptor) []string {
	var ids []string
	for _, d := range devs {
		ids = append(ids, d.ID)
	}
	slices.Sort(ids)
	return ids
}

// reloadAudit returns the outcomes of the audit log's config.reload
// entries, oldest first.
func reloadAudit(t *testing.T, ctx context.Context, c *halclient.Conn) []string {
	t.Helper()
	res, err := c.Audit(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, raw := range res.Entries {
		var e struct {
			Action, Outcome string
			Principal       openhal.Principal
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("audit entry %s: %v", raw, err)
		}
		if e.Action == "config.reload" {
			if e.Principal.Name != "reload" {
				t.Errorf("config.reload entry by %+v", e.Principal)
			}
			out = append(out, e.Outcome)
		}
	}
	return out
}

// notes gathers a connection's notifications as they come.
type notes struct {
	mu   sync.Mutex
	seen []halclient.Notification
	more chan struct{}
}

func collect(c *halclient.Conn) *notes {
	n := &notes{more: make(chan struct{}, 1)}
	go func() {
		for m := range c.Notifications() {
			n.mu.Lock()
			n.seen = append(n.seen, m)
			n.mu.Unlock()
			select {
			case n.more <- struct{}{}:
			default:
			}
		}
	}()
	return n
}

// find returns the params of the first notification method about id
// (its params name it), or "".
func (n *notes) find(method, id string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range n.seen {
		if m.Method == method && strings.Contains(string(m.Params), `"`+id+`"`) {
			return string(m.Params)
		}
	}
	return ""
}

func (n *notes) count(method, id string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for _, m := range n.seen {
		if m.Method == method && strings.Contains(string(m.Params), `"`+id+`"`) {
			k++
		}
	}
	return k
}

func (n *notes) waitFor(t *testing.T, method, id string) string {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		if p := n.find(method, id); p != "" {
			return p
		}
		select {
		case <-n.more:
		case <-deadline:
			t.Fatalf("no %s about %s within %s", method, id, waitLong)
		}
	}
}

// TestBinaryReloadAdaptersAndRules: on the sim board, a reload enables an
// installed adapter (started as nobody, its device added) and gives
// sim.fan a maximum, in force at once; a second one disables the adapter
// (stopped, its device removed); the admin's connection stays open
// throughout.
func TestBinaryReloadAdaptersAndRules(t *testing.T) {
	t.Parallel()
	gatewayBinary(t)
	tmp, state := soakDirs(t)
	installTestAdapter(t, state, "ta", `[{"id":"temp","kind":"sensor","access":"r","risk":"low","schema":{"type":"number"}}]`)
	cfg := filepath.Join(tmp, "gateway.yaml")
	writeFile(t, cfg, "board: sim\nadapters:\n  enabled: []\n  user: nobody\n")
	g := startGateway(t, state, "--config", cfg)
	admin := adminConn(t, g)
	notes := collect(admin)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if _, err := admin.Write(ctx, "sim.fan", 95.0, "before the rule"); err != nil {
		t.Fatal(err)
	}

	writeFile(t, cfg, "board: sim\nadapters:\n  enabled: [ta]\n  user: nobody\ndevices:\n  sim.fan:\n    rules: {maximum: 80}\n")
	from := g.err.len()
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	g.err.waitFor(t, from, `msg="configuration reloaded" part=reload rules=sim\.fan adapters_started=ta$`, waitLong)
	adapterRunning(t, g, "ta")
	notes.waitFor(t, openhal.NotifyDeviceAdded, "ta.temp")
	_, err := admin.Write(ctx, "sim.fan", 95.0, "after the rule")
	var he *halclient.HubError
	if !errors.As(err, &he) || he.Code() != openhal.CodeBlocked || !strings.Contains(err.Error(), "maximum") {
		t.Errorf("sim.fan 95 after a reload gave it a maximum of 80: %v; want BLOCKED by the maximum", err)
	}

	writeFile(t, cfg, "board: sim\nadapters:\n  enabled: []\n  user: nobody\ndevices:\n  sim.fan:\n    rules: {maximum: 80}\n")
	from = g.err.len()
	if err := g.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	g.err.waitFor(t, from, `msg="configuration reloaded" part=reload adapters_stopped=ta$`, waitLong)
	notes.waitFor(t, openhal.NotifyDeviceRemoved, "ta.temp")
	if r := gw(t, "adapter", "status", "ta", "--hub", g.ws, "--state-dir", g.dir); r.code == 0 {
		t.Errorf("adapter status ta after it was disabled: exit 0, %s", r.stdout)
	}
	if _, err := admin.Write(ctx, "sim.fan", 50.0, "still connected"); err != nil {
		t.Errorf("the admin's connection after two reloads: %v", err)
	}
	g.stop(t)
}
