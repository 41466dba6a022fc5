// Command mqtt is the MQTT bridge adapter shipped with the gateway: a
// service under the supervisor that publishes the bench to an MQTT broker
// and Home Assistant, and turns MQTT commands into writes under its grant
// (control_low: a high-risk command waits for an operator). Its settings
// come from the gateway's configuration, adapters.settings.mqtt
// (docs/mqtt.md); the bridge itself is package mqttbridge.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/openhal/gateway/adapter"
	"github.com/openhal/gateway/adapterproto"
)

// Name and Version are the manifest's (adapter.json).
const (
	Name    = "mqtt"
	Version = "0.1.0"
)

func main() {
	os.Exit(run(context.Background(), os.LookupEnv, os.Stdin, os.Stdout, os.Stderr))
}

// run is adapter.Adapter.Main, with a clean end of the bridge after the
// protocol's: the gateway "offline" published and the broker left
// cleanly before the process exits.
func run(ctx context.Context, lookup func(string) (string, bool), in io.Reader, out, errOut io.Writer) int {
	if _, ok := lookup(adapterproto.EnvProtocols); !ok {
		fmt.Fprintf(errOut, "%s: %v\n", Name, adapter.ErrNoDaemon)
		return 2
	}
	a := newAdapter(slog.New(slog.NewTextHandler(errOut, nil)), os.Hostname)
	err := a.protocol().Run(ctx, in, out)
	a.close()
	if err != nil {
		fmt.Fprintf(errOut, "%s: %v\n", Name, err)
		return 1
	}
	return 0
}
