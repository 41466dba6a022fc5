package gateway_test

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// promScrape GETs url as Prometheus would, with bearer when not empty,
// and returns the status, the body and, on 200, the families as
// Prometheus's own text parser reads them (a parse error fails the test).
func promScrape(t *testing.T, url, bearer string) (int, string, map[string]*dto.MetricFamily) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1") // Prometheus 2's Accept, text first
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := (&http.Client{Timeout: waitLong}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, string(body), nil
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("Prometheus's parser refuses %s: %v\n%s", url, err, body)
	}
	return resp.StatusCode, string(body), fams
}

// series is a family's samples by their labels, "k=v,k=v" in the
// parser's order (sorted by name).
func series(fams map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fams[name].GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		out[strings.Join(ls, ",")] = m.GetGauge().GetValue()
	}
	return out
}

// devicesIn are the device labels of every series of every family.
func devicesIn(fams map[string]*dto.MetricFamily) []string {
	var out []string
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "device" && !slices.Contains(out, l.GetValue()) {
					out = append(out, l.GetValue())
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// promtoolCheck runs Debian's `promtool check metrics` (package
// prometheus) on body, as a second opinion on the format and on the
// names' conventions. Without promtool it skips, except in CI, which
// installs it.
//
// Its one finding on the Hub's own figures is known and left as it is:
// gateway_hal_seq is a counter without _total (a name older than this
// test, which dashboards may use). Every other finding fails.
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool (Debian's prometheus) is not installed; .ci/run installs it")
		}
		t.Log("promtool not installed (apt-get install prometheus): only the Go parser checked the scrape")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 3) {
		t.Fatalf("promtool check metrics: %v\n%s", err, out) // 1: it could not parse the scrape
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" && line != `gateway_hal_seq counter metrics should have "_total" suffix` {
			t.Errorf("promtool check metrics: %s", line)
		}
	}
}

// Issue 32 point 5, on the real binary and the sim board: /metrics has
// each device's values with their units and states, as Prometheus's
// parser and promtool read them; a token limited to some devices sees
// only those; a scrape without a token is refused; the values follow
// the devices.
func TestBinaryMetricsDevices(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir())
	admin := readAdminToken(t, g.dir)
	fanOnly := g.addToken(t, "grafana-fan", "read", "--devices", "sim.fan,sim.temperature")
	url := "http://" + g.httpAddr + "/metrics"

	if code, body, _ := promScrape(t, url, ""); code != http.StatusUnauthorized || strings.Contains(body, "gateway_") {
		t.Errorf("a scrape without a token: %d %q, want 401 and no figure", code, body)
	}

	_, body, fams := promScrape(t, url, admin)
	promtoolCheck(t, body)
	sim := []string{"sim.button", "sim.door", "sim.fan", "sim.heater", "sim.led", "sim.meter", "sim.temperature"}
	if got := devicesIn(fams); !slices.Equal(got, sim) {
		t.Errorf("the admin's scrape shows devices %v, want the sim board's %v", got, sim)
	}
	values := series(fams, "gateway_device_value")
	for _, want := range []string{
		"device=sim.fan,quantity=value,unit=%",
		"device=sim.led,quantity=value,unit=",
		"device=sim.door,quantity=value,unit=",
		"device=sim.temperature,quantity=temperature,unit=Cel",
	} {
		if _, ok := values[want]; !ok {
			t.Errorf("no gateway_device_value{%s} in %v", want, values)
		}
	}
	if v := values["device=sim.temperature,quantity=temperature,unit=Cel"]; v < 15 || v > 85 {
		t.Errorf("sim.temperature reads %v °C", v)
	}
	for k := range values {
		if strings.HasPrefix(k, "device=sim.meter,") {
			t.Errorf("the meter's free-text line became a series: %s", k)
		}
	}
	if st := series(fams, "gateway_device_state"); st["device=sim.heater,state=ok"] != 1 || len(st) != 3*len(sim) {
		t.Errorf("gateway_device_state: %v", st)
	}
	if _, ok := fams["gateway_hal_seq"]; !ok {
		t.Error("the admin's scrape lost the Hub's figures")
	}

	_, body, fams = promScrape(t, url, fanOnly)
	promtoolCheck(t, body)
	if got := devicesIn(fams); !slices.Equal(got, []string{"sim.fan", "sim.temperature"}) {
		t.Errorf("a token limited to sim.fan and sim.temperature sees %v", got)
	}
	if _, ok := fams["gateway_hal_seq"]; ok {
		t.Error("a limited token is shown the Hub-wide figures")
	}

	adminArgs := []string{"--hub", g.ws, "--token", admin}
	gwOK(t, append([]string{"write", "sim.fan", "40"}, adminArgs...)...)
	gwOK(t, append([]string{"write", "sim.door", "true"}, adminArgs...)...)
	before := time.Now()
	_, _, fams = promScrape(t, url, fanOnly)
	if v := series(fams, "gateway_device_value")["device=sim.fan,quantity=value,unit=%"]; v != 40 {
		t.Errorf("after writing sim.fan 40 the scrape says %v", v)
	}
	if ts := series(fams, "gateway_device_value_timestamp_seconds")["device=sim.fan"]; ts < float64(before.Add(-time.Minute).Unix()) || ts > float64(before.Unix()+1) {
		t.Errorf("sim.fan's value timestamp %v, not the write's time (about %d)", ts, before.Unix())
	}
	_, _, fams = promScrape(t, url, admin)
	if v := series(fams, "gateway_device_value")["device=sim.door,quantity=value,unit="]; v != 1 {
		t.Errorf("after opening sim.door the scrape says %v, want 1", v)
	}
}

// Issue 32 point 5: hub.metricsPublic serves the Hub's figures without a
// token, never a device's; a token still brings its devices, and a token
// the gateway does not know is refused rather than served as anyone.
func TestBinaryMetricsPublic(t *testing.T) {
	t.Parallel()
	config := writeConfig(t, "board: sim\nhub:\n  metricsPublic: true\n")
	g := startGateway(t, t.TempDir(), "--config", config)
	url := "http://" + g.httpAddr + "/metrics"
	code, body, fams := promScrape(t, url, "")
	if code != http.StatusOK {
		t.Fatalf("public /metrics without a token: %d %q", code, body)
	}
	promtoolCheck(t, body)
	if got := devicesIn(fams); len(got) != 0 {
		t.Errorf("public /metrics without a token shows devices %v", got)
	}
	if _, ok := fams["gateway_hal_seq"]; !ok {
		t.Error("public /metrics lost the Hub's figures")
	}
	if _, _, fams := promScrape(t, url, readAdminToken(t, g.dir)); len(devicesIn(fams)) != 7 {
		t.Errorf("public /metrics with the admin token shows devices %v, want the sim board's 7", devicesIn(fams))
	}
	if code, _, _ := promScrape(t, url, "gw_"+strings.Repeat("0", 40)); code != http.StatusUnauthorized {
		t.Errorf("public /metrics with an unknown token: %d, want 401", code)
	}
}
