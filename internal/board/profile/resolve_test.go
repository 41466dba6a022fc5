package profile

import (
	"fmt"
	"strings"
	"testing"
)

func mustProfile(t *testing.T, name string) *Profile {
	t.Helper()
	p, ok := ByName(name)
	if !ok {
		t.Fatalf("ByName(%q): not found", name)
	}
	return p
}

func TestResolvePin(t *testing.T) {
	tests := []struct {
		board, spec string
		want        LineRef
	}{
		{"rpi4b", "GPIO17", LineRef{"pinctrl-bcm2711", 17, "GPIO17"}},
		{"rpi4b", "gpio17", LineRef{"pinctrl-bcm2711", 17, "GPIO17"}},
		{"rpi4b", "pin11", LineRef{"pinctrl-bcm2711", 17, "GPIO17"}},
		{"rpi4b", " PIN40 ", LineRef{"pinctrl-bcm2711", 21, "GPIO21"}},
		{"rpi4b", "pin3", LineRef{"pinctrl-bcm2711", 2, "GPIO2"}},
		{"rpi4b", "GPIO017", LineRef{"pinctrl-bcm2711", 17, "GPIO17"}},
		{"rpi5", "pin11", LineRef{"pinctrl-rp1", 17, "GPIO17"}},
		{"rpi5", "GPIO27", LineRef{"pinctrl-rp1", 27, "GPIO27"}},
		{"rpi3b", "pin12", LineRef{"pinctrl-bcm2835", 18, "GPIO18"}},
		{"rpi3b", "SDA1", LineRef{"pinctrl-bcm2835", 2, "GPIO2"}},
		{"rpi3b", "SPI_CE0_N", LineRef{"pinctrl-bcm2835", 8, "GPIO8"}},
		{"rpi3bplus", "TXD1", LineRef{"pinctrl-bcm2835", 14, "GPIO14"}},
		{"rpizero2w", "GPIO4", LineRef{"pinctrl-bcm2835", 4, "GPIO4"}},
		{"rpi3bplus", "pinctrl-bcm2835:17", LineRef{"pinctrl-bcm2835", 17, "GPIO17"}},
		{"rpi4b", "gpiochip0:17", LineRef{"gpiochip0", 17, ""}},
		{"rpi5", "gpiochip4:17", LineRef{"gpiochip4", 17, ""}},
		// CHIP:OFFSET deliberately reaches the reserved ID lines and
		// lines off the header.
		{"rpi4b", "pinctrl-bcm2711:0", LineRef{"pinctrl-bcm2711", 0, "ID_SD"}},
		{"rpi4b", "pinctrl-bcm2711:42", LineRef{"pinctrl-bcm2711", 42, ""}},
		{"rpi4b", "raspberrypi-exp-gpio:2", LineRef{"raspberrypi-exp-gpio", 2, ""}},
		{"rpi5", "pinctrl-rp1:53", LineRef{"pinctrl-rp1", 53, ""}},
		{"generic", "GPIO17", LineRef{"", -1, "GPIO17"}},
		{"generic", "PA7", LineRef{"", -1, "PA7"}},
		{"generic", "gpiochip1:3", LineRef{"gpiochip1", 3, ""}},
		{"generic", "gpio-sim.0-node0:5", LineRef{"gpio-sim.0-node0", 5, ""}},
		{"generic", "pinctrl-bcm2711:5", LineRef{"pinctrl-bcm2711", 5, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.board+"/"+tt.spec, func(t *testing.T) {
			got, err := mustProfile(t, tt.board).ResolvePin(tt.spec)
			if err != nil {
				t.Fatalf("ResolvePin(%q): %v", tt.spec, err)
			}
			if got != tt.want {
				t.Errorf("ResolvePin(%q) = %+v, want %+v", tt.spec, got, tt.want)
			}
		})
	}
}

func TestResolvePinErrors(t *testing.T) {
	tests := []struct {
		board, spec string
		want        string // the whole message, or a part of it after "..."
	}{
		{"rpi4b", "pin2", "pin 2 is 5V power, not a GPIO"},
		{"rpi4b", "pin4", "pin 4 is 5V power, not a GPIO"},
		{"rpi4b", "pin1", "pin 1 is 3.3V power, not a GPIO"},
		{"rpi5", "pin17", "pin 17 is 3.3V power, not a GPIO"},
		{"rpi3b", "pin6", "pin 6 is ground (GND), not a GPIO"},
		{"rpizero2w", "pin39", "pin 39 is ground (GND), not a GPIO"},
		{"rpi4b", "pin27", "pin 27 is ID_SD (GPIO0), reserved for the HAT ID EEPROM, not a user GPIO (write pinctrl-bcm2711:0 to use the line anyway)"},
		{"rpi5", "pin28", "pin 28 is ID_SC (GPIO1), reserved for the HAT ID EEPROM, not a user GPIO (write pinctrl-rp1:1 to use the line anyway)"},
		{"rpi4b", "GPIO1", `"GPIO1" is ID_SC on pin 28, reserved for the HAT ID EEPROM, not a user GPIO (write pinctrl-bcm2711:1 to use the line anyway)`},
		{"rpi5", "ID_SDA", `..."ID_SDA" is ID_SD on pin 27, reserved`},
		{"rpi4b", "pin0", `"pin0": the Raspberry Pi 4 Model B's header has pins 1 to 40`},
		{"rpi4b", "pin41", `"pin41": the Raspberry Pi 4 Model B's header has pins 1 to 40`},
		{"rpi4b", "GPIO28", `"GPIO28": GPIO28 is not on the Raspberry Pi 4 Model B's 40-pin header (GPIO2 to GPIO27); address other lines as pinctrl-bcm2711:28`},
		{"rpi4b", "GPIO99", "...nor on its chip pinctrl-bcm2711 (58 lines)"},
		{"rpi4b", "LED", `"LED": unknown line on the Raspberry Pi 4 Model B: want GPIO2..GPIO27, pin1..pin40 or CHIP:OFFSET (pinctrl-bcm2711:17)`},
		{"rpi4b", "GPIO 17", `..."GPIO 17": unknown line`},
		{"rpi4b", "GPIO-1", `..."GPIO-1": unknown line`},
		{"rpi5", "SDA1", `..."SDA1": unknown line on the Raspberry Pi 5`},
		{"rpi4b", "", "empty pin: want a line name (GPIO17), a header pin (pin11) or CHIP:OFFSET (gpiochip0:17)"},
		{"generic", "  ", "...empty pin"},
		{"rpi4b", ":3", `":3": no chip before ':' (want pinctrl-bcm2711:17 or gpiochip0:17)`},
		{"rpi4b", "gpiochip0:x", `"gpiochip0:x": offset "x" is not a line number (0 or more)`},
		{"rpi4b", "gpiochip0:-1", `..."gpiochip0:-1": offset "-1" is not a line number`},
		{"rpi4b", "gpiochip0:+1", `..."gpiochip0:+1": offset "+1" is not a line number`},
		{"rpi4b", "gpiochip0:", `..."gpiochip0:": offset "" is not a line number`},
		{"generic", "my chip:3", `..."my chip:3": chip "my chip" contains a space`},
		{"rpi4b", "pinctrl-bcm2711:58", `"pinctrl-bcm2711:58": offset 58 out of range: pinctrl-bcm2711 has 58 lines (0 to 57)`},
		{"rpi5", "pinctrl-rp1:54", "...offset 54 out of range: pinctrl-rp1 has 54 lines"},
		{"rpi4b", "pinctrl-rp1:17", `"pinctrl-rp1:17": pinctrl-rp1 is another Raspberry Pi model's GPIO chip; the Raspberry Pi 4 Model B's header chip is pinctrl-bcm2711`},
		{"rpi5", "pinctrl-bcm2835:4", "...the Raspberry Pi 5's header chip is pinctrl-rp1"},
		{"generic", "pin11", `"pin11": the generic board has no known header: name the line (GPIO17) or give CHIP:OFFSET (gpiochip0:17)`},
	}
	for _, tt := range tests {
		t.Run(tt.board+"/"+tt.spec, func(t *testing.T) {
			got, err := mustProfile(t, tt.board).ResolvePin(tt.spec)
			if err == nil {
				t.Fatalf("ResolvePin(%q) = %+v, want error %q", tt.spec, got, tt.want)
			}
			if part, ok := strings.CutPrefix(tt.want, "..."); ok {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("ResolvePin(%q) error %q, want it to contain %q", tt.spec, err, part)
				}
			} else if err.Error() != tt.want {
				t.Errorf("ResolvePin(%q) error\n got %q\nwant %q", tt.spec, err, tt.want)
			}
		})
	}
}

// Every user GPIO pin of the published pinout resolves to its BCM line on
// each Pi's header chip, by pin number and by line name alike.
func TestResolveEveryHeaderPin(t *testing.T) {
	published := publishedPinout()
	for _, name := range piProfiles() {
		p := mustProfile(t, name)
		for n := 1; n <= 40; n++ {
			want := parsePublished(t, n, published[n])
			ref, err := p.ResolvePin(fmt.Sprintf("pin%d", n))
			if want.Kind != GPIO {
				if err == nil {
					t.Errorf("%s pin%d (%s) resolved to %v", name, n, published[n], ref)
				}
				continue
			}
			wantRef := LineRef{Chip: p.GPIOChipLabel, Offset: want.BCM, Name: want.Line}
			if err != nil || ref != wantRef {
				t.Errorf("%s pin%d = %v, %v; want %v", name, n, ref, err, wantRef)
			}
			byName, err := p.ResolvePin(want.Line)
			if err != nil || byName != wantRef {
				t.Errorf("%s %s = %v, %v; want %v", name, want.Line, byName, err, wantRef)
			}
		}
	}
}

func TestLineRefString(t *testing.T) {
	tests := []struct {
		ref  LineRef
		want string
	}{
		{LineRef{"pinctrl-rp1", 17, "GPIO17"}, "pinctrl-rp1:17 (GPIO17)"},
		{LineRef{"gpiochip0", 3, ""}, "gpiochip0:3"},
		{LineRef{"", -1, "PA7"}, "PA7"},
	}
	for _, tt := range tests {
		if got := tt.ref.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.ref, got, tt.want)
		}
	}
}
