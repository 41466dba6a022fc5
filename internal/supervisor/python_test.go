package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/supervisor/restart"
)

// The adapter written in Python from the seeds alone runs unchanged: it
// installs, starts, adds its devices, receives events and serves its
// devices to a HAL client.
func TestPythonAdapter(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed (.ci/run installs it)")
	}
	src := filepath.Join(t.TempDir(), "pyledger")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"adapter.json", "pyledger.py"} {
		copyExecutable(t, filepath.Join("..", "..", "adapters", "examples", "pyledger", f), filepath.Join(src, f))
	}
	b := newBench(t, spec{name: "pyledger", folder: src})
	b.start()
	b.waitState("pyledger", restart.Running)
	c := b.client()
	ctx := ctxWait(t)
	waitDevice(t, b, "pyledger.note")
	if _, err := c.Write(ctx, "pyledger.note", "hello from HAL", "test"); err != nil {
		t.Fatal(err)
	}
	v, err := c.Read(ctx, "pyledger.note", 0)
	if err != nil || v.Value != "hello from HAL" {
		t.Fatalf("read note: %+v, %v", v, err)
	}
	// An event in its scope (sim.*) reaches it and is counted.
	if _, err := c.Write(ctx, "sim.led", true, "event for python"); err != nil {
		t.Fatal(err)
	}
	b.waitFile("pyledger", "events.jsonl", `"sim.led"`)
	r, err := c.Read(ctx, "pyledger.events", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := r.Value.(float64); n < 1 {
		t.Fatalf("events count %v", r.Value)
	}
	b.sup.Stop()
	st := b.waitState("pyledger", restart.Stopped)
	if st.Crashes != 0 || st.LastExit != "exited with code 0" || st.DroppedEvents != 0 {
		t.Fatalf("status after stop: %+v", st)
	}
	if _, ok := b.reg.Describe("pyledger.note"); ok {
		t.Fatal("run-time device outlived the run")
	}
}

// waitDevice waits for a device an adapter adds at run time.
func waitDevice(t *testing.T, b *bench, id string) device.Descriptor {
	t.Helper()
	added := make(chan struct{}, 1)
	cancel := b.reg.Subscribe(func(e device.Event) {
		if e.Kind == device.EventAdded && e.Device == id {
			select {
			case added <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	if d, ok := b.reg.Describe(id); ok {
		return d
	}
	select {
	case <-added:
	case <-ctxWait(t).Done():
		t.Fatalf("device %s never added", id)
	}
	d, _ := b.reg.Describe(id)
	return d
}
