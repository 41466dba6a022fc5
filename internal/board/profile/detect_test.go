package profile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func modelFS(model string) fstest.MapFS {
	return fstest.MapFS{ModelPath: {Data: []byte(model)}}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		file      string // contents of proc/device-tree/model, as the kernel writes it
		wantName  string
		wantModel string
	}{
		{"Raspberry Pi 4 Model B Rev 1.4\x00", "rpi4b", "Raspberry Pi 4 Model B Rev 1.4"},
		{"Raspberry Pi 4 Model B Rev 1.5\x00", "rpi4b", "Raspberry Pi 4 Model B Rev 1.5"},
		{"Raspberry Pi 5 Model B Rev 1.0\x00", "rpi5", "Raspberry Pi 5 Model B Rev 1.0"},
		{"Raspberry Pi 3 Model B Plus Rev 1.3\x00", "rpi3bplus", "Raspberry Pi 3 Model B Plus Rev 1.3"},
		{"Raspberry Pi 3 Model B Rev 1.2\x00", "rpi3b", "Raspberry Pi 3 Model B Rev 1.2"},
		{"Raspberry Pi Zero 2 W Rev 1.0\x00", "rpizero2w", "Raspberry Pi Zero 2 W Rev 1.0"},
		// Mainline kernels' model strings, without the firmware's "Rev".
		{"Raspberry Pi 3 Model B+\x00", "rpi3bplus", "Raspberry Pi 3 Model B+"},
		{"Raspberry Pi 3 Model B\x00", "rpi3b", "Raspberry Pi 3 Model B"},
		{"Raspberry Pi 5\x00", "rpi5", "Raspberry Pi 5"},
		{"Raspberry Pi 4 Model B Rev 1.4", "rpi4b", "Raspberry Pi 4 Model B Rev 1.4"}, // no NUL
		{"Raspberry Pi 4 Model B Rev 1.4\n", "rpi4b", "Raspberry Pi 4 Model B Rev 1.4"},
	}
	for _, tt := range tests {
		t.Run(tt.wantModel, func(t *testing.T) {
			p, err := Detect(modelFS(tt.file))
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			if p.Name != tt.wantName || p.Model != tt.wantModel || p.Note != "" {
				t.Errorf("Detect = %s (model %q, note %q), want %s (model %q, no note)",
					p.Name, p.Model, p.Note, tt.wantName, tt.wantModel)
			}
		})
	}
}

func TestDetectFallsBackToGeneric(t *testing.T) {
	tests := []struct {
		name      string
		fsys      fs.FS
		wantModel string
		wantNote  string
	}{
		{"unknown board", modelFS("Radxa ROCK 5B\x00"), "Radxa ROCK 5B",
			`model "Radxa ROCK 5B" is not a known board (known: Raspberry Pi 3 Model B; `},
		// Same family, other boards: their headers are not described.
		{"Pi 500", modelFS("Raspberry Pi 500 Rev 1.0\x00"), "Raspberry Pi 500 Rev 1.0", `model "Raspberry Pi 500 Rev 1.0" is not a known board`},
		{"Pi 400", modelFS("Raspberry Pi 400 Rev 1.0\x00"), "Raspberry Pi 400 Rev 1.0", "is not a known board"},
		{"CM4", modelFS("Raspberry Pi Compute Module 4 Rev 1.0\x00"), "Raspberry Pi Compute Module 4 Rev 1.0", "is not a known board"},
		{"Pi 2", modelFS("Raspberry Pi 2 Model B Rev 1.1\x00"), "Raspberry Pi 2 Model B Rev 1.1", "is not a known board"},
		{"empty model", modelFS("\x00"), "", "empty /proc/device-tree/model: using the generic profile"},
		{"no device tree", fstest.MapFS{"proc/cpuinfo": {Data: []byte("x")}}, "",
			"no /proc/device-tree/model (not a device-tree board): using the generic profile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Detect(tt.fsys)
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			if p.Name != "generic" || p.Model != tt.wantModel {
				t.Errorf("Detect = %s (model %q), want generic (model %q)", p.Name, p.Model, tt.wantModel)
			}
			if !strings.Contains(p.Note, tt.wantNote) {
				t.Errorf("note %q, want it to contain %q", p.Note, tt.wantNote)
			}
		})
	}
}

func TestDetectReadError(t *testing.T) {
	// A directory where the model file should be: readable as neither.
	fsys := fstest.MapFS{ModelPath + "/x": {Data: []byte("x")}}
	p, err := Detect(fsys)
	if err == nil {
		t.Fatalf("Detect = %v, want an error", p.Name)
	}
	if !strings.Contains(err.Error(), "detect board: read /proc/device-tree/model") {
		t.Errorf("error %q does not say what was being read", err)
	}
}

func TestDetectOnRealFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proc", "device-tree")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model"), []byte("Raspberry Pi 5 Model B Rev 1.0\x00"), 0o444); err != nil {
		t.Fatal(err)
	}
	p, err := Detect(os.DirFS(root))
	if err != nil || p.Name != "rpi5" {
		t.Fatalf("Detect = %v, %v; want rpi5", p, err)
	}
}

func TestMatchModelPrefersLongestWholeWordPrefix(t *testing.T) {
	tests := map[string]string{
		"Raspberry Pi 3 Model B Plus Rev 1.3": "rpi3bplus",
		"Raspberry Pi 3 Model B Rev 1.2":      "rpi3b",
		"Raspberry Pi 3 Model BX":             "",
		"Raspberry Pi 50":                     "",
		"raspberry pi 4 model b rev 1.4":      "", // the kernel's string is exact
	}
	for model, want := range tests {
		p, ok := MatchModel(model)
		got := ""
		if ok {
			got = p.Name
		}
		if got != want {
			t.Errorf("MatchModel(%q) = %q, want %q", model, got, want)
		}
		// The answer must not depend on the order profiles are listed in.
		rev := all()
		slices.Reverse(rev)
		got = ""
		if p, ok := matchModel(rev, model); ok {
			got = p.Name
		}
		if got != want {
			t.Errorf("matchModel(reversed profiles, %q) = %q, want %q", model, got, want)
		}
	}
}

func TestFindByController(t *testing.T) {
	// Early Pi 5 kernel: the fan's PWM1 probed first, the header's PWM0
	// came out as pwmchip2.
	pi5 := fstest.MapFS{
		"sys/class/pwm/pwmchip0": {Mode: fs.ModeSymlink, Data: []byte("../../devices/platform/axi/1000120000.pcie/1f0009c000.pwm/pwm/pwmchip0")},
		"sys/class/pwm/pwmchip2": {Mode: fs.ModeSymlink, Data: []byte("../../devices/platform/axi/1000120000.pcie/1f00098000.pwm/pwm/pwmchip2")},
		"sys/class/pwm/stray":    {Data: []byte("not a link")},
		"sys/class/tty/ttyAMA2":  {Mode: fs.ModeSymlink, Data: []byte("../../devices/platform/axi/1000120000.pcie/1f00038000.serial/tty/ttyAMA2")},
		"sys/class/tty/ttyAMA10": {Mode: fs.ModeSymlink, Data: []byte("../../devices/platform/soc/107d001000.serial/tty/ttyAMA10")},
	}
	tests := []struct {
		class, controller string
		want              []string
	}{
		{"pwm", "1f00098000.pwm", []string{"pwmchip2"}},
		{"pwm", "1f0009c000.pwm", []string{"pwmchip0"}},
		{"tty", "1f00038000.serial", []string{"ttyAMA2"}},
	}
	for _, tt := range tests {
		got, err := FindByController(pi5, tt.class, tt.controller)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("FindByController(%s, %s) = %v, %v; want %v", tt.class, tt.controller, got, err, tt.want)
		}
	}

	// A component must match whole: 8000.pwm is not 1f00098000.pwm.
	if got, err := FindByController(pi5, "pwm", "8000.pwm"); err == nil {
		t.Errorf("FindByController(pwm, 8000.pwm) = %v, want an error", got)
	} else if want := "find pwm device of 8000.pwm: none under /sys/class/pwm (is the controller enabled in config.txt?)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	_, err := FindByController(pi5, "i2c-dev", "1f00074000.i2c")
	if want := "find i2c-dev device of 1f00074000.i2c: /sys/class/i2c-dev does not exist: the kernel has no i2c-dev controller enabled (is the controller enabled in config.txt, and the machine rebooted since?)"; !errors.Is(err, fs.ErrNotExist) || err.Error() != want {
		t.Errorf("missing class directory: error %v, want %q wrapping fs.ErrNotExist", err, want)
	}
	if _, err := FindByController(pi5, "../pwm", "x"); err == nil {
		t.Error("a class with a slash was accepted")
	}
}

// The same search through os.DirFS and real symbolic links, as on a board.
func TestFindByControllerOnRealLinks(t *testing.T) {
	root := t.TempDir()
	dev := filepath.Join(root, "sys", "devices", "platform", "soc", "fe20c000.pwm", "pwm", "pwmchip0")
	class := filepath.Join(root, "sys", "class", "pwm")
	for _, d := range []string{dev, class} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../devices/platform/soc/fe20c000.pwm/pwm/pwmchip0", filepath.Join(class, "pwmchip0")); err != nil {
		t.Fatal(err)
	}
	p := mustProfile(t, "rpi4b")
	got, err := FindByController(os.DirFS(root), "pwm", p.PWM[0].Controller)
	if err != nil || !reflect.DeepEqual(got, []string{"pwmchip0"}) {
		t.Errorf("FindByController = %v, %v; want [pwmchip0]", got, err)
	}
}
