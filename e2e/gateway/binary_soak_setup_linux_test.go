package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newBenchNode is the sim board with two test adapters: flaky crashes or
// hangs once in every run, at random (--chaos), steady behaves. With
// SOAK_FORK=1 each starts a child that ignores SIGTERM (flaky's in its
// process group, steady's in a session of its own), which must die with
// it: the gateway's sweep of orphans takes those whose parent already
// died, so the children that matter after a kill -9 are those whose
// adapter was still running.
func newBenchNode(t testing.TB, plan soakPlan) *soakNode {
	t.Helper()
	tmp, state := soakDirs(t)
	flaky := []string{"--values", `{"temp":21.5,"relay":false}`, "--chaos", plan.chaos.String()}
	steady := []string{"--values", `{"level":3}`}
	if plan.fork {
		flaky = append(flaky, "--fork", "child")
		steady = append(steady, "--fork", "setsid")
	}
	installTestAdapter(t, state, "flaky", `[{"id":"temp","kind":"sensor","access":"r","risk":"low","schema":{"type":"number"}},
 {"id":"relay","kind":"gpio.output","access":"rw","risk":"low","schema":{"type":"boolean"},"safe":false}]`, flaky...)
	installTestAdapter(t, state, "steady", `[{"id":"level","kind":"sensor","access":"r","risk":"low","schema":{"type":"number"}}]`, steady...)
	cfg := writeSoakConfig(t, tmp, "board: sim\nadapters:\n  enabled: [flaky, steady]\n  user: nobody\n")
	agent := gwOK(t, "token", "add", "--state-dir", state, "--name", "soak-agent", "--kind", "agent", "--scope", "control_low", "--init")
	return &soakNode{name: "bench", dir: state, cfg: cfg, agent: strings.TrimSpace(agent)}
}

// newMetersNode is a generic board with two serial instruments behind
// stable links, which the soak points at pseudo-terminals.
func newMetersNode(t testing.TB) (*soakNode, []string) {
	t.Helper()
	tmp, state := soakDirs(t)
	links := []string{filepath.Join(tmp, "meter1"), filepath.Join(tmp, "meter2")}
	var b strings.Builder
	b.WriteString("board: generic\ndevices:\n")
	for i, l := range links {
		fmt.Fprintf(&b, "  bench.meter%d: {kind: serial, port: %s, baud: 9600, risk: low}\n", i+1, l)
	}
	return &soakNode{name: "meters", dir: state, cfg: writeSoakConfig(t, tmp, b.String())}, links
}

func writeSoakConfig(t testing.TB, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	gwOK(t, "check", "--config", p)
	return p
}

// soakAnswer is the instruments' answer to a line.
func soakAnswer(q string) string { return "OK " + q }

// plugAll plugs a fresh instrument in at every link.
func (s *soak) plugAll(t testing.TB) {
	t.Helper()
	for _, l := range s.links {
		in := openInstrument(t, soakAnswer)
		in.plugAt(t, l)
		s.plugged = append(s.plugged, in)
	}
}

// replug unplugs instrument i (closes its terminal) when it is plugged,
// and plugs a new one at its link when it is not; it returns when to do
// the next of the two: a moment later to plug it back, a while later to
// unplug it again. The pause is a point of the schedule, not a sleep, so
// that the samples around it are taken on time.
func (s *soak) replug(t testing.TB, i int) time.Duration {
	t.Helper()
	if s.plugged[i] != nil {
		s.plugged[i].master.Close()
		s.plugged[i] = nil
		return 200*time.Millisecond + time.Duration(s.rnd.Int64N(int64(2*time.Second))) // unplugged a while
	}
	in := openInstrument(t, soakAnswer)
	in.plugAt(t, s.links[i])
	s.plugged[i] = in
	return s.between(s.plan.plugGap)
}

// startClients starts every client, each in its goroutine, until finish.
func (s *soak) startClients(t testing.TB) {
	t.Helper()
	admin := func(n *soakNode) string { return readAdminToken(t, n.dir) }
	b, m := s.bench, s.meters
	agent := b.agent
	fanOrLed := func(dev string, n int) any {
		switch dev {
		case "sim.fan":
			return n % 101
		}
		return n%2 == 0
	}
	meterLine := func(dev string, n int) any { return fmt.Sprintf("MEAS %d", n) }
	s.clients = []*soakClient{
		{name: "writer", node: b.name, url: b.g.tcp, token: admin(b), work: writer([]string{"sim.fan", "sim.led", "flaky.relay"}, fanOrLed, 100*time.Millisecond)},
		{name: "reader", node: b.name, url: b.g.ws, token: agent, work: reader([]string{"sim.temperature", "flaky.temp", "steady.level", "sim.door"}, 100*time.Millisecond)},
		{name: "watcher", node: b.name, url: b.g.ws, token: agent, work: watcher},
		{name: "confirmer", node: b.name, url: b.g.tcp, token: agent, work: confirmer(b.g.ws, admin(b), time.Second)},
		{name: "stopper", node: b.name, url: b.g.ws, token: admin(b), work: stopper(&s.stopLock, 3*time.Second)},
		{name: "meter-writer", node: m.name, url: m.g.tcp, token: admin(m), work: writer([]string{"bench.meter1", "bench.meter2"}, meterLine, 200*time.Millisecond)},
		{name: "meter-watcher", node: m.name, url: m.g.ws, token: admin(m), work: watcher},
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	t.Cleanup(cancel)
	for _, c := range s.clients {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			c.run(ctx, s.ledger)
		}()
	}
}

// names lists the clients of node ("": all).
func (s *soak) names(node string) []string {
	var out []string
	for _, c := range s.clients {
		if node == "" || c.node == node {
			out = append(out, c.name)
		}
	}
	return out
}
