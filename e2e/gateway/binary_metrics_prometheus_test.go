package gateway_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Issue 32 point 5, as its users meet it: Debian's Prometheus runs the
// scrape job of docs/prometheus.md (and promtool checks its alerting
// rules), as written but for its paths and address, against the gateway's HTTPS listener with its self-signed
// certificate and a token file; the target is up, and every query of
// docs/examples/grafana-dashboard.json runs, those the sim board fills
// with its devices' series, a write showing in them.
func TestBinaryMetricsPrometheus(t *testing.T) {
	t.Parallel()
	prom := lookPathOrCI(t, "prometheus", "Debian's prometheus")
	g := startGateway(t, t.TempDir(), "--wss", "127.0.0.1:0")
	wss := regexp.MustCompile(`msg=listening transport=wss url=\S+ addr=(\S+)`).FindStringSubmatch(g.err.text())
	if wss == nil {
		t.Fatalf("no wss listener in the log:\n%s", g.err.text())
	}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "gateway.token")
	tok := g.addToken(t, "prometheus", "read", "--kind", "service")
	if err := os.WriteFile(tokenFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := strings.NewReplacer(
		"/etc/prometheus/gateway.token", tokenFile,
		"/etc/prometheus/gateway-cert.pem", filepath.Join(g.dir, "tls", "cert.pem"),
		"server_name: pi ", "server_name: localhost ",
		"'gw.lan:7752'", "'"+wss[1]+"'",
		"scrape_interval: 15s", "scrape_interval: 1s",
	).Replace(docsBlock(t, "scrape-config"))
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	promtool := filepath.Join(filepath.Dir(prom), "promtool")
	if out, err := exec.Command(promtool, "check", "config", configFile).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s\n%s", err, out, config)
	}
	rulesFile := filepath.Join(dir, "gateway-rules.yml")
	if err := os.WriteFile(rulesFile, []byte(docsBlock(t, "alert-rules")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", rulesFile).CombinedOutput(); err != nil || !strings.Contains(string(out), "SUCCESS: 3 rules found") {
		t.Errorf("promtool check rules on the docs' alerting rules: %v\n%s", err, out)
	}
	api := startPrometheus(t, prom, configFile, dir)

	gwOK(t, "write", "sim.fan", "40", "--hub", g.ws, "--token", readAdminToken(t, g.dir))
	promWait(t, api, `gateway_device_value{device="sim.fan"} == 40`)
	if up := promQuery(t, api, `up{job="gateway"}`); len(up) != 1 || up[0].Value[1] != "1" {
		t.Fatalf("the gateway's target: %+v", up)
	}
	// The panels the sim board fills, and how many series each has.
	want := map[string]int{
		"Emergency stop": 1, "Age of each device's value": 6, "Temperature": 1,
		"Percent: duty cycles, humidity": 1, "Switches and inputs": 4, "Device state": 7,
		"Other quantities (unit in the legend)": 0, "Enumerated values (current member)": 0,
	}
	for title, expr := range dashboardQueries(t) {
		n, ok := want[title]
		if !ok {
			t.Errorf("the dashboard's panel %q is not in this test", title)
			continue
		}
		res := promQuery(t, api, strings.ReplaceAll(expr, "$device", ".*"))
		if len(res) != n {
			t.Errorf("panel %q: %d series, want %d: %s\n%+v", title, len(res), n, expr, res)
		}
		for _, r := range res {
			if strings.Contains(expr, "group_left (label)") && r.Metric["label"] == "" {
				t.Errorf("panel %q: a series without its device's label: %+v", title, r)
			}
		}
	}
}

// lookPathOrCI finds a program, or skips the test without it, except in
// CI, which installs it.
func lookPathOrCI(t *testing.T, name, what string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run installs it", what)
		}
		t.Skipf("%s is not installed (apt-get install prometheus)", what)
	}
	return p
}

// docsBlock is a YAML block of docs/prometheus.md: the one after the
// comment <!-- marker: ... -->.
func docsBlock(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "prometheus.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- " + marker + ":[^>]*-->\n```yaml\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatalf("docs/prometheus.md has no %s block", marker)
	}
	return string(m[1])
}

// dashboardQueries are the example dashboard's queries by panel title.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("docs/examples/grafana-dashboard.json: %v", err)
	}
	out := map[string]string{}
	for _, p := range d.Panels {
		if len(p.Targets) != 1 || p.Targets[0].Expr == "" {
			t.Fatalf("panel %q: want one query, got %+v", p.Title, p.Targets)
		}
		out[p.Title] = p.Targets[0].Expr
	}
	return out
}

// startPrometheus runs Prometheus on a free loopback port with its data
// in dir, until the test ends, and returns its API's base URL once it is
// ready.
func startPrometheus(t *testing.T, prom, configFile, dir string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // Prometheus cannot report a port it chose: this one was free a moment ago
	c := newChild("prometheus", exec.Command(prom, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=info"))
	c.start(t)
	c.err.waitFor(t, 0, `Server is ready to receive web requests`, waitLong)
	return "http://" + addr
}

// promResult is one series of an instant query's answer.
type promResult struct {
	Metric map[string]string
	Value  [2]any // time, value as a string
}

// promQuery runs an instant query through Prometheus's HTTP API.
func promQuery(t *testing.T, api, expr string) []promResult {
	t.Helper()
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string
		Error  string
		Data   struct{ Result []promResult }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "success" {
		t.Fatalf("query %s: %d %v %s", expr, resp.StatusCode, err, out.Error)
	}
	return out.Data.Result
}

// promWait runs a query until it has an answer: the scrape that brings
// it happens on Prometheus's own schedule, not on an event the test sees.
func promWait(t *testing.T, api, expr string) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for len(promQuery(t, api, expr)) == 0 {
		if time.Now().After(deadline) {
			resp, err := http.Get(api + "/api/v1/targets")
			var body string
			if err == nil {
				var b strings.Builder
				fmt.Fprint(&b, resp.Status)
				buf := make([]byte, 4096)
				n, _ := resp.Body.Read(buf)
				b.Write(buf[:n])
				resp.Body.Close()
				body = b.String()
			}
			t.Fatalf("Prometheus never answered %s; targets: %s", expr, body)
		}
		<-time.After(100 * time.Millisecond) // a poll: the scrape is Prometheus's, every second
	}
}
