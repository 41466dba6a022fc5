package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAdapterLogs: the adapters view shows an adapter's last 20 log lines
// once its "last log lines" is opened. The adapter, "ghost", is enabled
// but not installed (so failed, never run); its log is one an earlier
// run would have left in the state directory, which is what the view
// reads through gateway/adapters.logs.
func TestAdapterLogs(t *testing.T) {
	chromiumPath(t)
	state := t.TempDir()
	logs := filepath.Join(state, "adapter-logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range 25 {
		lines = append(lines, fmt.Sprintf("2026-12-01T00:00:%02d.000000Z line %d", i, i))
	}
	if err := os.WriteFile(filepath.Join(logs, "ghost.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(cfg, []byte("board: sim\nadapters:\n  enabled: [ghost]\n  user: nobody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, state, "127.0.0.1:0", "127.0.0.1:0", "--config", cfg)
	p := logIn(t, g, g.adminToken(t))

	ghost := chromedp.CSS(`[data-test="adapter-logs"][data-adapter="ghost"]`)
	p.do(chromedp.Click(hook("nav-adapters")), chromedp.WaitVisible(ghost))
	if open := eval[bool](p, `document.querySelector('[data-test="adapter-logs"][data-adapter="ghost"]').open`); open {
		t.Error("the log lines are open before they are asked for")
	}
	p.do(chromedp.Click(ghost + " summary"))
	text := p.waitText(ghost, `line 5\n[^]*line 24$`)
	if strings.Contains(text, "line 4\n") || !strings.Contains(text, lines[5]) {
		t.Errorf("the log lines show %q; want the last 20, stamped, line 5 to 24", text)
	}
}
