package gateway_test

import (
	"encoding/json"
	"testing"
)

// TestBinaryLineDeviceRefusesLineBreak: a string holding a line break,
// written to the sim board's line instrument, is refused as a bad value
// (INVALID_PARAMS, said in one line naming the device and the line
// break), never reaches the instrument, and leaves the device ok; a
// one-line string still goes through.
func TestBinaryLineDeviceRefusesLineBreak(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, dir)
	admin := func(args ...string) []string { return append(args, "--hub", g.ws, "--state-dir", dir) }
	for _, v := range []string{
		"MEAS?\nRST",     // a raw string with a newline
		`"MEAS?\r\nRST"`, // JSON, with a carriage return first
	} {
		wantOneLineError(t, gw(t, admin("write", "sim.meter", v)...),
			`value not accepted by sim.meter: the string holds a line break`)
	}
	var list struct {
		Devices []struct {
			ID    string `json:"id"`
			State string `json:"state"`
			Fault string `json:"fault"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(gwOK(t, admin("devices", "--json")...)), &list); err != nil {
		t.Fatal(err)
	}
	for _, d := range list.Devices {
		if d.ID == "sim.meter" && (d.State != "ok" || d.Fault != "") {
			t.Fatalf("sim.meter is %s (%s) after refused values, want ok", d.State, d.Fault)
		}
	}
	if out := gwOK(t, admin("write", "sim.meter", "*IDN?")...); out == "" {
		t.Fatal("a one-line write printed nothing")
	}
}
