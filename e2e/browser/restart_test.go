package browser

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// TestGatewayRestart: the gateway is killed and started again on the same
// state directory and ports under an open console; the page reconnects by
// itself with the same token, says the gateway restarted, and its values
// are live again.
func TestGatewayRestart(t *testing.T) {
	g := newBench(t)
	admin := g.adminToken(t)
	p := logIn(t, g, admin)
	value := deviceHook("sim.led", "value")
	before, _ := strconv.ParseBool(p.waitText(value, "^(true|false)$"))

	start := time.Now()
	g = g.restart(t)
	t.Logf("gateway back in %s", time.Since(start).Round(time.Millisecond))
	p.waitText(hook("conn-status"), `^gateway restarted \(new run \w+\), connected$`)
	t.Logf("console back in %s", time.Since(start).Round(time.Millisecond))
	c := g.dial(t, admin)
	if _, err := c.Write(context.Background(), "sim.led", !before, "browser test"); err != nil {
		t.Fatalf("write sim.led after the restart: %v", err)
	}
	p.waitText(value, fmt.Sprintf("^%v$", !before))
}
