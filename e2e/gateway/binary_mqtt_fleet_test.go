package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/homeassistant"
	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
)

// The fleet (issue 16, point 7): N sim gateways on one mosquitto,
// measured. The figures go to docs/mqtt.md, "A fleet".

// fleetMember is one gateway of the fleet.
type fleetMember struct {
	*mqttBench
	adapterPid int
}

// clockTick is the kernel's USER_HZ, the unit of /proc/<pid>/stat's
// times: 100 on every Linux architecture the gateway runs on.
const clockTick = 100

// cpuTicks is utime + stime of pid, in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("CPU of pid %d: %v", pid, err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // from field 3, state
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	return utime + stime
}

// fleetCPU is each member's CPU over a window, in percent of one core:
// the gateway's and its adapter's.
type fleetCPU struct{ gateway, adapter []float64 }

// sampleCPU reads every member's CPU times now; the returned function
// reads them again and gives the use in between.
func sampleCPU(t *testing.T, fleet []fleetMember) func() fleetCPU {
	t.Helper()
	start := time.Now()
	g0, a0 := make([]int64, len(fleet)), make([]int64, len(fleet))
	for i, m := range fleet {
		g0[i], a0[i] = cpuTicks(t, m.g.cmd.Process.Pid), cpuTicks(t, m.adapterPid)
	}
	return func() fleetCPU {
		secs := time.Since(start).Seconds()
		var c fleetCPU
		for i, m := range fleet {
			pct := func(now, then int64) float64 { return float64(now-then) / clockTick / secs * 100 }
			c.gateway = append(c.gateway, pct(cpuTicks(t, m.g.cmd.Process.Pid), g0[i]))
			c.adapter = append(c.adapter, pct(cpuTicks(t, m.adapterPid), a0[i]))
		}
		return c
	}
}

// summary is "mean x%, max y%".
func summary(v []float64) string {
	var sum float64
	for _, x := range v {
		sum += x
	}
	return fmt.Sprintf("mean %.2f%%, max %.2f%%", sum/float64(len(v)), slices.Max(v))
}

// dataLines counts the messages (not mosquitto_sub's debug lines) seen
// from line index from to line index to.
func (s *mqttSub) dataLines(from, to int) int {
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	n := 0
	for _, l := range s.out.lines[from:min(to, len(s.out.lines))] {
		if strings.HasPrefix(l, "0 ") || strings.HasPrefix(l, "1 ") {
			n++
		}
	}
	return n
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// TestBinaryMQTTFleet starts N sim gateways, each its own process, state
// directory and ports, each with its mqtt adapter (gateway ids gw01..),
// on one mosquitto: every device of every gateway is discovered, a
// command to one gateway reaches it alone, and it prints the messages
// per second through the broker and the CPU of each gateway and adapter
// (from /proc/<pid>/stat), idle and under commands. Skipped unless
// FLEET=N is set (`make test-fleet` sets 20): it takes a minute or two
// and the machine's whole CPU. FLEET_RATE is the commands per second sent
// to each gateway during the load window (default 5), FLEET_WINDOW the
// length of the idle and load windows (default 10s).
func TestBinaryMQTTFleet(t *testing.T) {
	if os.Getenv("FLEET") == "" {
		t.Skip("the fleet test runs with FLEET=N (make test-fleet)")
	}
	n := envInt(t, "FLEET", 20)
	rate := envInt(t, "FLEET_RATE", 5)
	window := 10 * time.Second
	if v := os.Getenv("FLEET_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("FLEET_WINDOW=%q: want a duration", v)
		}
		window = d
	}
	broker, port := startBroker(t, mosquittotest.Options{})
	src := mqttAdapter(t)
	started := time.Now()
	fleet := make([]fleetMember, n)
	for i := range fleet {
		id := fmt.Sprintf("gw%02d", i+1)
		g, pid, _ := mqttGateway(t, src, mqttSettings(port, id))
		fleet[i] = fleetMember{mqttBench: &mqttBench{g: g, id: id, port: port}, adapterPid: pid}
	}
	t.Logf("%d gateways started in %s", n, time.Since(started).Round(time.Millisecond))

	s := subscribe(t, port)
	for _, m := range fleet {
		m.s = s
		s.msg(t, 0, q(m.tp.Status(m.id)), "online")
		m.discovered(t, 0)
	}
	t.Logf("every device of the %d gateways discovered with its state and availability, %s after the first start (sim.meter's state is its first reading, 5 s in)",
		n, time.Since(started).Round(time.Millisecond))

	fleetOneTarget(t, s, fleet, port)

	cpu := sampleCPU(t, fleet)
	mark := s.out.len()
	<-time.After(window) // a measuring window, not a wait for an event
	idle := cpu()
	idleMsgs := float64(s.dataLines(mark, s.out.len())) / window.Seconds()
	t.Logf("idle, %s: %.1f messages/s through the broker; CPU per gateway %s, per adapter %s",
		window, idleMsgs, summary(idle.gateway), summary(idle.adapter))

	fleetLoad(t, broker, s, fleet, port, rate, window)
}

// fleetOneTarget: a command to one gateway reaches only it: it is applied
// there, and no other gateway's sim.led moves or answers.
func fleetOneTarget(t *testing.T, s *mqttSub, fleet []fleetMember, port int) {
	t.Helper()
	target := fleet[len(fleet)/2]
	mark := s.out.len()
	publish(t, port, target.tp.Set(target.id, "sim.led"), "true", false)
	if _, r := target.result(t, mark, "sim.led"); r.Status != "applied" {
		t.Fatalf("%s sim.led result %+v, want applied", target.id, r)
	}
	s.msg(t, mark, q(target.tp.State(target.id, "sim.led")), "true")
	for _, m := range fleet {
		m.wantRead(t, "sim.led", strconv.FormatBool(m.id == target.id))
	}
	moved := s.msgs(mark, q(homeassistant.DefaultPrefix)+`/gw\d+/sim\.led/(?:state|result)`)
	if len(moved) != 2 {
		t.Errorf("sim.led messages after a command to %s: %q, want its result and state only", target.id, moved)
	}
	t.Logf("a command to %s reached it alone", target.id)
}

// fleetLoad sends rate commands a second to each gateway's sim.led
// (alternately true and false, so that each one changes it) for window,
// one mosquitto_pub -l per gateway, then waits for every result; it
// prints the messages per second through the broker and the CPU.
func fleetLoad(t *testing.T, broker *mosquittotest.Broker, s *mqttSub, fleet []fleetMember, port, rate int, window time.Duration) {
	t.Helper()
	pubs := publishers(t, fleet, port)
	// Their input stays open until every result is in: mosquitto_pub
	// may end at its input's end before its last messages are through.
	defer func() {
		for _, w := range pubs {
			w.Close()
		}
	}()
	cpu := sampleCPU(t, fleet)
	mark := s.out.len()
	start := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	sent, value := 0, false
	for time.Since(start) < window {
		<-tick.C // pacing the load
		for _, w := range pubs {
			if _, err := fmt.Fprintf(w, "%t\n", !value); err != nil {
				t.Fatalf("mosquitto_pub: %v", err)
			}
		}
		value = !value
		sent += len(pubs)
	}
	tick.Stop()
	done, dropped := awaitResults(t, broker, s, mark, sent)
	took := time.Since(start)
	load := cpu()
	msgs := s.dataLines(mark, done)
	t.Logf("load, %d commands/s to each of %d gateways: %d commands, %d answered and %d dropped by an overloaded bridge (counted) in %s; %.1f messages/s through the broker; CPU per gateway %s, per adapter %s",
		rate, len(fleet), sent, sent-dropped, dropped, took.Round(time.Millisecond), float64(msgs)/took.Seconds(), summary(load.gateway), summary(load.adapter))
}

// publishers starts one `mosquitto_pub -l` per gateway, publishing each
// line written to it on the gateway's sim.led/set at QoS 1.
func publishers(t *testing.T, fleet []fleetMember, port int) []io.WriteCloser {
	t.Helper()
	pubs := make([]io.WriteCloser, len(fleet))
	for i, m := range fleet {
		cmd := exec.Command(mqttTool(t, "mosquitto_pub"), "-h", "127.0.0.1", "-p", fmt.Sprint(port), "-V", "mqttv5", "-q", "1",
			"-t", m.tp.Set(m.id, "sim.led"), "-l")
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		newChild("mosquitto_pub "+m.id, cmd).start(t)
		pubs[i] = w
	}
	return pubs
}

// awaitResults waits until each of the sent sim.led commands from line
// mark on is answered or counted as dropped by its bridge (a bridge's
// queue of commands waiting for the Hub is bounded: an overloaded one
// drops the newest and counts it in commandsDropped), checks that every
// answer is applied, and returns the index after the last line read and
// the number dropped. A command lost shows each gateway's counts and the
// broker's words.
func awaitResults(t *testing.T, broker *mosquittotest.Broker, s *mqttSub, mark, sent int) (int, int) {
	t.Helper()
	done, answered, applied := mark, 0, 0
	per, dropped := map[string]int{}, map[string]int{}
	pattern := `^[01] ` + q(homeassistant.DefaultPrefix) + `/(gw\d+)/(sim\.led/result|_bridge/state) (.*)$`
	deadline := time.Now().Add(waitLong)
	for answered+sum(dropped) < sent {
		i, m, err := s.out.await(done, pattern, time.Until(deadline))
		if err != nil {
			t.Fatalf("%d of %d commands answered, %d dropped: %v\nanswers by gateway: %v\ndropped by gateway: %v\nbroker: %s",
				answered, sent, sum(dropped), err, per, dropped, brokerWarnings(broker))
		}
		done = i + 1
		if m[2] == "_bridge/state" {
			var st struct{ CommandsDropped int }
			if err := json.Unmarshal([]byte(m[3]), &st); err != nil {
				t.Fatalf("%s _bridge/state %q: %v", m[1], m[3], err)
			}
			dropped[m[1]] = st.CommandsDropped
			continue
		}
		answered++
		per[m[1]]++
		if strings.Contains(m[3], `"status":"applied"`) {
			applied++
		}
	}
	if applied != answered {
		t.Errorf("%d of %d commands answered were applied", applied, answered)
	}
	return done, sum(dropped)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// brokerWarnings are the lines of mosquitto's log that are not about a
// connection coming or going.
func brokerWarnings(b *mosquittotest.Broker) string {
	var out []string
	for _, l := range strings.Split(b.Log(), "\n") {
		if !strings.Contains(l, "New connection") && !strings.Contains(l, "New client connected") &&
			!strings.Contains(l, "disconnected") && !strings.Contains(l, "closed its connection") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
