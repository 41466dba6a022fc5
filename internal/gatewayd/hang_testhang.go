//go:build testhang

package gatewayd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/supervisor"
)

// hangEnv names the test-only fault injection: GATEWAY_TEST_HANG=
// <part>:<delay>, part hub, supervisor or audit. After delay that part
// wedges for good, so that tests (and the real-systemd test) see the
// watchdog stop petting and systemd restart the gateway.
const hangEnv = "GATEWAY_TEST_HANG"

// injectHang arms the fault GATEWAY_TEST_HANG asks for; a malformed value
// is an error, so that a test never runs without the fault it meant.
func injectHang(ctx context.Context, hub *halhub.Hub, sup *supervisor.Supervisor, auditLog *audit.Log, log *slog.Logger) error {
	v := os.Getenv(hangEnv)
	if v == "" {
		return nil
	}
	part, delayText, ok := strings.Cut(v, ":")
	delay, err := time.ParseDuration(delayText)
	if !ok || err != nil || delay < 0 {
		return fmt.Errorf("%s=%q: want <part>:<delay>, as hub:5s", hangEnv, v)
	}
	hangs := map[string]func(){
		"hub":        hub.HangForTest,
		"supervisor": sup.HoldLockForTest,
		"audit":      auditLog.HangForTest,
	}
	hang, ok := hangs[part]
	if !ok {
		return fmt.Errorf("%s=%q: part %q is not hub, supervisor or audit", hangEnv, v, part)
	}
	log.Warn("test-only fault injection armed", "part", part, "after", delay)
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		log.Warn("test-only fault injection: wedging", "part", part)
		hang()
	}()
	return nil
}
