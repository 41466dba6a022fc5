//go:build unix

package gatewayd

import (
	"context"
	"log/slog"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/discovery"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/openhal"
)

// announceHub puts the listeners that are off loopback on the LAN
// (hub.announce) and returns the function that withdraws them. Nothing
// here stops the gateway: a board whose announcement fails still serves
// the clients that know its address, and the log says why.
func announceHub(cfg *board.Config, stateDir string, opened listening, httpOpt halhub.HTTPOptions, log *slog.Logger) (withdraw func()) {
	none := func() {}
	if cfg.Hub.Announce == discovery.ModeOff {
		return none
	}
	info, err := announceInfo(cfg, stateDir, opened, httpOpt)
	if err != nil {
		log.Error("announce: not announced", "err", err)
		return none
	}
	svcs := discovery.Services(info, opened.network)
	if len(svcs) == 0 {
		log.Info("announce: nothing to announce: every listener is on loopback")
		return none
	}
	pub, err := discovery.NewPublisher(cfg.Hub.Announce, log)
	if err != nil {
		log.Error("announce: not announced", "err", err)
		return none
	}
	if err := pub.Publish(context.Background(), svcs); err != nil {
		log.Error("announce: not announced", "via", pub.Name(), "err", err)
		pub.Close()
		return none
	}
	for _, s := range svcs {
		log.Info("announced", "via", pub.Name(), "name", s.Name, "type", s.Type, "port", s.Port, "id", info.ID)
	}
	return func() {
		if err := pub.Close(); err != nil {
			log.Warn("announce: withdraw", "via", pub.Name(), "err", err)
			return
		}
		log.Info("announcement withdrawn", "via", pub.Name())
	}
}

// announceInfo is what the TXT records say: the name (hub.name, else the
// host name), the id kept in the state directory, and what is served.
func announceInfo(cfg *board.Config, stateDir string, opened listening, httpOpt halhub.HTTPOptions) (discovery.Info, error) {
	id, err := discovery.GatewayID(stateDir)
	if err != nil {
		return discovery.Info{}, err
	}
	return discovery.Info{
		Name: lanName(cfg), ID: id, Protocol: "openhal/" + openhal.Version, Level: string(cfg.Hub.Conformance),
		Fingerprint: opened.fingerprint, Console: httpOpt.Console != nil, MCP: httpOpt.MCP != nil,
	}, nil
}
