package supervisor

import (
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/supervisor/restart"
)

// Logs answers a running adapter's latest standard error lines, as
// stored (stamped), the newest last, and refuses an adapter that is not
// enabled.
func TestLogs(t *testing.T) {
	b := newBench(t, spec{name: "ta", args: []string{"--script", `[{"stderr":"first"},{"stderr":"second"}]`}})
	b.start()
	b.waitState("ta", restart.Running)
	// The adapter is another process and its standard error a pipe: there
	// is no event to wait on but the lines themselves.
	var lines []string
	deadline := time.Now().Add(wait)
	for {
		var err error
		if lines, err = b.sup.Logs("ta", 200); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(lines, "\n"), " second") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log never held the second line; it holds:\n%s", strings.Join(lines, "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	first, second := -1, -1
	for i, l := range lines {
		switch {
		case strings.HasSuffix(l, " first"):
			first = i
		case strings.HasSuffix(l, " second"):
			second = i
		}
	}
	if first < 0 || second < first || !strings.HasPrefix(lines[first], "20") {
		t.Errorf("lines %q: want stamped lines, first before second", lines)
	}
	if one, err := b.sup.Logs("ta", 1); err != nil || len(one) != 1 || !strings.HasPrefix(one[0], "20") {
		t.Errorf("Logs(ta, 1) = %q, %v: want one stamped line", one, err)
	}
	if _, err := b.sup.Logs("nope", 5); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Logs of an adapter not enabled: %v", err)
	}
}
