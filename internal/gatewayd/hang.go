//go:build !testhang

package gatewayd

import (
	"context"
	"log/slog"
	"os"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/supervisor"
)

// injectHang is off in normal builds: GATEWAY_TEST_HANG is a test-only
// fault injection, compiled in with -tags testhang (see hang_testhang.go).
func injectHang(_ context.Context, _ *halhub.Hub, _ *supervisor.Supervisor, _ *audit.Log, log *slog.Logger) error {
	if v := os.Getenv(hangEnv); v != "" {
		log.Warn(hangEnv+" is ignored: this build has no fault injection (build with -tags testhang)", "value", v)
	}
	return nil
}

// hangEnv names the test-only fault injection.
const hangEnv = "GATEWAY_TEST_HANG"
