package adapter_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"

	"github.com/openhal/gateway/adapter"
)

// The service of README.md ("A service in 20 lines"), run as the
// gateway's supervisor runs it: the example plays the daemon, writing
// protocol-1 frames to the adapter's input and reading its answers from
// its output, one JSON object a line. Main does the same over the
// process's standard input and output; Run takes any reader and writer.
func Example() {
	logger := adapter.Adapter{
		Name:    "logger", // must match adapter.json
		Version: "0.1.0",  // must match adapter.json
		OnEvent: func(ctx context.Context, c *adapter.Conn, e adapter.Event) {
			log.Printf("event %d %s %s (dropped before it: %d)", e.Seq, e.Type, e.Data, e.Dropped)
		},
		OnRead: func(ctx context.Context, c *adapter.Conn, device string) (adapter.Reading, error) {
			return adapter.Reading{Value: 42.0}, nil // device is the id without "logger."
		},
	}

	// The adapter's standard input and output, as the supervisor holds them.
	stdin, toAdapter := io.Pipe()
	fromAdapter, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- logger.Run(context.Background(), stdin, stdout)
		stdout.Close()
	}()
	answers := bufio.NewScanner(fromAdapter)
	send := func(frame string) { io.WriteString(toAdapter, frame+"\n") }
	answer := func() {
		answers.Scan()
		fmt.Println(answers.Text())
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocols":[1],` +
		`"host":{"name":"oxidepmd","version":"0.1.0","product":"gateway"},"adapter":{"name":"logger","version":"0.1.0"},` +
		`"kind":"service","grant":{"level":"read","scope":"all"},"paths":{"state":"/var/lib/gateway/adapters/state/logger"},` +
		`"limits":{"max_line":262144,"max_in_flight":32,"event_queue":1024}}}`)
	answer()
	send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	send(`{"jsonrpc":"2.0","method":"event","params":{"seq":1,"type":"value","data":{"device":"sim.led","value":true}}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"device.read","params":{"device":"answer"}}`)
	answer()
	send(`{"jsonrpc":"2.0","id":3,"method":"shutdown","params":{}}`)
	answer()
	fmt.Println("Run returned", <-done)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocol":1,"name":"logger","version":"0.1.0"}}
	// {"jsonrpc":"2.0","id":2,"result":{"value":42}}
	// {"jsonrpc":"2.0","id":3,"result":{}}
	// Run returned <nil>
}
