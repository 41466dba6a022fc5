package main

import (
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/homeassistant"
	"github.com/openhal/gateway/internal/mqttbridge"
)

// discovery is Home Assistant's discovery of the bench (package
// homeassistant), or nil when discoveryPrefix is "". A device gone since
// the last config is removed as Home Assistant documents it: a config
// whose entry for it holds only its platform, then the config without it.
// version is the gateway's (the device's and the origin's sw).
func discovery(cfg mqttbridge.Config, version string) mqttbridge.Discovery {
	if cfg.DiscoveryPrefix == "" {
		return nil
	}
	t := cfg.Topics()
	gw := homeassistant.Gateway{ID: cfg.Gateway, Name: cfg.Name, Version: version}
	return func(prev, devs []device.Descriptor) (string, [][]byte, error) {
		topic, update, removed, err := homeassistant.Update(t, gw, prev, devs)
		if err != nil || len(removed) == 0 {
			return topic, [][]byte{update}, err
		}
		_, config, err := homeassistant.Config(t, gw, devs)
		return topic, [][]byte{update, config}, err
	}
}
