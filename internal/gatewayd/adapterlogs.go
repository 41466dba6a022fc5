package gatewayd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// gatewayext.MethodAdaptersLogs answers an adapter's last log lines, for
// the console's adapters view: `gateway adapter logs` reads the same lines
// from the state directory, which a browser cannot.

// Bounds of gateway/adapters.logs' lines: a glance at what the adapter
// said last, not a log reader (the files keep up to 5 MiB).
const (
	defaultLogLines = 20
	maxLogLines     = 200
)

// logs answers gatewayext.AdapterLogs: the last lines of the enabled
// adapter name's standard error, oldest first, as stored (stamped).
func (s *adapterService) logs(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p gatewayext.AdapterLogsParams
	if err := halhub.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, halhub.InvalidParams("params: name is required", map[string]any{"param": "name"})
	}
	n := defaultLogLines
	if p.Lines != nil {
		n = *p.Lines
	}
	if n < 1 || n > maxLogLines {
		return nil, halhub.InvalidParams(fmt.Sprintf("params: lines must be 1 to %d, got %d", maxLogLines, n),
			map[string]any{"param": "lines", "max": maxLogLines})
	}
	if _, err := s.find(p.Name); err != nil {
		return nil, err
	}
	lines, err := s.sup.Logs(p.Name, n)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error(),
			Data: map[string]any{"reason": gatewayext.ReasonLogUnreadable, "adapter": p.Name}}
	}
	room := 0
	if c, ok := halhub.CallerOf(ctx); ok {
		room = c.Room
	}
	return fitLogs(p.Name, lines, room), nil
}

// fitLogs keeps the newest of lines whose answer takes at most room bytes
// of JSON (0: no bound), counting the others as omitted (a line may be up
// to 8 KiB).
func fitLogs(name string, lines []string, room int) gatewayext.AdapterLogs {
	ans := gatewayext.AdapterLogs{Adapter: name, Lines: lines}
	if room <= 0 {
		if ans.Lines == nil {
			ans.Lines = []string{}
		}
		return ans
	}
	// The answer without lines, its count at its longest.
	empty, _ := json.Marshal(gatewayext.AdapterLogs{Adapter: name, Lines: []string{}, Omitted: maxLogLines})
	used := len(empty)
	keep := 0
	for i := len(lines) - 1; i >= 0; i-- {
		b, _ := json.Marshal(lines[i])
		cost := len(b)
		if keep > 0 {
			cost++ // the comma
		}
		if used+cost > room {
			break
		}
		used += cost
		keep++
	}
	ans.Lines = append([]string{}, lines[len(lines)-keep:]...)
	ans.Omitted = len(lines) - keep
	return ans
}
