package profile

import (
	"maps"
	"regexp"
	"strconv"
	"testing"
)

// The SPI0 lines as the published pinout names them (publishedPinout:
// pins 19, 21, 23, 24, 26), independently of bcmSPI's table.
func TestSPI0MatchesThePublishedPinout(t *testing.T) {
	published := map[string]int{}
	re := regexp.MustCompile(`^GPIO (\d+) \((MOSI|MISO|SCLK|CE0|CE1)\)$`)
	for _, s := range publishedPinout() {
		if m := re.FindStringSubmatch(s); m != nil {
			published[m[2]], _ = strconv.Atoi(m[1])
		}
	}
	for _, name := range []string{"rpi3b", "rpi3bplus", "rpi4b", "rpi5", "rpizero2w"} {
		p, _ := ByName(name)
		if len(p.SPI) == 0 || p.SPI[0].Name != "spi0" {
			t.Fatalf("%s: no spi0 first in %+v", name, p.SPI)
		}
		s := p.SPI[0]
		got := map[string]int{"SCLK": s.SCLK, "MOSI": s.MOSI, "MISO": s.MISO, "CE0": s.CS[0], "CE1": s.CS[1]}
		if !maps.Equal(got, published) {
			t.Errorf("%s spi0 = %v, the pinout says %v", name, got, published)
		}
	}
}

// Every SPI line is a GPIO of the header, and a note's "pin N (FUNC)"
// names the header pin of that function's line.
func TestSPINotesNameTheirPins(t *testing.T) {
	pinFn := regexp.MustCompile(`(\d+) \((SCLK|MOSI|MISO|CE\d)\)`)
	for _, p := range all() {
		for _, s := range p.SPI {
			lines := s.Lines(len(s.CS) - 1)
			if len(lines) != 3+len(s.CS) {
				t.Errorf("%s %s: lines %v overlap", p.Name, s.Name, lines)
			}
			byFn := map[string]int{}
			for line, fn := range lines {
				byFn[fn] = line
				if pin, ok := p.HeaderPin(line); !ok || pin.Kind != GPIO {
					t.Errorf("%s %s: %s GPIO%d is not a GPIO of the header", p.Name, s.Name, fn, line)
				}
			}
			ms := pinFn.FindAllStringSubmatch(s.Note, -1)
			if len(ms) != len(lines) {
				t.Errorf("%s %s: the note names %d pins, the controller has %d lines: %q", p.Name, s.Name, len(ms), len(lines), s.Note)
			}
			for _, m := range ms {
				n, _ := strconv.Atoi(m[1])
				pin, ok := p.HeaderPin(byFn[m[2]])
				if !ok || pin.Number != n {
					t.Errorf("%s %s: the note puts %s on pin %s, the header on pin %d", p.Name, s.Name, m[2], m[1], pin.Number)
				}
			}
		}
	}
}

func TestSPILines(t *testing.T) {
	p, _ := ByName("rpi4b")
	spi0, spi1 := p.SPI[0], p.SPI[1]
	for _, tc := range []struct {
		s     SPI
		maxCS int
		want  map[int]string
	}{
		// dtparam=spi=on takes both chip selects of SPI0 whichever is used.
		{spi0, 0, map[int]string{11: "SCLK", 10: "MOSI", 9: "MISO", 8: "CE0", 7: "CE1"}},
		{spi0, 1, map[int]string{11: "SCLK", 10: "MOSI", 9: "MISO", 8: "CE0", 7: "CE1"}},
		// spi1-1cs takes CE0 alone, spi1-2cs CE0 and CE1.
		{spi1, 0, map[int]string{21: "SCLK", 20: "MOSI", 19: "MISO", 18: "CE0"}},
		{spi1, 1, map[int]string{21: "SCLK", 20: "MOSI", 19: "MISO", 18: "CE0", 17: "CE1"}},
	} {
		if got := tc.s.Lines(tc.maxCS); !maps.Equal(got, tc.want) {
			t.Errorf("%s.Lines(%d) = %v, want %v", tc.s.Name, tc.maxCS, got, tc.want)
		}
	}
	if got := spi1.Device(2); got != "/dev/spidev1.2" {
		t.Errorf("Device(2) = %q", got)
	}
	g, _ := ByName("generic")
	if len(g.SPI) != 0 {
		t.Errorf("the generic profile knows SPI controllers: %v", g.SPI)
	}
}
