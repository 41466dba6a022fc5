package halhub

import (
	"fmt"
	"io"
	"net/http"

	"github.com/openhal/gateway/internal/halhub/token"
)

// metricsView is what one scrape of /metrics is shown.
//
//   - The Hub's and the adapters' figures (whole counts) go to a token
//     that sees every device, or to anyone when hub.metricsPublic is set.
//   - Device values, states and infos go only with a token, for the
//     devices that token sees: the same devices hal/read would answer. A
//     public /metrics without a token shows none: a public endpoint must
//     not give what no token was shown for.
//   - A token limited to some devices also gets gateway_emergency_stop,
//     which every token is told (hal/initialize, hal/stopped).
type metricsView struct {
	hub     bool
	devices *token.Entry
}

// metricsViewOf finds a scrape's view from its bearer token. A token
// that was given and is not known is refused even when /metrics is
// public: a scraper with a revoked or mistyped token file should fail
// loudly, not lose its device values without a word.
func (h *Hub) metricsViewOf(r *http.Request, public bool) (metricsView, bool) {
	if r.Header.Get("Authorization") == "" && public {
		return metricsView{hub: true}, true
	}
	e, ok := h.tokens.Load().Lookup(bearerToken(r))
	if !ok {
		return metricsView{}, false
	}
	return metricsView{hub: public || len(e.Devices) == 0, devices: &e}, true
}

// serveMetrics answers GET /metrics in the Prometheus text format.
func (h *Hub) serveMetrics(opt HTTPOptions) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		view, ok := h.metricsViewOf(r, opt.MetricsPublic)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gateway"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		if view.hub {
			h.writeMetrics(w)
			if opt.Metrics != nil {
				opt.Metrics(w)
			}
		} else {
			writeStopGauge(w, h.Stopped())
		}
		if view.devices != nil {
			if err := writeDeviceMetrics(w, h.deviceSamples(*view.devices)); err != nil {
				h.log.Debug("metrics: scrape ended early", "err", err)
			}
		}
	}
}

// writeStopGauge writes gateway_emergency_stop alone, for a token
// limited to some devices: the only Hub-wide figure it is told.
func writeStopGauge(w io.Writer, stopped bool) {
	fmt.Fprintf(w, "# HELP gateway_emergency_stop 1 while the emergency stop is engaged.\n# TYPE gateway_emergency_stop gauge\ngateway_emergency_stop %d\n", int(boolFloat(stopped)))
}
