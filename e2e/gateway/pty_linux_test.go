package gateway_test

import (
	"os"
	"testing"

	"github.com/openhal/gateway/internal/ptytest"
)

// openPTMX opens a pseudo-terminal and returns its master, closed when
// the test ends, and the path of its slave. Without pseudo-terminals the
// test is skipped.
func openPTMX(t testing.TB) (master *os.File, slave string) { return ptytest.OpenT(t) }
