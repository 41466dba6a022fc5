package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/openhal/gateway/e2e/modbussim"
)

// TestModbusCardOnGateway: the real gateway with a Modbus TCP line to
// pymodbus (package modbussim): a read register's card shows the unit's
// value scaled with its unit and where it sits, and follows the unit
// when its register changes. TestModbusCards covers every control over
// a Hub in the test; this is the same card fed by the gateway's line.
func TestModbusCardOnGateway(t *testing.T) {
	chromiumPath(t)
	sim := modbussim.StartTCP(t, modbussim.Units{1: {modbussim.Input: {0: {2500}}}})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "pump.yaml")
	conf := fmt.Sprintf(`board: generic
modbus:
  plc: {tcp: %s}
devices:
  pump.frequency:
    kind: modbus
    label: Pump output frequency
    bus: plc
    slave: 1
    table: input
    address: 0
    scale: 0.01
    unit: Hz
    interval: 100ms
`, sim.Addr)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, dir, "127.0.0.1:0", "127.0.0.1:0", "--config", cfg)
	p := newPage(t)
	p.do(chromedp.Navigate(g.url()))
	p.fill(hook("login-token"), g.adminToken(t))
	p.do(chromedp.Click(hook("login-submit")), chromedp.WaitVisible(deviceHook("pump.frequency", "")))
	p.waitText(deviceHook("pump.frequency", "value"), `^25 Hz$`)
	p.waitText(deviceHook("pump.frequency", "where"), `^Modbus unit 1, input 0 \(uint16 ×0\.01\) on tcp://127\.0\.0\.1:\d+$`)
	sim.Set(1, modbussim.Input, 0, 2650)
	p.waitText(deviceHook("pump.frequency", "value"), `^26\.5 Hz$`)
}
