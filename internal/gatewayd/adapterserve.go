package gatewayd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/supervisor"
	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// The gateway's own Hub methods for `gateway adapter`
// (gatewayext.MethodAdaptersStatus and the others; admin only, and not
// limited to some devices: every adapter's devices are in the status, a
// restart reaches all of them) go over the Hub's transports and tokens, so
// that the CLI needs no second way into a running gateway.

// adapterService serves the adapter methods from the supervisor. The Hub
// takes its methods when it is made and the supervisor needs the Hub, so
// sup is set once both exist, before any listener opens.
type adapterService struct {
	sup *supervisor.Supervisor
}

// extensions returns the Hub methods of s.
func (s *adapterService) extensions() map[string]halhub.Extension {
	return map[string]halhub.Extension{
		gatewayext.MethodAdaptersStatus: {Scope: openhal.ScopeAdmin, Unlimited: true, Serve: s.status},
		gatewayext.MethodAdaptersReset:  {Scope: openhal.ScopeAdmin, Unlimited: true, Serve: s.apply((*supervisor.Supervisor).Reset)},
		gatewayext.MethodAdaptersReload: {Scope: openhal.ScopeAdmin, Unlimited: true, Serve: s.apply((*supervisor.Supervisor).Reload)},
		gatewayext.MethodAdaptersLogs:   {Scope: openhal.ScopeAdmin, Unlimited: true, Serve: s.logs},
	}
}

// status answers gatewayext.AdaptersResult: every enabled adapter, or the
// one named.
func (s *adapterService) status(_ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p gatewayext.AdapterParams
	if err := halhub.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return gatewayext.AdaptersResult{Adapters: public(s.sup.Status())}, nil
	}
	st, err := s.find(p.Name)
	if err != nil {
		return nil, err
	}
	return gatewayext.AdaptersResult{Adapters: []gatewayext.AdapterStatus{st.Public()}}, nil
}

// public is sts as the adapter methods answer them; nil stays nil (null).
func public(sts []supervisor.Status) []gatewayext.AdapterStatus {
	if sts == nil {
		return nil
	}
	out := make([]gatewayext.AdapterStatus, len(sts))
	for i, st := range sts {
		out[i] = st.Public()
	}
	return out
}

// apply returns a method that runs op on the adapter named in params
// and answers gatewayext.AdapterResult after it.
func (s *adapterService) apply(op func(*supervisor.Supervisor, string) error) func(context.Context, json.RawMessage) (any, *jsonrpc.Error) {
	return func(_ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
		var p gatewayext.AdapterParams
		if err := halhub.DecodeParams(params, &p); err != nil {
			return nil, err
		}
		if p.Name == "" {
			return nil, halhub.InvalidParams("params: name is required", map[string]any{"param": "name"})
		}
		if _, err := s.find(p.Name); err != nil {
			return nil, err
		}
		// The supervisor refuses what the adapter's state does not allow
		// (a reset of an adapter that is not failed): the request's fault.
		if err := op(s.sup, p.Name); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error(),
				Data: map[string]any{"reason": gatewayext.ReasonAdapterRefused, "adapter": p.Name}}
		}
		st, err := s.find(p.Name)
		if err != nil {
			return nil, err
		}
		return gatewayext.AdapterResult{Adapter: st.Public()}, nil
	}
}

// find returns the status of the enabled adapter name, or the error that
// it is not enabled.
func (s *adapterService) find(name string) (supervisor.Status, *jsonrpc.Error) {
	for _, st := range s.sup.Status() {
		if st.Name == name {
			return st, nil
		}
	}
	return supervisor.Status{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
		Message: fmt.Sprintf("adapter %q is not enabled in the configuration (adapters.enabled)", name),
		Data:    map[string]any{"reason": gatewayext.ReasonAdapterNotEnabled, "adapter": name}}
}

// adapterStates are every state, so that gateway_adapter_state has a
// series for each (1 for the current one, 0 for the others).
var adapterStates = []restart.State{restart.Stopped, restart.Starting, restart.Running, restart.Stopping, restart.Backoff, restart.Failed}

// writeMetrics appends the adapters' metrics to /metrics, in the same
// form as the Hub's.
func (s *adapterService) writeMetrics(w io.Writer) {
	all := s.sup.Status()
	family := func(name, typ, help string, value func(st supervisor.Status) string) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for _, st := range all {
			fmt.Fprintf(w, "%s{adapter=%q} %s\n", name, st.Name, value(st))
		}
	}
	num := func(f func(st supervisor.Status) uint64) func(supervisor.Status) string {
		return func(st supervisor.Status) string { return fmt.Sprint(f(st)) }
	}
	family("gateway_adapter_up", "gauge", "1 while the adapter is running.", num(func(st supervisor.Status) uint64 {
		if st.State == restart.Running {
			return 1
		}
		return 0
	}))
	fmt.Fprint(w, "# HELP gateway_adapter_state The adapter's state: 1 for the current one.\n# TYPE gateway_adapter_state gauge\n")
	for _, st := range all {
		for _, state := range adapterStates {
			v := 0
			if st.State == state {
				v = 1
			}
			fmt.Fprintf(w, "gateway_adapter_state{adapter=%q,state=%q} %d\n", st.Name, state, v)
		}
	}
	family("gateway_adapter_pid", "gauge", "Process id of the adapter's run; 0 without one.", num(func(st supervisor.Status) uint64 { return uint64(st.Pid) }))
	family("gateway_adapter_restarts_total", "counter", "Restarts of the adapter.", num(func(st supervisor.Status) uint64 { return uint64(st.Restarts) }))
	family("gateway_adapter_crashes_total", "counter", "Crashes of the adapter.", num(func(st supervisor.Status) uint64 { return st.Crashes }))
	family("gateway_adapter_strikes", "gauge", "Protocol strikes within the current window.", num(func(st supervisor.Status) uint64 { return uint64(st.Strikes) }))
	family("gateway_adapter_strikes_total", "counter", "Protocol strikes, every run.", num(func(st supervisor.Status) uint64 { return st.StrikesTotal }))
	family("gateway_adapter_dropped_events_total", "counter", "Events dropped from the adapter's full queue.", num(func(st supervisor.Status) uint64 { return st.DroppedEvents }))
	family("gateway_adapter_late_replies_total", "counter", "Replies that came after their deadline or cancel.", num(func(st supervisor.Status) uint64 { return st.LateReplies }))
	family("gateway_adapter_uptime_seconds", "gauge", "Seconds since the running run started; 0 without one.", func(st supervisor.Status) string {
		return strings.TrimSuffix(fmt.Sprintf("%.3f", st.UptimeS), ".000")
	})
}
