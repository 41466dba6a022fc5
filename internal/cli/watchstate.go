package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// What `gateway watch` remembers between events: the devices it was asked
// for, the descriptors (for units), and the stop in force, so that a stop
// is told as engaged, engaged again, or lifted while the watch was away.

// watchFilter turns DEVICE... into the set to keep; nil keeps every
// device. An argument that is not a device id at all is a usage error.
func watchFilter(fs *flag.FlagSet, ids []string, _ io.Writer) (map[string]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	only := map[string]bool{}
	for _, id := range ids {
		if !device.ValidID(id) {
			return nil, Usagef(fs, "%q is not a device id (lower-case letters, digits, '.', '_' and '-')", id)
		}
		only[id] = true
	}
	return only, nil
}

// wanted reports whether e concerns the devices asked for, and keeps the
// descriptors up to date. The first device list is checked against
// DEVICE...: one the token cannot see ends the watch with an error.
func (p *watchPrinter) wanted(e *halclient.WatchEvent) bool {
	switch e.Kind {
	case halclient.EventDevices:
		p.devs = map[string]device.Descriptor{}
		var kept []device.Descriptor
		for _, d := range e.Devices {
			p.devs[d.ID] = d
			if p.keeps(d.ID) {
				kept = append(kept, d)
			}
		}
		if !p.listed && p.only != nil {
			p.listed = true
			if err := p.checkListed(); err != nil {
				p.err = err
				p.cancel()
				return false
			}
			p.flushHeld()
		}
		e.Devices = kept
		return true
	case halclient.EventValue, halclient.EventReadFailed:
		return p.keeps(e.Device)
	case halclient.EventMissed:
		return e.Device == "" || p.keeps(e.Device) // a loss named by device, or Hub-wide
	case halclient.EventNotification:
		id, desc := noteDevice(*e.Notification)
		if desc != nil && p.devs != nil {
			p.devs[desc.ID] = *desc // hal/deviceAdded: its units from now on
		}
		return id == "" || p.keeps(id)
	}
	return true
}

// hold keeps the first connection's lines until the device list shows
// that DEVICE... exist: a watch of a device that is not there says so
// alone.
func (p *watchPrinter) hold(w io.Writer, line string) bool {
	if p.only == nil || p.listed {
		return false
	}
	p.held = append(p.held, heldLine{w, line})
	return true
}

type heldLine struct {
	w    io.Writer
	line string
}

func (p *watchPrinter) flushHeld() {
	for _, h := range p.held {
		fmt.Fprintln(h.w, h.line)
	}
	p.held = nil
}

// println prints a line, or holds it (see hold).
func (p *watchPrinter) println(w io.Writer, line string) {
	if !p.hold(w, line) {
		fmt.Fprintln(w, line)
	}
}

func (p *watchPrinter) keeps(id string) bool { return p.only == nil || p.only[id] }

// checkListed names the devices asked for that the hub did not list.
func (p *watchPrinter) checkListed() error {
	var missing []string
	for id := range p.only {
		if _, ok := p.devs[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return fmt.Errorf("watch: no %s %s on this gateway for this token (gateway devices lists them)",
		plural(uint64(len(missing)), "device", "devices"), strings.Join(missing, ", "))
}

// noteDevice is the device a notification is about ("" for none: the
// stop, the resume), and the descriptor a hal/deviceAdded carries.
func noteDevice(n halclient.Notification) (string, *device.Descriptor) {
	var p struct {
		Device       json.RawMessage       `json:"device"`
		Confirmation *openhal.Confirmation `json:"confirmation"`
	}
	if json.Unmarshal(n.Params, &p) != nil {
		return "", nil
	}
	if p.Confirmation != nil {
		return p.Confirmation.Device, nil
	}
	var id string
	if json.Unmarshal(p.Device, &id) == nil {
		return id, nil
	}
	var desc device.Descriptor
	if json.Unmarshal(p.Device, &desc) == nil && desc.ID != "" {
		return desc.ID, &desc
	}
	return "", nil
}

// track follows the stop through the notifications that tell it.
func (p *watchPrinter) track(e halclient.WatchEvent) {
	if e.Kind != halclient.EventNotification {
		return
	}
	switch e.Notification.Method {
	case openhal.NotifyStopped:
		var sp openhal.StoppedParams
		if json.Unmarshal(e.Notification.Params, &sp) == nil {
			p.stopped = &openhal.StopInfo{Principal: sp.Principal, Reason: sp.Reason, TS: sp.TS, Failed: sp.Failed, LeftAsIs: sp.LeftAsIs}
		}
	case openhal.NotifyResumed:
		p.stopped = nil
	}
}

// connectedStop tells, on every (re)connection, the stop in force — a
// connection during a stop gets no hal/stopped for it — or that the stop
// this watch knew of was lifted while it was disconnected.
func (p *watchPrinter) connectedStop(s *openhal.StopInfo) {
	switch {
	case s != nil:
		p.println(p.status, watchStamp(p.now())+" "+stopBanner(s))
	case p.stopped != nil:
		p.println(p.status, watchStamp(p.now())+" the emergency stop was lifted while this watch was disconnected")
	}
	p.stopped = s
}

// stamp is the time of an event: its own ts where it has one (a value's,
// a stop's: the hub's clock), else when this watch heard of it.
func (p *watchPrinter) stamp(e halclient.WatchEvent) time.Time {
	if e.Value != nil && !e.Value.TS.IsZero() {
		return e.Value.TS
	}
	if n := e.Notification; n != nil {
		var ts struct {
			TS time.Time `json:"ts"`
		}
		if json.Unmarshal(n.Params, &ts) == nil && !ts.TS.IsZero() {
			return ts.TS
		}
	}
	return p.now()
}

// valueText is a device's value with its units.
func (p *watchPrinter) valueText(id string, v any) string {
	return valueWithUnit(p.devs[id].Schema, v)
}

// stoppedLine says what a hal/stopped tells: who engaged the stop and
// why, which devices went to their safe values, which could not, and
// which it left as they are (no safe value).
// again is set when the stop was already engaged: a repeated stop drives
// the safe values again.
func stoppedLine(params json.RawMessage, again bool) string {
	var sp openhal.StoppedParams
	if err := json.Unmarshal(params, &sp); err != nil {
		return fmt.Sprintf("%s %s", openhal.NotifyStopped, params)
	}
	s := "EMERGENCY STOP engaged by "
	if again {
		s = "EMERGENCY STOP engaged again by "
	}
	s += principalText(sp.Principal)
	if r := oneLine(sp.Reason); r != "" {
		s += ": " + r
	}
	if len(sp.SafeApplied) > 0 {
		s += "; safe values applied to " + strings.Join(sp.SafeApplied, ", ")
	}
	for _, fl := range sp.Failed {
		s += "; FAILED: " + errorText(fl.Error, fl.Device, false)
	}
	if len(sp.LeftAsIs) > 0 {
		parts := make([]string, len(sp.LeftAsIs))
		for i, l := range sp.LeftAsIs {
			parts[i] = l.Device + " (" + oneLine(l.Reason) + ")"
		}
		s += "; left as they are: " + strings.Join(parts, ", ")
	}
	return s
}
