package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// TestBinarySoak is make soak (issue 20, docs/testing.md "The soak"): for
// SOAK (a Go duration), two gateways — the sim board with two test
// adapters that crash and hang at random, and a generic board with two
// serial instruments on pseudo-terminals that are unplugged and plugged
// back — serve clients that read, write, watch, ask for and approve
// confirmations, stop and resume, while each gateway is killed with -9
// and restarted at random points of the middle of the run. At each
// restart and at the end it checks that no process outlived the
// gateway, that the audit log is whole (every write answered applied has
// its line, no torn line), that a stop engaged before the kill still
// holds, and that every client connected again; it prints RSS,
// goroutines and descriptors over time and checks that they stay flat
// (soakFlat). Without SOAK it is skipped; SOAK_FORK=1 has the adapters
// fork children that must die with them.
func TestBinarySoak(tt *testing.T) {
	t := newSoakT(tt)
	plan := newSoakPlan(t)
	s := &soak{plan: plan, ledger: newSoakLedger(), rnd: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 20))}
	s.bench = newBenchNode(t, plan)
	s.meters, s.links = newMetersNode(t)
	s.plugAll(t)
	for _, n := range []*soakNode{s.bench, s.meters} {
		n.start(t)
	}
	s.startClients(t)
	s.ledger.waitReconnected(t, s.names(""), time.Time{}, waitLong)
	s.drive(t)
	s.finish(t)
}

// soakT is the soak's testing.TB: it keeps each failure to say it again
// at the very end, after the logs of every life that a failed test
// prints (many thousand lines, in which the failure itself is lost).
type soakT struct {
	*testing.T
	mu       sync.Mutex
	failures []string
}

func newSoakT(t *testing.T) *soakT {
	st := &soakT{T: t}
	t.Cleanup(func() { // registered first, so run last
		st.mu.Lock()
		defer st.mu.Unlock()
		if len(st.failures) > 0 {
			t.Logf("the soak failed %d times:\n%s", len(st.failures), strings.Join(st.failures, "\n"))
		}
	})
	return st
}

func (st *soakT) record(msg string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.failures = append(st.failures, msg)
}

func (st *soakT) Errorf(format string, args ...any) {
	st.T.Helper()
	st.record(fmt.Sprintf(format, args...))
	st.T.Errorf(format, args...)
}

func (st *soakT) Fatalf(format string, args ...any) {
	st.T.Helper()
	st.record(fmt.Sprintf(format, args...))
	st.T.Fatalf(format, args...)
}

func (st *soakT) Fatal(args ...any) {
	st.T.Helper()
	st.record(fmt.Sprint(args...))
	st.T.Fatal(args...)
}

// soakPlan is the soak's schedule, from its duration d: a warm-up (the
// first sixth, whose second half is the reference of soakFlat), kills
// in the middle (until 60 %), and a last third without a kill.
type soakPlan struct {
	d, warm, killUntil, sampleEvery time.Duration
	killGap                         [2]time.Duration // between kills, at random
	plugGap                         [2]time.Duration // between unplugs of an instrument
	chaos                           time.Duration    // the adapters' --chaos
	fork                            bool
}

func newSoakPlan(t testing.TB) soakPlan {
	t.Helper()
	v := os.Getenv("SOAK")
	if v == "" {
		t.Skip("the soak runs with SOAK set to its duration: make soak (SOAK=60s for a short one)")
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 30*time.Second {
		t.Fatalf("SOAK=%q: want a Go duration of at least 30s", v)
	}
	if os.Geteuid() != 0 {
		skipOrFail(t, "the soak runs adapters as nobody, which needs root")
	}
	gatewayBinary(t)
	return soakPlan{
		d: d, warm: d / 6, killUntil: d * 6 / 10, sampleEvery: max(d/30, 2*time.Second),
		killGap: [2]time.Duration{d / 12, d / 6}, plugGap: [2]time.Duration{d / 10, d / 5},
		chaos: max(d/3, 10*time.Second), fork: os.Getenv("SOAK_FORK") == "1",
	}
}

// skipOrFail skips the test, or fails it in CI, where everything it
// needs must be there.
func skipOrFail(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// soak is one run: its nodes, clients and what they were answered.
type soak struct {
	plan          soakPlan
	bench, meters *soakNode
	links         []string // the instruments' stable paths
	plugged       []*instrument
	clients       []*soakClient
	ledger        *soakLedger
	stopLock      sync.Mutex // the stopper's cycle, or the driver's latch check
	rnd           *rand.Rand
	cancel        context.CancelFunc
	done          sync.WaitGroup
	start         time.Time
	kills         int
	completed     bool // the schedule ran to its end, not cut short by a failure
}

// drive runs the schedule: samples every sampleEvery, kills at random
// until killUntil, unplugs and plugs back instruments throughout.
func (s *soak) drive(t testing.TB) {
	s.start = time.Now()
	at := func(d time.Duration) time.Time { return s.start.Add(d) }
	end := at(s.plan.d)
	nextSample := s.start
	nextKill := at(s.plan.warm + s.between(s.plan.killGap))
	nextPlug := make([]time.Time, len(s.links))
	for i := range nextPlug {
		nextPlug[i] = at(s.between(s.plan.plugGap))
	}
	for !t.Failed() {
		next, what := end, -3
		if nextSample.Before(next) {
			next, what = nextSample, -1
		}
		if nextKill.Before(next) && nextKill.Before(at(s.plan.killUntil)) {
			next, what = nextKill, -2
		}
		for i, p := range nextPlug {
			if p.Before(next) {
				next, what = p, i
			}
		}
		<-time.After(time.Until(next)) // the schedule's next point: nothing else announces it
		switch {
		case what == -3:
			s.completed = true
			return
		case what == -1:
			s.bench.sample(t, time.Since(s.start))
			s.meters.sample(t, time.Since(s.start))
			nextSample = nextSample.Add(s.plan.sampleEvery)
		case what == -2:
			// The nodes in turn; every other kill of the bench with
			// the stop engaged.
			s.kills++
			if s.kills%2 == 1 {
				s.restart(t, s.bench, s.kills%4 == 1)
			} else {
				s.restart(t, s.meters, false)
			}
			nextKill = time.Now().Add(s.between(s.plan.killGap))
		default:
			nextPlug[what] = time.Now().Add(s.replug(t, what))
		}
	}
}

func (s *soak) between(r [2]time.Duration) time.Duration {
	return r[0] + time.Duration(s.rnd.Int64N(int64(r[1]-r[0]+1)))
}

// restart kills n with -9 at this point and starts it again; with latch,
// the emergency stop is engaged first and must hold in the new life.
func (s *soak) restart(t testing.TB, n *soakNode, latch bool) {
	t.Helper()
	if latch {
		s.stopLock.Lock() // let go once checked: the stopper must reconnect
		s.admin(t, n, func(ctx context.Context, c *halclient.Conn) error {
			_, err := c.Stop(ctx, "soak: latched across a kill -9")
			return err
		})
	}
	n.sample(t, time.Since(s.start))
	n.kill(t)
	killed := time.Now()
	entries := checkSoakAudit(t, n, s.ledger, fmt.Sprintf("after kill %d", n.lives))
	t.Logf("%s: killed -9 at %.1fs (life %d, latched stop %v); audit whole, %d entries", n.name, killed.Sub(s.start).Seconds(), n.lives, latch, entries)
	n.start(t)
	if latch {
		s.checkLatched(t, n)
		s.stopLock.Unlock()
	}
	s.ledger.waitReconnected(t, s.names(n.name), killed, 30*time.Second)
}

// checkLatched: the new life is stopped, refuses a write with STOPPED,
// and an admin's resume lifts it.
func (s *soak) checkLatched(t testing.TB, n *soakNode) {
	t.Helper()
	if !n.sample(t, time.Since(s.start)).stopped {
		t.Errorf("%s: the stop engaged before the kill -9 does not hold after the restart", n.name)
	}
	s.admin(t, n, func(ctx context.Context, c *halclient.Conn) error {
		_, err := c.Write(ctx, "sim.fan", 50, "soak: must be refused while stopped")
		var he *halclient.HubError
		if !errors.As(err, &he) || he.Code() != openhal.CodeStopped {
			t.Errorf("%s: a write after the restart with the stop latched: %v, want STOPPED", n.name, err)
		}
		return c.Resume(ctx)
	})
}

// admin runs do on a new admin connection to n.
func (s *soak) admin(t testing.TB, n *soakNode, do func(context.Context, *halclient.Conn) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	c, err := halclient.Dial(ctx, n.g.ws, halclient.Options{Token: readAdminToken(t, n.dir), ClientName: "soak-driver"})
	if err != nil {
		t.Fatalf("%s: dial as admin: %v", n.name, err)
	}
	defer c.Close()
	if err := do(ctx, c); err != nil {
		t.Fatalf("%s: %v", n.name, err)
	}
}

// finish ends the clients, stops both gateways as an operator would, and
// checks the audit logs, the orphans, the clients and the figures.
func (s *soak) finish(t testing.TB) {
	t.Helper()
	s.cancel()
	s.done.Wait()
	for _, n := range []*soakNode{s.bench, s.meters} {
		n.sample(t, time.Since(s.start))
		n.stop(t)
		entries := checkSoakAudit(t, n, s.ledger, "at the end")
		t.Logf("%s: %d lives, audit whole, %d entries", n.name, n.lives, entries)
		if s.completed {
			soakFlat(t, n, s.plan)
		}
	}
	acted := s.bench.chaosActed(t)
	t.Logf("bench: the flaky adapter crashed or hung %d times (%d seen by the supervisor before a kill)", acted, s.bench.chaos)
	if s.completed && acted == 0 {
		t.Errorf("the flaky adapter never crashed or hung: its --chaos %s did not act", s.plan.chaos)
	}
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	for _, c := range s.clients {
		t.Logf("client %-16s %s: %5d answered, %4d of them errors", c.name, c.node, s.ledger.answered[c.name], s.ledger.refused[c.name])
	}
}

// installTestAdapter installs the test adapter under name into the state
// directory state, with args. Adapters run as nobody: the temporary
// directories above the state directory are made traversable.
func installTestAdapter(t testing.TB, state, name, devices string, args ...string) {
	t.Helper()
	argv, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	man := fmt.Sprintf(`{"name":%q,"version":"0.1.0","kind":"service","exec":"testadapter","args":%s,
 "env_pass":[],"grant":{"level":"read","scope":[]},"devices":%s,"timeouts":{"request_ms":2000}}`, name, argv, devices)
	src := buildAdapter(t, "./adapters/testadapter", "testadapter", []byte(man))
	gwOK(t, "adapter", "install", src, "--state-dir", state, "--hub", "tcp://127.0.0.1:1")
}

// soakDirs makes a state directory and returns it with its parent, both
// reachable by the adapters' user.
func soakDirs(t testing.TB) (tmp, state string) {
	t.Helper()
	tmp = t.TempDir()
	for _, d := range []string{tmp, filepath.Dir(tmp)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tmp, filepath.Join(tmp, "state")
}
