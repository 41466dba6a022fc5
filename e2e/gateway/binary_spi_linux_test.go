package gateway_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// spiBench is a greenhouse's ADC: an MCP3008 on SPI0's CE0 with a soil
// probe on CH0 (scaled to %) and a bridge across CH2-CH3.
const spiBench = `board: %s
devices:
  greenhouse.soil:
    kind: sensor
    driver: mcp3008
    bus: /dev/spidev0.0
    channel: 0
    scale: 30.303
    unit: "%%"
    quantity: moisture
    interval: 200ms
  greenhouse.bridge:
    kind: sensor
    driver: mcp3008
    bus: "0.0"
    channel: 2
    differential: true
%s`

// TestBinarySPIADC: the real binary with an SPI ADC configured, on a
// machine without SPI (this one: no /dev/spidev, no SPI controller that
// QEMU models with an ADC behind it; the readings themselves are tested
// on periph's playback of the datasheets' bytes in
// internal/board/hardware). gateway check passes the file and names each
// fault of a broken one by its field; gateway run starts, serves the
// channels with their bus, chip and channel, in fault with what would
// make the device file appear, and never logs an error for it.
func TestBinarySPIADC(t *testing.T) {
	skipShort(t)
	if _, err := os.Stat("/dev/spidev0.0"); err == nil {
		t.Skip("this machine has /dev/spidev0.0: the test needs it absent")
	}
	good := writeConfig(t, fmt.Sprintf(spiBench, "generic", ""))
	if r := gw(t, "check", "--config", good); r.code != 0 || r.stdout != good+": ok\n" {
		t.Fatalf("check: %+v", r)
	}
	bad := writeConfig(t, fmt.Sprintf(spiBench, "rpi4b", `  greenhouse.light:
    kind: sensor
    driver: mcp3008
    bus: /dev/spidev0.0
    channel: 8
    vref: 12
  greenhouse.vent:
    kind: gpio.output
    pin: GPIO8
`))
	r := gw(t, "check", "--config", bad)
	if r.code != 1 {
		t.Fatalf("check of a broken file: %+v", r)
	}
	checkFaultLines(t, r.stderr, bad, []string{"devices.greenhouse.light.channel", "devices.greenhouse.light.vref", "devices.greenhouse.vent.pin"})
	if !strings.Contains(r.stderr, "GPIO8 is CE0 of SPI0 (/dev/spidev0.N), which the kernel holds once dtparam=spi=on enables it, used by devices.greenhouse.soil") {
		t.Errorf("check did not name the SPI pin's clash:\n%s", r.stderr)
	}

	dir := t.TempDir()
	g := startGatewayWith(t, dir, 2, "--config", good)
	flags := []string{"--hub", g.tcp, "--state-dir", dir}
	// The watch reads each channel as it starts, and sees the fault of a
	// poll that had not failed yet when the list below was taken.
	w := startChild(t, append([]string{"watch"}, flags...)...)
	faults := map[string]int{}
	for _, id := range []string{"greenhouse.soil", "greenhouse.bridge"} {
		faults[id], _ = w.out.waitFor(t, 0, watchTS+regexp.QuoteMeta(id)+`: (cannot read: .*\(DEVICE_FAULT\)|state fault)`, waitLong)
	}
	byID := map[string]map[string]any{}
	for id := range faults {
		for byID[id] == nil || byID[id]["state"] == "ok" {
			if byID[id] != nil {
				w.out.waitFor(t, faults[id], watchTS+regexp.QuoteMeta(id)+`: state fault`, waitLong)
			}
			var list struct{ Devices []map[string]any }
			if err := json.Unmarshal([]byte(gwOK(t, append([]string{"devices", "--json"}, flags...)...)), &list); err != nil {
				t.Fatal(err)
			}
			for _, d := range list.Devices {
				byID[d["id"].(string)] = d
			}
		}
	}
	soil, bridge := byID["greenhouse.soil"], byID["greenhouse.bridge"]
	if soil["bus"] != "/dev/spidev0.0" || soil["chip"] != "mcp3008" || soil["channel"] != 0.0 || soil["differential"] != nil || soil["address"] != nil {
		t.Errorf("greenhouse.soil = %v", soil)
	}
	if bridge["bus"] != "/dev/spidev0.0" || bridge["channel"] != 2.0 || bridge["differential"] != true {
		t.Errorf("greenhouse.bridge = %v", bridge)
	}
	props := soil["schema"].(map[string]any)["properties"].(map[string]any)
	if v := props["voltage"].(map[string]any); v["unit"] != "V" || v["maximum"] != 3.3 {
		t.Errorf("voltage schema %v", v)
	}
	if m := props["moisture"].(map[string]any); m["unit"] != "%" {
		t.Errorf("moisture schema %v", m)
	}
	const why = "set up: mcp3008 on /dev/spidev0.0: no /dev/spidev0.0: is SPI enabled (dtparam=spi=on in config.txt"
	for id, d := range byID {
		if d["state"] != "fault" || !strings.HasPrefix(d["fault"].(string), why) {
			t.Errorf("%s: state %v, fault %q; want fault %q...", id, d["state"], d["fault"], why)
		}
	}
	wantOneLineError(t, gw(t, append([]string{"read", "greenhouse.soil"}, flags...)...), why)
	if code, _ := w.signal(t, syscall.SIGINT, waitLong); code != 0 {
		t.Errorf("watch exited %d", code)
	}
	g.stop(t)
}
