package profile

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// publishedPinout is the Raspberry Pi 40-pin GPIO header as the Raspberry
// Pi documentation ("GPIO and the 40-pin header") and pinout.xyz print
// it, written out here independently of the profile's own table: the
// same on the 3B, 3B+, 4B, 5 and Zero 2 W.
func publishedPinout() map[int]string {
	return map[int]string{
		1: "3V3 power", 2: "5V power",
		3: "GPIO 2 (SDA)", 4: "5V power",
		5: "GPIO 3 (SCL)", 6: "Ground",
		7: "GPIO 4 (GPCLK0)", 8: "GPIO 14 (TXD)",
		9: "Ground", 10: "GPIO 15 (RXD)",
		11: "GPIO 17", 12: "GPIO 18 (PCM_CLK)",
		13: "GPIO 27", 14: "Ground",
		15: "GPIO 22", 16: "GPIO 23",
		17: "3V3 power", 18: "GPIO 24",
		19: "GPIO 10 (MOSI)", 20: "Ground",
		21: "GPIO 9 (MISO)", 22: "GPIO 25",
		23: "GPIO 11 (SCLK)", 24: "GPIO 8 (CE0)",
		25: "Ground", 26: "GPIO 7 (CE1)",
		27: "GPIO 0 (ID_SD)", 28: "GPIO 1 (ID_SC)",
		29: "GPIO 5", 30: "Ground",
		31: "GPIO 6", 32: "GPIO 12 (PWM0)",
		33: "GPIO 13 (PWM1)", 34: "Ground",
		35: "GPIO 19 (PCM_FS)", 36: "GPIO 16",
		37: "GPIO 26", 38: "GPIO 20 (PCM_DIN)",
		39: "Ground", 40: "GPIO 21 (PCM_DOUT)",
	}
}

// parsePublished turns one published entry into the Pin it describes.
func parsePublished(t *testing.T, n int, s string) Pin {
	t.Helper()
	switch s {
	case "3V3 power":
		return Pin{Number: n, Kind: Power3V3, BCM: -1}
	case "5V power":
		return Pin{Number: n, Kind: Power5V, BCM: -1}
	case "Ground":
		return Pin{Number: n, Kind: Ground, BCM: -1}
	}
	num, fn, _ := strings.Cut(strings.TrimPrefix(s, "GPIO "), " ")
	bcm, err := strconv.Atoi(num)
	if !strings.HasPrefix(s, "GPIO ") || err != nil {
		t.Fatalf("published pin %d: cannot read %q", n, s)
	}
	if fn == "(ID_SD)" || fn == "(ID_SC)" {
		return Pin{Number: n, Kind: ID, Line: strings.Trim(fn, "()"), BCM: bcm}
	}
	return Pin{Number: n, Kind: GPIO, Line: fmt.Sprintf("GPIO%d", bcm), BCM: bcm}
}

func piProfiles() []string { return []string{"rpi3b", "rpi3bplus", "rpi4b", "rpi5", "rpizero2w"} }

func TestHeaderMatchesPublishedPinout(t *testing.T) {
	published := publishedPinout()
	for _, name := range piProfiles() {
		t.Run(name, func(t *testing.T) {
			p, ok := ByName(name)
			if !ok {
				t.Fatalf("ByName(%q): not found", name)
			}
			if len(p.Pins) != 40 {
				t.Errorf("%d pins, want 40", len(p.Pins))
			}
			for n := 1; n <= 40; n++ {
				want := parsePublished(t, n, published[n])
				if got := p.Pins[n]; got != want {
					t.Errorf("pin %d = %+v, want %+v (published: %s)", n, got, want, published[n])
				}
			}
		})
	}
}

// The published totals (26 GPIO, the two ID pins, 8 ground, two of each
// supply) check the published table above against itself.
func TestPublishedPinoutTotals(t *testing.T) {
	count := map[Kind]int{}
	seen := map[int]bool{}
	for n, s := range publishedPinout() {
		pin := parsePublished(t, n, s)
		count[pin.Kind]++
		if pin.BCM >= 0 {
			if seen[pin.BCM] {
				t.Errorf("GPIO%d appears twice", pin.BCM)
			}
			seen[pin.BCM] = true
		}
	}
	want := map[Kind]int{GPIO: 26, ID: 2, Ground: 8, Power3V3: 2, Power5V: 2}
	for k, w := range want {
		if count[k] != w {
			t.Errorf("%d pins of kind %s, want %d", count[k], k, w)
		}
	}
	for bcm := 0; bcm <= 27; bcm++ {
		if !seen[bcm] {
			t.Errorf("GPIO%d missing from the header", bcm)
		}
	}
}

// Every bus, port and PWM channel a profile lists must sit on header
// lines of the kind it claims, at the pins the pinout names for them.
func TestPeripheralsUseHeaderLines(t *testing.T) {
	published := publishedPinout()
	fn := func(p *Profile, bcm int) string {
		pin, ok := p.HeaderPin(bcm)
		if !ok {
			return ""
		}
		return published[pin.Number]
	}
	for _, name := range piProfiles() {
		p, _ := ByName(name)
		for _, b := range p.I2C {
			sda, scl := fn(p, b.SDA), fn(p, b.SCL)
			if b.Reserved {
				if !strings.Contains(sda, "ID_SD") || !strings.Contains(scl, "ID_SC") {
					t.Errorf("%s %s: reserved bus on %q/%q, want the ID pins", name, b.Name, sda, scl)
				}
				continue
			}
			if !strings.Contains(sda, "(SDA)") || !strings.Contains(scl, "(SCL)") {
				t.Errorf("%s %s: SDA/SCL on %q/%q", name, b.Name, sda, scl)
			}
		}
		if len(p.UART) == 0 || fn(p, p.UART[0].TX) != "GPIO 14 (TXD)" || fn(p, p.UART[0].RX) != "GPIO 15 (RXD)" {
			t.Errorf("%s: first UART %+v is not on the TXD/RXD pins", name, p.UART)
		}
		for _, u := range p.UART {
			for _, l := range []int{u.TX, u.RX} {
				if pin, ok := p.HeaderPin(l); !ok || pin.Kind != GPIO {
					t.Errorf("%s %s: line GPIO%d is not a user GPIO of the header", name, u.Name, l)
				}
			}
		}
		lines := map[int]bool{}
		for _, w := range p.PWM {
			if w.Controller == "" || len(w.GPIO) == 0 {
				t.Errorf("%s PWM channel %d: no controller or lines", name, w.Channel)
			}
			for _, l := range w.GPIO {
				lines[l] = true
			}
		}
		for _, l := range []int{12, 13, 18, 19} {
			if !lines[l] {
				t.Errorf("%s: hardware PWM line GPIO%d not listed", name, l)
			}
		}
		if len(lines) != 4 {
			t.Errorf("%s: PWM lines %v, want exactly GPIO12/13/18/19", name, lines)
		}
	}
}

func TestProfilesAreDistinctAndFresh(t *testing.T) {
	want := []string{"rpi3b", "rpi3bplus", "rpi4b", "rpi5", "rpizero2w", "generic"}
	if got := Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	chips := map[string]string{
		"rpi3b": "pinctrl-bcm2835", "rpi3bplus": "pinctrl-bcm2835", "rpizero2w": "pinctrl-bcm2835",
		"rpi4b": "pinctrl-bcm2711", "rpi5": "pinctrl-rp1", "generic": "",
	}
	for _, name := range want {
		p, ok := ByName(name)
		if !ok || p.Name != name {
			t.Fatalf("ByName(%q) = %v, %v", name, p, ok)
		}
		if p.GPIOChipLabel != chips[name] {
			t.Errorf("%s: chip label %q, want %q", name, p.GPIOChipLabel, chips[name])
		}
	}
	if _, ok := ByName("sim"); ok {
		t.Error("ByName(sim) found a profile; sim belongs to board/sim")
	}
	a, _ := ByName("rpi4b")
	a.Pins[11] = Pin{Number: 11, Kind: Ground}
	a.LineAliases["X"] = 1
	b, _ := ByName("rpi4b")
	if b.Pins[11].Kind != GPIO || b.LineAliases["X"] == 1 {
		t.Error("changing one profile changed another: profiles share state")
	}
}
