package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestBinaryStopVisibleEverywhere is issue 13's first point on the real
// binary: after `gateway stop`, devices, confirm list, status, a new
// watch and /healthz all say the gateway is stopped, a running watch says
// it as it happens; after a crash and a restart with the stop still
// latched they still do; after `gateway resume` they stop saying it.
func TestBinaryStopVisibleEverywhere(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	admin := func(g *gateway, args ...string) []string { return append(args, "--hub", g.ws, "--state-dir", dir) }
	banner := `^EMERGENCY STOP engaged by operator admin at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+: bench fire \(only safe values can be written until an admin runs gateway resume\)$`
	stoppedLine := `^stopped by operator admin since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`

	checkNotStopped(t, g, admin)
	w, _ := watchProc(t, admin(g)...)
	gwOK(t, admin(g, "stop", "--reason", "bench fire")...)
	w.out.waitFor(t, 0, watchTS+`EMERGENCY STOP engaged by operator admin: bench fire; safe values applied to sim\.fan, sim\.heater, sim\.led; left as they are: sim\.meter \(a line instrument: `, waitLong)
	checkStopped(t, g, admin, banner, stoppedLine)

	// A crash, and a new run on the same state directory: the stop is
	// still latched, and everything still says so.
	g.kill(t)
	g = startGateway(t, dir)
	checkStopped(t, g, admin, banner, stoppedLine)

	w, _ = watchProc(t, admin(g)...)
	gwOK(t, admin(g, "resume")...)
	w.out.waitFor(t, 0, watchTS+`emergency stop lifted by operator admin: writes are accepted again$`, waitLong)
	checkNotStopped(t, g, admin)
}

// checkStopped checks that every command, a new watch and /healthz say
// the stop is engaged: the banner first (not in --json), the stop line in
// the health's body with the status code still 200.
func checkStopped(t *testing.T, g *gateway, admin func(*gateway, ...string) []string, banner, healthLine string) {
	t.Helper()
	re := regexp.MustCompile(banner)
	for _, cmd := range [][]string{{"devices"}, {"confirm", "list"}, {"status"}} {
		out := gwOK(t, admin(g, cmd...)...)
		if line, _, _ := strings.Cut(out, "\n"); !re.MatchString(line) {
			t.Errorf("gateway %s while stopped printed\n%s\nwant the banner first", strings.Join(cmd, " "), out)
		}
		out = gwOK(t, admin(g, append(cmd, "--json")...)...)
		if strings.Contains(out, "EMERGENCY STOP") || !strings.HasPrefix(out, "{") {
			t.Errorf("gateway %s --json while stopped printed %q: the banner is not JSON", strings.Join(cmd, " "), out)
		}
	}
	var st statusReport
	if err := json.Unmarshal([]byte(gwOK(t, admin(g, "status", "--json")...)), &st); err != nil || st.Stopped == nil || st.Stopped.Reason != "bench fire" {
		t.Errorf("status --json while stopped: %+v (%v)", st.Stopped, err)
	}
	w := startChild(t, admin(g, "watch")...)
	from, _ := w.out.waitFor(t, 0, watchTS+`connected to `, waitLong)
	w.out.waitFor(t, from+1, watchTS+banner[1:], waitLong)

	code, body := healthz(t, g)
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if code != http.StatusOK || len(lines) != 2 || lines[0] != "ok" || !regexp.MustCompile(healthLine).MatchString(lines[1]) {
		t.Errorf("/healthz while stopped: %d %q, want 200 ok and a line matching %s", code, body, healthLine)
	}
}

// checkNotStopped checks that nothing says stopped.
func checkNotStopped(t *testing.T, g *gateway, admin func(*gateway, ...string) []string) {
	t.Helper()
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"devices"}, `^ID\s+KIND`},
		{[]string{"confirm", "list"}, `^ID\s+DEVICE`},
		{[]string{"status"}, `^running: no emergency stop$`},
	} {
		out := gwOK(t, admin(g, tc.cmd...)...)
		if line, _, _ := strings.Cut(out, "\n"); !regexp.MustCompile(tc.want).MatchString(line) || strings.Contains(out, "EMERGENCY") {
			t.Errorf("gateway %s when not stopped printed\n%s", strings.Join(tc.cmd, " "), out)
		}
	}
	if code, body := healthz(t, g); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz when not stopped: %d %q", code, body)
	}
}

func healthz(t *testing.T, g *gateway) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + g.httpAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestBinaryStatusLimitedToken: `gateway status` with a token limited to
// sim.led, even an admin one, tells nothing of the other devices: not
// their number, their faults, the confirmations waiting on them, nor the
// adapters; `watch` of a hidden device says what it says of one that is
// not there.
func TestBinaryStatusLimitedToken(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	agent := g.addToken(t, "bot", "control_low")
	gwOK(t, "write", "sim.heater", "true", "--reason", "preheat", "--hub", g.tcp, "--token", agent) // pending
	tok := g.addToken(t, "led-admin", "admin", "--devices", "sim.led")
	hub := []string{"--hub", g.tcp, "--token", tok}

	out := gwOK(t, append([]string{"status", "--json"}, hub...)...)
	var st statusReport
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json printed %q (%v)", out, err)
	}
	if st.Devices.Total != 1 || st.Confirmations.Pending != 0 || st.Adapters != nil || st.Board != "sim" {
		t.Errorf("status --json for a token limited to sim.led: %s", out)
	}
	text := gwOK(t, append([]string{"status"}, hub...)...)
	for _, hidden := range []string{"sim.heater", "sim.door", "sim.temperature", "preheat"} {
		if strings.Contains(out, hidden) || strings.Contains(text, hidden) {
			t.Errorf("status for a token limited to sim.led tells of %s:\n%s\n%s", hidden, out, text)
		}
	}
	for _, id := range []string{"sim.heater", "sim.nope"} {
		wantOneLineError(t, gw(t, append([]string{"watch", id}, hub...)...),
			"gateway: watch: no device "+id+" on this gateway for this token (gateway devices lists them)")
	}
	if r := gw(t, append([]string{"watch", "Sim.LED!"}, hub...)...); r.code != 2 || !strings.HasPrefix(r.stderr, `gateway: watch: "Sim.LED!" is not a device id`) || r.stdout != "" {
		t.Errorf("watch Sim.LED!: exit %d, stdout %q, stderr %q; want a usage error, exit 2", r.code, r.stdout, r.stderr)
	}
}
