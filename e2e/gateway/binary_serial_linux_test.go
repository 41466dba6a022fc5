package gateway_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// instrument plays a serial instrument on the master side of a
// pseudo-terminal; the gateway opens the slave as its port.
type instrument struct {
	master *os.File
	slave  string // /dev/pts/N
}

// openInstrument opens a pseudo-terminal and answers every line the gateway sends with
// answer(line).
func openInstrument(t testing.TB, answer func(string) string) *instrument {
	t.Helper()
	m, slave := openPTMX(t)
	in := &instrument{master: m, slave: slave}
	go func() {
		lines := bufio.NewReader(m)
		for {
			line, err := lines.ReadString('\n')
			if err != nil {
				return // the master was closed: unplugged
			}
			m.WriteString(answer(strings.TrimRight(line, "\r\n")) + "\n")
		}
	}()
	return in
}

func (in *instrument) send(t *testing.T, line string) {
	t.Helper()
	if _, err := in.master.WriteString(line + "\n"); err != nil {
		t.Fatalf("instrument: %v", err)
	}
}

// plugAt points the stable path link at in's slave, replacing the link
// atomically as udev replaces /dev/serial/by-id links.
func (in *instrument) plugAt(t testing.TB, link string) {
	t.Helper()
	tmp := link + ".new"
	os.Remove(tmp)
	if err := os.Symlink(in.slave, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
}

// TestBinarySerialInstrument: on a generic board, a serial instrument on
// a pseudo-terminal behind a stable link: its lines become values, a
// write with --reply gets its answer, unplugging it (closing the master)
// makes the device offline, and a new terminal at the same link brings
// it back.
func TestBinarySerialInstrument(t *testing.T) {
	dir := t.TempDir()
	answer := func(q string) string {
		if q == "*IDN?" {
			return "ACME,METER,42"
		}
		return "ERR unknown " + q
	}
	link := filepath.Join(dir, "meter")
	first := openInstrument(t, answer)
	first.plugAt(t, link)
	config := writeConfig(t, fmt.Sprintf(`board: generic
devices:
  bench.meter:
    kind: serial
    label: Bench meter
    port: %s
    baud: 9600
    risk: low
`, link))
	g := startGatewayWith(t, dir, 1, "--config", config)
	g.err.waitFor(t, 0, `msg="serial port open" device=bench.meter`, waitLong)

	flags := []string{"--hub", g.tcp, "--state-dir", dir}
	client := func(args ...string) []string { return append(args, flags...) }
	w := startChild(t, client("watch")...)
	w.out.waitFor(t, 0, watchTS+`connected to `, waitLong)

	first.send(t, "21.5 V")
	w.out.waitFor(t, 0, watchTS+`bench\.meter = "21\.5 V" \(seq \d+(, current)?\)$`, waitLong)

	out := gwOK(t, client("write", "--reply", "bench.meter", "*IDN?")...)
	if !strings.Contains(out, `bench.meter answered "ACME,METER,42"`) {
		t.Errorf("write --reply printed %q", out)
	}

	first.master.Close()
	from, _ := w.out.waitFor(t, 0, watchTS+`bench\.meter: state offline`, waitLong)

	second := openInstrument(t, answer)
	second.plugAt(t, link)
	w.out.waitFor(t, from, watchTS+`bench\.meter: state ok`, waitLong)
	second.send(t, "22.0 V")
	w.out.waitFor(t, from, watchTS+`bench\.meter = "22\.0 V" \(seq \d+(, current)?\)$`, waitLong)
	out = gwOK(t, client("write", "--reply", "bench.meter", "*IDN?")...)
	if !strings.Contains(out, `bench.meter answered "ACME,METER,42"`) {
		t.Errorf("write --reply after replugging printed %q", out)
	}
	if code, _ := w.signal(t, syscall.SIGINT, 3e9); code != 0 {
		t.Errorf("watch exited %d", code)
	}
	g.stop(t)
}
