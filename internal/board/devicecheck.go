package board

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/openhal/gateway/device"
)

// ops are the interlock operators, in the order messages name them.
var ops = []string{device.OpEq, device.OpNe, device.OpLt, device.OpLe, device.OpGt, device.OpGe}

// opList names the operators as device.CheckCondition does.
const opList = "eq, ne, lt, le, gt or ge"

// maxOnMsMax is the largest maxOnMs a time.Duration holds.
const maxOnMsMax = math.MaxInt64 / int64(time.Millisecond)

// devices checks the devices section and stopButton against the board's
// devices, as Descriptors describes them: nothing is started. On the sim
// board an entry must name one of its devices; on a real board each entry
// declares a device, checked by hardware. For a board that is not known
// there is nothing to check against (the board field has its own fault).
func (v *validator) devices(c *Config, t target, known bool) {
	if !known {
		return
	}
	var descs []device.Descriptor
	var own map[string]device.Rules
	if t.prof == nil {
		descs = c.Descriptors()
		_, own = c.builtin()
		v.simEntries(c)
	} else {
		descs = v.hardware(c, t)
	}
	all := map[string]device.Descriptor{}
	var ids []string
	for _, d := range descs {
		all[d.ID] = d
		ids = append(ids, d.ID)
	}
	for _, id := range c.fileOrder() {
		path := join("devices", id)
		d, ok := all[id]
		switch {
		case ok:
			v.device(path, d, c.Devices[id], own[id], all)
		case t.prof == nil:
			v.add(path, "no such device on the %s board (want one of %s)", c.Board, strings.Join(ids, ", "))
		}
	}
	v.stopButton(c.StopButtonID, all)
}

// device checks one entry of devices; d already carries the entry's risk
// and safe value, own is the board's rules for it.
func (v *validator) device(path string, d device.Descriptor, dc DeviceConfig, own device.Rules, all map[string]device.Descriptor) {
	if dc.Risk != nil && *dc.Risk != device.RiskLow && *dc.Risk != device.RiskHigh {
		v.add(path+".risk", "want low or high, got %q", *dc.Risk)
	}
	v.safe(path, d, dc)
	if dc.ConfirmTTL != nil {
		if !d.Access.CanWrite() {
			v.readOnly(path+".confirmTtl", d)
		} else {
			v.duration(path+".confirmTtl", *dc.ConfirmTTL)
		}
	}
	v.rules(path+".rules", d, dc, own, all)
	v.ownRulesNeedSafe(path, d, dc, own)
}

// readOnly reports a setting that only means something for a device that
// is written.
func (v *validator) readOnly(path string, d device.Descriptor) {
	field := path[strings.LastIndexByte(path, '.')+1:]
	v.add(path, "%s is read-only (access %q): nothing writes it, so %s makes no sense", d.ID, d.Access, field)
}

// rules checks the file's rules of device d.
func (v *validator) rules(path string, d device.Descriptor, dc DeviceConfig, own device.Rules, all map[string]device.Descriptor) {
	r := dc.Rules
	if !d.Access.CanWrite() {
		set := []bool{r.Minimum != nil, r.Maximum != nil, r.RateLimit != nil, r.MaxOnMs != nil, r.Interlock != nil}
		for i, name := range []string{"minimum", "maximum", "rateLimit", "maxOnMs", "interlock"} {
			if set[i] {
				v.readOnly(path+"."+name, d)
			}
		}
		return
	}
	okMin := v.bound(path+".minimum", d, r.Minimum)
	okMax := v.bound(path+".maximum", d, r.Maximum)
	eff := dc.merge(own)
	if okMin && okMax && (r.Minimum != nil || r.Maximum != nil) &&
		eff.Minimum != nil && eff.Maximum != nil && *eff.Minimum > *eff.Maximum {
		p := path + ".minimum"
		if r.Minimum == nil {
			p = path + ".maximum"
		}
		v.add(p, "minimum %v is above maximum %v", *eff.Minimum, *eff.Maximum)
	}
	if r.RateLimit != nil && *r.RateLimit <= 0 {
		v.add(path+".rateLimit", "must be a positive number of writes per second, got %d", *r.RateLimit)
	}
	if r.MaxOnMs != nil {
		switch ms := *r.MaxOnMs; {
		case ms <= 0:
			v.add(path+".maxOnMs", "must be a positive number of milliseconds, got %d", ms)
		case ms > maxOnMsMax:
			v.add(path+".maxOnMs", "%d ms is too long (at most %d)", ms, maxOnMsMax)
		default:
			v.needsSafe(path+".maxOnMs", d, "to go back to")
		}
	}
	if r.Interlock == nil {
		return
	}
	if len(r.Interlock) > 0 {
		v.needsSafe(path+".interlock", d, "to drive it to when a condition stops holding")
	}
	for i, c := range r.Interlock {
		v.condition(fmt.Sprintf("%s.interlock[%d]", path, i), d, c, all)
	}
}

// needsSafe reports a rule that returns d to its safe value when d has
// none, or when d's value is not what is written to it (a serial device's
// value is the last line it received), so that "away from safe" means
// nothing.
func (v *validator) needsSafe(path string, d device.Descriptor, what string) {
	switch {
	case d.Safe == nil && d.NoSafeReason != "" && d.Kind != device.KindSerial:
		v.add(path, "%s has safe: none, so no safe value %s (give it one)", d.ID, what)
	case d.Safe == nil && d.Kind != device.KindSerial:
		v.add(path, "%s has no safe value %s (set its safe)", d.ID, what)
	case d.Kind == device.KindSerial:
		v.add(path, "%s's value is the last line it received, not what was written: it is never at its safe value", d.ID)
	}
}

// bound checks a minimum or maximum rule against d's schema, and reports
// whether it is usable.
func (v *validator) bound(path string, d device.Descriptor, b *float64) bool {
	if b == nil {
		return true
	}
	field := path[strings.LastIndexByte(path, '.')+1:]
	s := d.Schema
	switch {
	case s.Type != device.TypeNumber && s.Type != device.TypeInteger:
		v.add(path, "%s's value is %s: %s applies to numbers only", d.ID, article(s.Type), field)
	case math.IsNaN(*b) || math.IsInf(*b, 0):
		v.add(path, "want a finite number, got %v", *b)
	case (s.Minimum != nil && *b < *s.Minimum) || (s.Maximum != nil && *b > *s.Maximum):
		v.add(path, "%v is outside %s's range (%s)", *b, d.ID, rangeOf(s))
	default:
		return true
	}
	return false
}

// condition checks one interlock condition of device self.
func (v *validator) condition(path string, self device.Descriptor, c Condition, all map[string]device.Descriptor) {
	other, known := all[c.Device]
	switch {
	case c.Device == "":
		v.add(path+".device", "required")
	case c.Device == self.ID:
		v.add(path+".device", "%s cannot be interlocked on itself", self.ID)
		known = false
	case !known && v.skip[c.Device]:
		// Declared with faults of its own, reported where it is.
	case !known:
		v.add(path+".device", "no such device %q", c.Device)
	}
	switch {
	case c.Op == "":
		v.add(path+".op", "required (%s)", opList)
	case !slices.Contains(ops, c.Op):
		v.add(path+".op", "unknown op %q (want %s)", c.Op, opList)
	}
	if c.Value == nil {
		v.add(path+".value", "required")
	}
	if !known || !slices.Contains(ops, c.Op) || c.Value == nil {
		return
	}
	if msg := device.CheckCondition(c.device(), other.Schema); msg != "" {
		field := ".value"
		numeric := other.Schema.Type == device.TypeNumber || other.Schema.Type == device.TypeInteger
		if c.Op != device.OpEq && c.Op != device.OpNe && !numeric {
			field = ".op"
		}
		v.add(path+field, "%s", msg)
	}
}

// stopButton checks that the stop button is an input of the board.
func (v *validator) stopButton(id string, all map[string]device.Descriptor) {
	if id == "" {
		return
	}
	d, ok := all[id]
	switch {
	case !ok && v.skip[id]:
	case !ok:
		v.add("stopButton", "no such device %q", id)
	case d.Kind != device.KindGPIOInput:
		v.add("stopButton", "%s is a %s; a stop button must be a %s", id, d.Kind, device.KindGPIOInput)
	}
}

// rangeOf describes the range a number schema allows.
func rangeOf(s device.Schema) string {
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		return fmt.Sprintf("%v to %v", *s.Minimum, *s.Maximum)
	case s.Minimum != nil:
		return fmt.Sprintf("at least %v", *s.Minimum)
	default:
		return fmt.Sprintf("at most %v", *s.Maximum)
	}
}

// article puts "a" or "an" before a schema type.
func article(typ string) string {
	if typ != "" && strings.ContainsRune("aeiou", rune(typ[0])) {
		return "an " + typ
	}
	return "a " + typ
}

// show writes a device value as JSON, as clients see it.
func show(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}
