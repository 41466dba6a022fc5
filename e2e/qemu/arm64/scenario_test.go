package arm64_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/e2e/qemu/qemutest"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// scenario holds what the checks drive: the guest (command channel, QMP),
// the HAL connection and the instruments.
type scenario struct {
	ctx  context.Context
	g    *qemutest.Guest
	conn *halclient.Conn
	rec  *recorder
	qmp  *qemutest.QMP
	usb  *instrument
	pci  *instrument
	logf func(format string, args ...any)
}

const notifyWait = 30 * time.Second

// shell runs command in the guest through the command channel.
func (s *scenario) shell(command string) (string, error) {
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	return s.g.Shell(ctx, command)
}

// qmpRun runs a QMP command whose answer is only success or an error.
func (s *scenario) qmpRun(command string, args any) error {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	_, err := s.qmp.Run(ctx, command, args)
	return err
}

// lineValue reads a gpio-sim line's level in the guest ("0" or "1").
func (s *scenario) lineValue(offset int) (string, error) {
	out, err := s.shell("cat " + simAttr(offset, "value"))
	return strings.TrimSpace(out), err
}

func (s *scenario) pull(offset int, dir string) error {
	out, err := s.shell("echo pull-" + dir + " >" + simAttr(offset, "pull"))
	if err != nil || strings.TrimSpace(out) != "" {
		return fmt.Errorf("pull-%s line %d: %q %v", dir, offset, out, err)
	}
	return nil
}

// output writes true then false and reads the line after each write: the
// write is applied (the ioctl done) when the Hub answers.
func (s *scenario) output(id string, offset int) error {
	for _, c := range []struct {
		v    bool
		want string
	}{{true, "1"}, {false, "0"}} {
		res, err := s.conn.Write(s.ctx, id, c.v, "qemu system test")
		if err != nil {
			return fmt.Errorf("write %s %v: %w", id, c.v, err)
		}
		if res.Status != openhal.StatusApplied {
			return fmt.Errorf("write %s %v: status %q", id, c.v, res.Status)
		}
		got, err := s.lineValue(offset)
		if err != nil {
			return err
		}
		if got != c.want {
			return fmt.Errorf("after writing %s %v the line reads %q, want %q", id, c.v, got, c.want)
		}
	}
	return nil
}

// input pulls DOOR up and down; each settled level arrives as hal/value.
func (s *scenario) input() error {
	for _, c := range []struct {
		dir  string
		want bool
	}{{"up", true}, {"down", false}} {
		m := s.rec.mark()
		if err := s.pull(lineDoor, c.dir); err != nil {
			return err
		}
		if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, valueIs("bench.door", c.want)); err != nil {
			return fmt.Errorf("pull-%s: %w", c.dir, err)
		}
	}
	return nil
}

// debounce pulses CONTACT high for 0.5 s, much longer than the gateway
// takes to see an edge but shorter than the 2 s debounce, then holds it
// high and low: only the held levels may be published.
func (s *scenario) debounce() error {
	m := s.rec.mark()
	p := simAttr(lineContact, "pull")
	out, err := s.shell("echo pull-up >" + p + "; sleep 0.5; echo pull-down >" + p)
	if err != nil || strings.TrimSpace(out) != "" {
		return fmt.Errorf("pulse: %q %v", out, err)
	}
	for _, c := range []struct {
		dir  string
		want bool
	}{{"up", true}, {"down", false}} {
		if err := s.pull(lineContact, c.dir); err != nil {
			return err
		}
		if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, valueIs("bench.contact", c.want)); err != nil {
			return fmt.Errorf("held pull-%s: %w", c.dir, err)
		}
	}
	if got := s.rec.values(m, "bench.contact"); fmt.Sprint(got) != "[true false]" {
		return fmt.Errorf("bench.contact published %v, want [true false] (the pulse must publish nothing)", got)
	}
	return nil
}

// waitState waits until id is in state want, from its descriptor or a
// hal/deviceState after mark m.
func (s *scenario) waitState(m int, id string, want device.State) error {
	devs, err := s.conn.Devices(s.ctx)
	if err != nil {
		return fmt.Errorf("list devices: %w", err)
	}
	for _, d := range devs {
		if d.ID == id && d.State == want {
			return nil
		}
	}
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyDeviceState, stateIs(id, want)); err != nil {
		return fmt.Errorf("%s never %s: %w", id, want, err)
	}
	return nil
}

// ask writes a command with reply:true and returns the instrument's answer.
func (s *scenario) ask(id, command string) (string, error) {
	v, _ := json.Marshal(command)
	var res openhal.WriteResult
	err := s.conn.Call(s.ctx, openhal.MethodWrite, openhal.WriteParams{
		Device: id, Value: v, Reason: "qemu system test", Reply: true}, &res)
	if err != nil {
		return "", fmt.Errorf("write %s %q with reply: %w", id, command, halclient.Describe(err, openhal.MethodWrite, id))
	}
	answer, _ := res.Reply.(string)
	return answer, nil
}

// serial checks that a line the instrument sends reaches the client and
// that a command's reply comes back. A line sent while the port went
// offline is lost with the port, as on a real adapter: then the check waits
// for the port to be back and sends again, once. (QEMU 7.2's usb-serial is
// seen to drop off the bus and re-enumerate once, about 0.4 s after the
// gateway first opens it; the gateway rides through it.)
func (s *scenario) serial(id string, in *instrument) error {
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		if err = s.waitState(s.rec.mark(), id, device.StateOK); err != nil {
			return err
		}
		m := s.rec.mark()
		line := fmt.Sprintf("READING %s %d", in.name, attempt)
		if err = in.send(line); err != nil {
			return err
		}
		var offline bool
		_, err = s.rec.waitFor(s.ctx, m, notifyWait, "", func(n halclient.Notification) bool {
			offline = offline || (n.Method == openhal.NotifyDeviceState && stateIs(id, device.StateOffline)(n.Params))
			return offline || (n.Method == openhal.NotifyValue && valueIs(id, line)(n.Params))
		})
		if err != nil {
			return fmt.Errorf("line %q: %w", line, err)
		}
		if !offline {
			break
		}
		err = fmt.Errorf("%s went offline while the instrument sent %q", id, line)
		s.logf("%s went offline during attempt %d (line lost with the port); waiting for it to be back", id, attempt)
	}
	if err != nil {
		return err
	}
	got, err := s.ask(id, "*IDN?")
	if err != nil {
		return err
	}
	if got != in.idn() {
		return fmt.Errorf("*IDN? answered %q, want %q", got, in.idn())
	}
	return nil
}

// replug unplugs the USB serial adapter and plugs it back through QMP.
func (s *scenario) replug() error {
	m := s.rec.mark()
	if err := s.qmpRun("device_del", map[string]any{"id": "usbser"}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.ctx, notifyWait)
	defer cancel()
	if err := s.qmp.WaitEvent(ctx, "DEVICE_DELETED", "usbser"); err != nil {
		return err
	}
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyDeviceState, stateIs("bench.meter", device.StateOffline)); err != nil {
		return fmt.Errorf("after device_del: %w", err)
	}
	m = s.rec.mark()
	if err := s.qmpRun("device_add", map[string]any{"driver": "usb-serial", "id": "usbser", "chardev": "cu", "bus": "xhci.0"}); err != nil {
		return err
	}
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyDeviceState, stateIs("bench.meter", device.StateOK)); err != nil {
		return fmt.Errorf("after device_add: %w", err)
	}
	got, err := s.ask("bench.meter", "MEAS?")
	if err != nil {
		return err
	}
	if got != "MEAS 12.500 V" {
		return fmt.Errorf("MEAS? after the replug answered %q", got)
	}
	return nil
}

// stopButton presses STOP with the relay on: the Hub stops and drives the
// relay safe (the line reads 0); released, the stop can be lifted.
func (s *scenario) stopButton() error {
	if _, err := s.conn.Write(s.ctx, "bench.relay", true, "qemu system test"); err != nil {
		return fmt.Errorf("relay on: %w", err)
	}
	m := s.rec.mark()
	if err := s.pull(lineStop, "down"); err != nil {
		return err
	}
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyStopped, nil); err != nil {
		return fmt.Errorf("press: %w", err)
	}
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, valueIs("bench.relay", false)); err != nil {
		return fmt.Errorf("relay to safe: %w", err)
	}
	if got, err := s.lineValue(lineRelay); err != nil || got != "0" {
		return fmt.Errorf("relay line after the stop reads %q (%v), want 0", got, err)
	}
	m = s.rec.mark()
	if err := s.pull(lineStop, "up"); err != nil {
		return err
	}
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, valueIs("bench.stop", false)); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if err := s.conn.Resume(s.ctx); err != nil {
		return fmt.Errorf("resume after release: %w", err)
	}
	return nil
}
