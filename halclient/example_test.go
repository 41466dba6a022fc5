package halclient_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal/gatewayext"
)

func ExampleDial() {
	gw := startExampleGateway() // a gateway to talk to, in this process
	defer gw.Stop()

	ctx := context.Background()
	c, err := halclient.Dial(ctx, gw.URL, halclient.Options{Token: gw.Token, ClientName: "example"})
	if err != nil {
		log.Fatal(err) // one sentence: nothing listening, a refused token...
	}
	defer c.Close()

	init := c.Init()
	fmt.Printf("OpenHAL %s, conformance %s, as %s %q with scope %s\n",
		init.ProtocolVersion, init.Conformance, init.Principal.Kind, init.Principal.Name, init.Principal.Scope)
	devices, err := c.Devices(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range devices {
		fmt.Printf("%-16s %-12s access %-2s risk %s\n", d.ID, d.Kind, d.Access, d.Risk)
	}
	// Output:
	// OpenHAL 0.1, conformance full, as agent "bench-agent" with scope control_low
	// sim.door         gpio.input   access r  risk low
	// sim.heater       gpio.output  access rw risk high
	// sim.led          gpio.output  access rw risk low
	// sim.temperature  sensor       access r  risk low
}

// Read a sensor, write an output and follow what the Hub sends on one
// connection.
func ExampleConn_Write() {
	gw := startExampleGateway()
	defer gw.Stop()

	ctx := context.Background()
	c, err := halclient.Dial(ctx, gw.URL, halclient.Options{Token: gw.Token})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// A value up to a second old will do; an older one is measured afresh.
	v, err := c.Read(ctx, "sim.temperature", 1000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("read %s = %v at %s\n", v.Device, v.Value, v.TS.Format(time.RFC3339))

	res, err := c.Write(ctx, "sim.led", true, "example: turn the LED on")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("write sim.led:", res.Status)
	for n := range c.Notifications() {
		fmt.Println("notification", n.Method, string(n.Params))
		break
	}

	// A high-risk device waits for an admin when the token's scope is
	// control.low: the write is not applied, but pending.
	res, err = c.Write(ctx, "sim.heater", true, "example: warm up")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("write sim.heater:", res.Status, "until an admin approves", res.Confirmation.Device)

	// A refused request is a *HubError that reads as a sentence.
	_, err = c.Write(ctx, "sim.door", true, "")
	fmt.Println("write sim.door:", err)
	// Output:
	// read sim.temperature = map[temperature:20.5] at 2026-01-02T03:04:05Z
	// write sim.led: applied
	// notification hal/value {"device":"sim.led","value":true,"ts":"2026-01-02T03:04:05.000000006Z","seq":5,"devSeq":2}
	// write sim.heater: pending until an admin approves sim.heater
	// write sim.door: device sim.door is read-only (NOT_SUPPORTED): read_only
}

// Call asks for any method, such as the gateway's own under "gateway/",
// whose answers are the types of package gatewayext: here the last known
// value of every device, from the Hub's memory, without reading any.
func ExampleConn_Call() {
	gw := startExampleGateway()
	defer gw.Stop()

	ctx := context.Background()
	c, err := halclient.Dial(ctx, gw.URL, halclient.Options{Token: gw.Token})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	var res gatewayext.ValuesResult
	if err := c.Call(ctx, gatewayext.MethodValues, nil, &res); err != nil {
		log.Fatal(halclient.Describe(err, gatewayext.MethodValues, ""))
	}
	for _, v := range res.Values {
		fmt.Printf("%s = %v (seq %d)\n", v.Device, v.Value, v.Seq)
	}
	// Output:
	// sim.door = false (seq 2)
	// sim.heater = false (seq 3)
	// sim.led = false (seq 1)
	// sim.temperature = map[temperature:20.5] (seq 4)
}

// Watch follows a gateway across lost connections and restarts: on each
// connection it lists the devices and reads them (a resync), then passes
// on what the Hub sends.
func ExampleWatch() {
	gw := startExampleGateway()
	defer gw.Stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := halclient.Watch(ctx, gw.URL, halclient.Options{Token: gw.Token}, func(e halclient.WatchEvent) {
		switch e.Kind {
		case halclient.EventConnected:
			fmt.Println("connected to", e.Init.HubInfo.Name)
		case halclient.EventDevices:
			fmt.Println(len(e.Devices), "devices")
		case halclient.EventValue:
			fmt.Printf("%s = %v (resync %t)\n", e.Device, e.Value.Value, e.Resync)
			if e.Device == "sim.temperature" && e.Resync {
				gw.OpenDoor() // the door opens once the watch has read everything
			}
			if !e.Resync {
				cancel() // enough for an example
			}
		default:
			fmt.Println(e.Kind, e.Device, e.Err)
		}
	})
	fmt.Println("Watch returned:", err)
	// Output:
	// connected to openhal
	// 4 devices
	// sim.door = false (resync true)
	// sim.heater = false (resync true)
	// sim.led = false (resync true)
	// sim.temperature = map[temperature:20.5] (resync true)
	// sim.door = true (resync false)
	// Watch returned: context canceled
}
