package gateway_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// soakNode is one gateway of the soak across its lives: the same state
// directory, configuration and addresses, a new process after each kill.
type soakNode struct {
	name     string
	dir, cfg string
	agent    string   // an agent's token (control_low), made before the first life
	g        *gateway // the current life
	lives    int
	samples  []soakSample
	chaos    int // the flaky adapter's crashes and hangs, in the lives ended
}

// start begins a life: the first on free ports, the next ones on the
// same addresses, so that the clients find it again.
func (n *soakNode) start(t testing.TB) {
	t.Helper()
	args := gatewayRunArgs(n.dir, "--config", n.cfg, "--log-level", "info")
	if n.g != nil {
		args = append(args, "--http", n.g.httpAddr, "--tcp", n.g.tcpAddr)
	}
	c := startChild(t, args...)
	c.name = fmt.Sprintf("%s (life %d)", n.name, n.lives+1)
	g := &gateway{child: c, dir: n.dir}
	g.await(t, `\d+`)
	n.g = g
	n.lives++
	t.Logf("%s: life %d, pid %d, %s", n.name, n.lives, n.pid(), g.ws)
}

func (n *soakNode) pid() int { return n.g.cmd.Process.Pid }

// kill ends the current life with SIGKILL and checks that nothing of it
// is left within 1 s.
func (n *soakNode) kill(t testing.TB) {
	t.Helper()
	n.g.kill(t)
	n.countChaos()
	n.checkNoOrphans(t, "after kill -9")
}

// stop ends the last life with SIGTERM, as an operator would.
func (n *soakNode) stop(t testing.TB) {
	t.Helper()
	if code, _ := n.g.signal(t, syscall.SIGTERM, waitLong); code != 0 {
		t.Errorf("%s exited %d after SIGTERM, want 0", n.name, code)
	}
	n.countChaos()
	n.checkNoOrphans(t, "after its stop")
}

// countChaos adds the flaky adapter's crashes, and its runs ended by the
// supervisor for not answering (a hang), from the log of the life ended.
// A hang the life ended before the supervisor gave up on (three pings
// missed take 45 s: longer than a short soak's lives) counts once, by its
// missed pings.
func (n *soakNode) countChaos() {
	ended, missed := 0, false
	for _, line := range strings.Split(n.g.err.text(), "\n") {
		if !strings.Contains(line, " adapter=flaky ") {
			continue
		}
		switch {
		case strings.Contains(line, `msg="adapter crashed"`),
			strings.Contains(line, `msg="adapter stopped"`) && !strings.Contains(line, "the gateway is stopping"):
			ended++
		case strings.Contains(line, `msg="adapter missed a ping"`):
			missed = true
		}
	}
	if ended == 0 && missed {
		ended = 1
	}
	n.chaos += ended
}

// chaosActed is how many times the flaky adapter crashed or hung, as it
// wrote down itself (chaos.txt in its home, a line each), in all lives:
// a hang the kill -9 cut short before the supervisor saw it counts.
func (n *soakNode) chaosActed(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(n.dir, "adapters", "state", "flaky", "chaos.txt"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("%s: read the flaky adapter's record: %v", n.name, err)
	}
	return strings.Count(string(b), "\n")
}

// checkNoOrphans waits up to 1 s for every process started from the
// node's state directory (its adapters, and whatever they forked) to be
// gone, once the gateway itself is. Those left are named, then killed,
// so that the soak goes on. Nothing reports the end of a process that is
// not the test's child: /proc is polled.
func (n *soakNode) checkNoOrphans(t testing.TB, when string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		left := processesUnder(n.dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s %s: %d processes outlived the gateway by 1 s: %s", n.name, when, len(left), strings.Join(describeProcs(left), "; "))
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		<-time.After(20 * time.Millisecond)
	}
}

// processesUnder lists the live processes whose executable lies under
// dir: the installed adapters, and the copies of themselves they fork.
func processesUnder(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// describeProcs names each process by pid, parent, session and command.
func describeProcs(pids []int) []string {
	var out []string
	for _, pid := range pids {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		var ppid, sid string
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 3 { // state ppid pgrp session
				ppid, sid = f[1], f[3]
			}
		}
		out = append(out, fmt.Sprintf("pid %d ppid %s sid %s %q", pid, ppid, sid, strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " ")))
	}
	return out
}

// soakSample is one reading of a life's figures.
type soakSample struct {
	at         time.Duration // since the soak began
	life       int
	rssKiB     int
	goroutines int
	fds        int
	stopped    bool
}

// sample reads the current life's figures: RSS and descriptors from
// /proc, goroutines and the stop from /metrics.
func (n *soakNode) sample(t testing.TB, at time.Duration) soakSample {
	t.Helper()
	s := soakSample{at: at, life: n.lives}
	pid := n.pid()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("%s: read its status: %v", n.name, err)
	}
	if m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB$`).FindSubmatch(status); m != nil {
		s.rssKiB, _ = strconv.Atoi(string(m[1]))
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("%s: list its descriptors: %v", n.name, err)
	}
	s.fds = len(fds)
	body := metrics(t, n.g)
	s.goroutines = metricInt(t, body, "go_goroutines")
	s.stopped = metricInt(t, body, "gateway_emergency_stop") == 1
	n.samples = append(n.samples, s)
	t.Logf("%s %6.1fs life %d: RSS %6d KiB, goroutines %4d, descriptors %4d, stopped %v",
		n.name, at.Seconds(), s.life, s.rssKiB, s.goroutines, s.fds, s.stopped)
	return s
}

func metricInt(t testing.TB, body, name string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` (\d+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

// The rule of "flat" (docs/testing.md, "The soak"): the reference is the
// second half of the warm-up (the first sixth of the run), once every
// client is connected and working; over the last third, which no kill
// interrupts, each figure's maximum must stay within 25 % of the
// reference's maximum plus a little (4 MiB of RSS, 10 goroutines, 8
// descriptors: a client reconnecting, a GC cycle late). A leak that grows
// with time or with the work done passes it only by being too small to
// matter over the run.
const soakGrowth = 1.25

var soakSlack = map[string]int{"RSS (KiB)": 4096, "goroutines": 10, "descriptors": 8}

// soakFlat applies the rule to n's samples and prints each figure's
// reference and last-third maximum.
func soakFlat(t testing.TB, n *soakNode, plan soakPlan) {
	t.Helper()
	for _, f := range []struct {
		name string
		get  func(soakSample) int
	}{
		{"RSS (KiB)", func(s soakSample) int { return s.rssKiB }},
		{"goroutines", func(s soakSample) int { return s.goroutines }},
		{"descriptors", func(s soakSample) int { return s.fds }},
	} {
		name, get := f.name, f.get
		ref, last, nref, nlast := 0, 0, 0, 0
		for _, s := range n.samples {
			switch {
			case s.at > plan.warm/2 && s.at <= plan.warm:
				ref, nref = max(ref, get(s)), nref+1
			case s.at >= plan.d*2/3:
				last, nlast = max(last, get(s)), nlast+1
			}
		}
		limit := int(float64(ref)*soakGrowth) + soakSlack[name]
		t.Logf("%s %-11s warm-up max %7d (%d samples), last third max %7d (%d samples), limit %7d", n.name, name, ref, nref, last, nlast, limit)
		switch {
		case nref == 0 || nlast == 0:
			t.Errorf("%s %s: no samples in the warm-up or the last third", n.name, name)
		case last > limit:
			t.Errorf("%s %s not flat: the last third reached %d, over %d (warm-up %d × %.2f + %d)", n.name, name, last, limit, ref, soakGrowth, soakSlack[name])
		}
	}
}
