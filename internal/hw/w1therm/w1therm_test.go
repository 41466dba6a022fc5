package w1therm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bus lays out a w1 devices directory as the kernel does: a directory a
// device (with w1_slave for thermometers), and the bus master's.
func bus(t *testing.T, slaves map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{"w1_bus_master1", "01-000012345678"} { // the master, a DS2401 serial number
		if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for id, text := range slaves {
		plug(t, root, id, text)
	}
	return root
}

func plug(t *testing.T, root, id, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, id, "w1_slave"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The kernel's documented example, a negative reading, and the reads
// that must be faults.
func TestSense(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       float64
		err        string
	}{
		{"documented", "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=23125\n", 23.125, ""},
		{"below zero", "5e ff 4b 46 7f ff 02 10 8b : crc=8b YES\n5e ff 4b 46 7f ff 02 10 8b t=-10125\n", -10.125, ""},
		{"85 °C converted", "50 05 4b 46 7f ff 10 10 1a : crc=1a YES\n50 05 4b 46 7f ff 10 10 1a t=85000\n", 85, ""},
		{"crc mismatch", "72 01 4b 46 7f ff 0e 10 58 : crc=57 NO\n72 01 4b 46 7f ff 0e 10 58 t=23125\n", 0, "CRC mismatch"},
		{"all zeros", "00 00 00 00 00 00 00 00 00 : crc=00 YES\n00 00 00 00 00 00 00 00 00 t=0\n", 0, "all zeros"},
		{"power-on value", "50 05 4b 46 7f ff 0c 10 1c : crc=1c YES\n50 05 4b 46 7f ff 0c 10 1c t=85000\n", 0, "conversion did not run"},
		{"short of power", "ff 07 4b 46 7f ff 0c 10 fc : crc=fc YES\nff 07 4b 46 7f ff 0c 10 fc t=127937\n", 0, "conversion did not run"},
		{"one line", "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n", 0, "has 1 lines"},
		{"no t=", "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57\n", 0, "no t="},
		{"not hex", "zz 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=1\n", 0, "not nine bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const id = "28-0316a2791aff"
			d, err := New(bus(t, map[string]string{id: tc.text}), id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(context.Background())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), id) {
					t.Fatalf("Sense = %v, %v; want an error naming %s with %q", got, err, id, tc.err)
				}
				return
			}
			if err != nil || got["temperature"] != tc.want {
				t.Fatalf("Sense = %v, %v; want %v °C", got, err, tc.want)
			}
		})
	}
}

// A sensor unplugged is a fault of each read while it is away, and reads
// again once the kernel lists it again: nothing to reset.
func TestUnpluggedClearsByItself(t *testing.T) {
	const id = "28-00000a1b2c3d"
	root := bus(t, nil)
	d, err := New(root, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sense(context.Background()); err == nil || !strings.Contains(err.Error(), "not on the 1-Wire bus") {
		t.Fatalf("absent: %v", err)
	}
	plug(t, root, id, "90 01 4b 46 7f ff 10 10 9f : crc=9f YES\n90 01 4b 46 7f ff 10 10 9f t=25000\n")
	if got, err := d.Sense(context.Background()); err != nil || got["temperature"] != 25 {
		t.Fatalf("plugged in: %v, %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	// No devices directory at all: the overlay is not loaded.
	d, err = New(filepath.Join(root, "absent"), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sense(context.Background()); err == nil || !strings.Contains(err.Error(), "no 1-Wire bus (is the w1-gpio overlay loaded?") {
		t.Fatalf("no bus: %v", err)
	}
}

func TestList(t *testing.T) {
	root := bus(t, map[string]string{"28-0316a2791aff": "", "10-000802b4e5c1": "", "22-000000abcdef": ""})
	ids, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10-000802b4e5c1", "22-000000abcdef", "28-0316a2791aff"}; !slices.Equal(ids, want) {
		t.Fatalf("List = %v, want %v (no bus master, no DS2401)", ids, want)
	}
	if _, err := List(filepath.Join(root, "absent")); err == nil || !strings.Contains(err.Error(), "w1-gpio overlay") {
		t.Fatalf("no bus: %v", err)
	}
}

func TestCheckID(t *testing.T) {
	for id, want := range map[string]string{
		"28-0316a2791aff": "",
		"3b-0316a2791aff": "",
		"28-0316A2791AFF": "not a 1-Wire id",
		"28-0316a2791af":  "not a 1-Wire id",
		"0316a2791aff":    "not a 1-Wire id",
		"01-000012345678": "not a thermometer",
		"../28-0316a2791": "not a 1-Wire id",
	} {
		err := CheckID(id)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("CheckID(%q) = %v, want %q", id, err, want)
		}
		if _, nerr := New("", id); (nerr == nil) != (err == nil) {
			t.Errorf("New(%q): %v, CheckID: %v", id, nerr, err)
		}
	}
	if Chip("28-0316a2791aff") != "DS18B20" || Chip("10-000802b4e5c1") != "DS18S20" {
		t.Error("Chip names the wrong chip")
	}
}
