package halhub

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openhal/gateway/openhal"
)

// Spec §4 and docs/protocol.md: /metrics (the Hub's figures and the
// adapters') needs a token not limited to some devices; a limited one,
// even an admin's, gets 403 and none of the figures.
func TestMetricsDeviceLimited(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	limited := th.token(t, "ledadmin", openhal.ScopeAdmin, "bench.led")
	reader := th.token(t, "reader", openhal.ScopeRead)
	srv := httptest.NewServer(th.hub.Handler(HTTPOptions{Metrics: func(w io.Writer) { fmt.Fprintln(w, "gateway_adapter_secret 1") }}))
	defer srv.Close()
	for _, tc := range []struct {
		name, bearer string
		want         int
	}{
		{"limited admin", limited, http.StatusForbidden},
		{"unlimited read token", reader, http.StatusOK},
	} {
		code, _, body := get(t, srv.URL+"/metrics", tc.bearer)
		if code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.want)
		}
		if shows := strings.Contains(body, "gateway_"); shows != (tc.want == http.StatusOK) {
			t.Errorf("%s: body %q", tc.name, body)
		}
	}
}
