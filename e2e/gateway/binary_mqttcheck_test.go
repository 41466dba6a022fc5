package gateway_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
	"github.com/openhal/gateway/internal/supervisor"
)

// TestBinaryMQTTRefusedEcho: a refused command of 1 MiB is answered on
// its result topic with the first 256 bytes of its value and its length,
// not echoed whole (issue 28).
func TestBinaryMQTTRefusedEcho(t *testing.T) {
	t.Parallel()
	_, port := startBroker(t, mosquittotest.Options{})
	g, _, _ := mqttGateway(t, mqttAdapter(t), mqttSettings(port, "echo"))
	b := &mqttBench{g: g, id: "echo", port: port, s: subscribe(t, port)}
	b.marker(t)
	value := `"` + strings.Repeat("x", 1<<20) + `"`
	file := filepath.Join(t.TempDir(), "value.json")
	if err := os.WriteFile(file, []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := b.s.out.len()
	args := []string{"-h", "127.0.0.1", "-p", fmt.Sprint(port), "-V", "mqttv5", "-q", "1", "-t", b.tp.Set(b.id, "sim.meter"), "-f", file}
	if out, err := exec.Command(mqttTool(t, "mosquitto_pub"), args...).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_pub -f: %v\n%s", err, out)
	}
	i, r := b.result(t, mark, "sim.meter")
	line := b.s.msgs(i, q(b.tp.Result(b.id, "sim.meter")))[0]
	if r.Status != "refused" || r.Error == nil || r.Value != nil {
		t.Errorf("result %+v: want refused, with an error and no whole value", r)
	}
	if want := fmt.Sprintf(`"valueStart":"\"%s","valueBytes":%d,`, strings.Repeat("x", 255), len(value)); !strings.Contains(line, want) {
		t.Errorf("result %.400s: want %s", line, want)
	}
	if len(line) > 1024 {
		t.Errorf("result of %d bytes, want the value cut to 256", len(line))
	}
}

// TestBinaryCheckAdapterUser: `gateway check` refuses, naming
// adapters.user, what `gateway run` refuses at start: enabled adapters
// whose user does not exist or is root (when the gateway may switch
// users, as root and as the installed service; otherwise check warns and
// run starts them as itself). A user that exists passes both.
func TestBinaryCheckAdapterUser(t *testing.T) {
	t.Parallel()
	gatewayBinary(t)
	refuses := supervisor.CanSwitchUsers()
	missing := fmt.Sprintf("no-such-user-%d", os.Getpid())
	for _, tc := range []struct {
		name, user, says string
		bad              bool
	}{
		{"missing", missing, `adapters run as user "` + missing + `": user: unknown user ` + missing, true},
		{"root", "root", `adapters run as user "root": it is root`, true},
		{"nobody", "nobody", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "gateway.yaml")
			conf := "board: sim\nadapters:\n  enabled: [mqtt]\n  user: " + tc.user + "\n"
			if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			check := gw(t, "check", "--config", cfg)
			switch {
			case !tc.bad:
				if check.code != 0 || check.stderr != "" {
					t.Errorf("check: exit %d, stderr %q; want ok", check.code, check.stderr)
				}
				return
			case refuses:
				wantOneLineError(t, check, cfg+": adapters.user: "+tc.says)
			default:
				if check.code != 0 || !strings.Contains(check.stderr, "gateway: warning: adapters.user: "+tc.says) {
					t.Errorf("check: exit %d, stderr %q; want ok with a warning naming adapters.user", check.code, check.stderr)
				}
				return
			}
			run := gw(t, "run", "--config", cfg, "--state-dir", filepath.Join(dir, "state"), "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0")
			if run.code == 0 || !strings.Contains(run.stderr, tc.says) {
				t.Errorf("run: exit %d, stderr %q; want the refusal check gave", run.code, run.stderr)
			}
		})
	}
}
