//go:build linux

package modbussim

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// Debian's mbpoll (libmodbus) as a second opinion on the simulator. Its
// defaults: 1-based addresses (-0 for wire addresses), even parity (-P
// none for 8N1), CDAB word order for 32-bit values (-B for ABCD).

// mbpoll runs mbpoll once with the target's flags and args, and returns
// its output, stdout and stderr together.
func mbpoll(t *testing.T, target []string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("mbpoll"); err != nil {
		t.Fatal("mbpoll is not installed: apt-get install mbpoll (CI's .ci/run does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), expectWait)
	defer cancel()
	flags := append([]string{"-0"}, target[:len(target)-1]...)
	all := append(append(flags, args...), target[len(target)-1])
	if i := slices.Index(args, "--"); i >= 0 { // values to write go after the device
		all = append(append(append(flags, args[:i]...), target[len(target)-1]), args[i+1:]...)
	}
	out, _ := exec.CommandContext(ctx, "mbpoll", all...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mbpoll %s: %v", strings.Join(all, " "), ctx.Err())
	}
	return string(out)
}

func TestMbpoll(t *testing.T) {
	reads := []struct {
		name string
		args []string
		want []string // lines its output must hold
	}{
		{"holding as hex", []string{"-a", "1", "-t", "4:hex", "-r", "100", "-c", "2", "-1"}, []string{"[100]: \t0x42F6", "[101]: \t0xE979"}},
		{"holding as a float, ABCD", []string{"-a", "1", "-t", "4:float", "-B", "-r", "100", "-c", "1", "-1"}, []string{"[100]: \t123.456"}},
		{"input", []string{"-a", "1", "-t", "3", "-r", "0", "-c", "2", "-1"}, []string{"[0]: \t17000", "[1]: \t16"}},
		{"coils", []string{"-a", "1", "-t", "0", "-r", "0", "-c", "3", "-1"}, []string{"[0]: \t1", "[1]: \t0", "[2]: \t1"}},
		{"discrete", []string{"-a", "1", "-t", "1", "-r", "10", "-c", "1", "-1"}, []string{"[10]: \t1"}},
		{"unit 2", []string{"-a", "2", "-t", "4", "-r", "0", "-c", "1", "-1"}, []string{"[0]: \t7"}},
		{"undefined address", []string{"-a", "1", "-t", "4", "-r", "150", "-c", "1", "-1"}, []string{"Read output (holding) register failed: Illegal data address"}},
		{"unknown unit", []string{"-a", "9", "-t", "4", "-r", "0", "-c", "1", "-1", "-o", "0.3"}, []string{"Read output (holding) register failed: Connection timed out"}},
	}
	targets := []struct {
		name  string
		start func(t *testing.T) (*Sim, []string)
	}{
		{"tcp", func(t *testing.T) (*Sim, []string) {
			sim := StartTCP(t, bench())
			host, port, _ := strings.Cut(sim.Addr, ":")
			return sim, []string{"-m", "tcp", "-p", port, host}
		}},
		{"rtu", func(t *testing.T) (*Sim, []string) {
			sim, relay := StartRTUBus(t, 19200, bench())
			return sim, []string{"-m", "rtu", "-b", "19200", "-P", "none", relay.Gateway}
		}},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			sim, target := tg.start(t)
			for _, r := range reads {
				out := mbpoll(t, target, r.args...)
				for _, line := range r.want {
					if !strings.Contains(out, line) {
						t.Errorf("%s: mbpoll's output lacks %q:\n%s", r.name, line, out)
					}
				}
			}
			out := mbpoll(t, target, "-a", "1", "-t", "4", "-r", "200", "--", "1234", "65535")
			if !strings.Contains(out, "Written 2 references.") {
				t.Errorf("write holding 200+2: %s", out)
			}
			if got := sim.Get(1, Holding, 200, 2); !slices.Equal(got, []uint16{1234, 65535}) {
				t.Errorf("after mbpoll wrote 1234 65535: holding 200+2 = %v", got)
			}
			out = mbpoll(t, target, "-a", "1", "-t", "0", "-r", "1", "--", "1")
			if got := sim.Get(1, Coil, 0, 3); !slices.Equal(got, []uint16{1, 1, 1}) {
				t.Errorf("after mbpoll wrote coil 1: coils 0+3 = %v (%s)", got, out)
			}
			sim.Silent(1)
			out = mbpoll(t, target, "-a", "1", "-t", "4", "-r", "100", "-c", "1", "-1", "-o", "0.3")
			if !strings.Contains(out, "Connection timed out") {
				t.Errorf("silent unit: mbpoll said:\n%s", out)
			}
			sim.Answer(1)
			sim.Delay(1, 100*time.Millisecond)
			out = mbpoll(t, target, "-a", "1", "-t", "4:hex", "-r", "100", "-c", "1", "-1")
			if !strings.Contains(out, "[100]: \t0x42F6") {
				t.Errorf("delayed unit: mbpoll said:\n%s", out)
			}
		})
	}
}
