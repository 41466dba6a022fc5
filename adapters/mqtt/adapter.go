package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/openhal/gateway/adapter"
	"github.com/openhal/gateway/internal/mqttbridge"
	"github.com/openhal/gateway/internal/mqttbridge/pahoclient"
)

// bridgeAdapter is one run of the adapter: the bridge, its MQTT client, and the
// adapter's side of the daemon.
type bridgeAdapter struct {
	log      *slog.Logger
	hostname func() (string, error)
	hub      *connHub

	mu     sync.Mutex
	bridge *mqttbridge.Bridge
	client *pahoclient.Client
	done   chan struct{} // closed when the bridge's Run has returned
}

func newAdapter(log *slog.Logger, hostname func() (string, error)) *bridgeAdapter {
	return &bridgeAdapter{log: log, hostname: hostname, hub: newConnHub()}
}

// protocol is the adapter as package adapter runs it.
func (a *bridgeAdapter) protocol() adapter.Adapter {
	return adapter.Adapter{
		Name: Name, Version: Version, Logger: a.log,
		OnInitialize:  a.initialize,
		OnInitialized: a.initialized,
		OnEvent: func(ctx context.Context, c *adapter.Conn, e adapter.Event) {
			if b := a.theBridge(); b != nil {
				b.Event(ctx, e.Type, e.Data, e.Dropped)
			}
		},
		OnRead: a.read,
	}
}

// initialize checks the settings (a bad one refuses to start, naming its
// field) and starts the bridge; it connects on its own.
func (a *bridgeAdapter) initialize(ctx context.Context, c *adapter.Conn) error {
	cfg, err := mqttbridge.ParseSettings(c.Params().Settings, a.hostname)
	if err != nil {
		a.log.Error("mqtt: not started: " + err.Error())
		return err
	}
	a.hub.attach(c)
	b := mqttbridge.New(mqttbridge.Options{
		Config: cfg, Hub: a.hub, Discovery: discovery(cfg, c.Params().Host.Version), Own: Name + ".", Log: a.log,
	})
	// Not ctx: the connection outlives the protocol's, so that the
	// bridge publishes the gateway offline after shutdown (close).
	client, err := pahoclient.Dial(context.WithoutCancel(ctx), cfg, b)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	a.mu.Lock()
	a.bridge, a.client, a.done = b, client, done
	a.mu.Unlock()
	go func() {
		defer close(done)
		b.Run(ctx, client)
	}()
	a.log.Info("mqtt: bridge started", "broker", cfg.BrokerName(), "gateway", cfg.Gateway, "base", cfg.Topics().Base(cfg.Gateway), "discovery", cfg.DiscoveryPrefix)
	return nil
}

// initialized adds mqtt.broker and learns the bench.
func (a *bridgeAdapter) initialized(ctx context.Context, c *adapter.Conn) {
	if err := a.hub.addBroker(ctx); err != nil {
		a.log.Warn("mqtt: mqtt.broker not added", "err", err)
	}
	if b := a.theBridge(); b != nil {
		if err := b.Sync(ctx); err != nil {
			a.log.Warn("mqtt: the bench could not be read", "err", err)
		}
	}
}

func (a *bridgeAdapter) read(ctx context.Context, c *adapter.Conn, dev string) (adapter.Reading, error) {
	if dev != brokerID {
		return adapter.Reading{}, &adapter.Error{Code: -32004, Message: "no device " + dev + " in adapter mqtt"}
	}
	return adapter.Reading{Value: a.hub.status()}, nil
}

func (a *bridgeAdapter) theBridge() *mqttbridge.Bridge {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bridge
}

// close waits for the bridge to publish the gateway offline (its Run ends
// with the connection's ctx), then leaves the broker cleanly.
func (a *bridgeAdapter) close() {
	a.mu.Lock()
	client, done := a.client, a.done
	a.mu.Unlock()
	if client == nil {
		return
	}
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := client.Close(ctx); err != nil {
		a.log.Debug("mqtt: disconnect", "err", err)
	}
}
