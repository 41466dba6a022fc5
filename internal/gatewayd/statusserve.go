package gatewayd

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"time"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/supervisor"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// The gateway's status (gatewayext.MethodStatus) is what `gateway status`
// needs beyond the protocol's own methods: the gateway's board, uptime and
// clients, and its adapters. Any token may ask (scope read): nothing in it
// tells of a device, and the adapters (whose names and devices would) are
// left out for a token that is not admin or is limited to some devices.

// statusService serves gatewayext.MethodStatus. The Hub takes its methods when it is
// made, so hub and sup are set once they exist, before any listener opens.
type statusService struct {
	build   build
	board   string
	name    string    // the gateway's name on the LAN
	id      string    // the gateway id
	fp      string    // the TLS listeners' certificate's fingerprint
	started time.Time // with its monotonic reading: uptime ignores clock jumps
	hub     *halhub.Hub
	sup     *supervisor.Supervisor
}

// newStatusService notes the build, the board, the gateway's name, id and
// certificate, and the start of this run.
func newStatusService(cfg *board.Config, b build, id, fingerprint string) *statusService {
	return &statusService{build: b, board: boardName(cfg), name: lanName(cfg), id: id, fp: fingerprint, started: time.Now()}
}

// lanName is the gateway's name on the LAN: hub.name, else the host
// name.
func lanName(cfg *board.Config) string {
	if cfg.Hub.Name != "" {
		return cfg.Hub.Name
	}
	if name, err := os.Hostname(); err == nil {
		return name
	}
	return "gateway"
}

// boardName is the configuration's board, with the profile detected when
// it says auto.
func boardName(cfg *board.Config) string {
	if cfg.Board != board.BoardAuto {
		return cfg.Board
	}
	if prof, err := profile.Detect(os.DirFS("/")); err == nil {
		return prof.Name + " (auto)"
	}
	return cfg.Board
}

func (s *statusService) extensions() map[string]halhub.Extension {
	return map[string]halhub.Extension{gatewayext.MethodStatus: {Scope: openhal.ScopeRead, Serve: s.status}}
}

func (s *statusService) status(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var none struct{}
	if err := halhub.DecodeParams(params, &none); err != nil {
		return nil, err
	}
	st := gatewayext.Status{
		Version: s.build.version, Commit: s.build.commit, Board: s.board,
		Name: s.name, ID: s.id, Fingerprint: s.fp,
		StartedAt: s.started.UTC(), UptimeSeconds: time.Since(s.started).Seconds(),
		Clients: s.hub.Clients(),
	}
	caller, _ := halhub.CallerOf(ctx)
	if caller.Principal.Scope.AtLeast(openhal.ScopeAdmin) && !caller.Limited {
		st.Adapters = []gatewayext.AdapterSummary{}
		var all []supervisor.Status
		if s.sup != nil {
			all = s.sup.Status()
		}
		for _, a := range all {
			pub := a.Public()
			st.Adapters = append(st.Adapters, gatewayext.AdapterSummary{Name: pub.Name, State: pub.State, Reason: pub.Reason, Detail: pub.Detail})
		}
	}
	return st, nil
}

// extensionsOf merges the methods of the gateway's services.
func extensionsOf(sets ...map[string]halhub.Extension) map[string]halhub.Extension {
	all := map[string]halhub.Extension{}
	for _, s := range sets {
		maps.Copy(all, s)
	}
	return all
}
