package board

import (
	"github.com/openhal/gateway/device"
)

// SafeNone is the word of `safe: none`: the output has no safe value, on
// purpose, and noSafeReason says why. Every other output has one: its
// kind's off value unless the file gives another (DefaultSafe).
const SafeNone = "none"

// serialNoSafe is why a serial device without a safe line has no safe
// value: a line sent is not a state the stop could return to.
const serialNoSafe = "a serial line: the stop sends it no line; its safe may name one"

// safeNone reports whether the file says `safe: none` for the device.
func (dc DeviceConfig) safeNone() bool {
	s, ok := dc.Safe.(string)
	return ok && s == SafeNone
}

// DefaultSafe is the safe value of an output of kind when the file gives
// none: off, which is the inactive level of a GPIO output (its `invert`
// makes that level high, not the value) and duty 0 for a PWM. Other
// kinds have no default: nil.
func DefaultSafe(kind string) any {
	switch kind {
	case device.KindGPIOOutput:
		return false
	case device.KindPWM:
		return 0.0
	}
	return nil
}

// applySafe sets d's safe value as dc states it over the one d has: the
// file's value, or none with the file's reason.
func (dc DeviceConfig) applySafe(d device.Descriptor) device.Descriptor {
	switch {
	case dc.safeNone():
		d.Safe, d.NoSafeReason = nil, dc.NoSafeReason
	case dc.Safe != nil:
		d.Safe, d.NoSafeReason = dc.Safe, ""
	}
	return d
}

// Warnings returns what `gateway check` and `gateway run` point out in a
// valid file without refusing it: each plain listener that insecure lets
// carry tokens in clear beyond loopback, and each output with
// `safe: none`, which an emergency stop, a broken interlock and the
// shutdown leave as it is.
func (c *Config) Warnings() Errors {
	out := c.Hub.Listen.listenWarnings()
	for _, id := range c.fileOrder() {
		dc := c.Devices[id]
		if dc.safeNone() {
			out = append(out, FieldError{Path: join("devices", id) + ".safe",
				Msg: "none: an emergency stop leaves " + id + " as it is (" + dc.NoSafeReason + ")"})
		}
	}
	return out
}

// safe checks the entry's safe and noSafeReason against d, the device
// before the entry's safe is applied to it.
func (v *validator) safe(path string, d device.Descriptor, dc DeviceConfig) {
	switch {
	case dc.safeNone() && !d.Access.CanWrite():
		v.readOnly(path+".safe", d)
	case dc.safeNone() && dc.NoSafeReason == "":
		v.add(path+".noSafeReason", "required with safe: none: say why an emergency stop must leave %s as it is", d.ID)
	case dc.NoSafeReason != "" && !dc.safeNone():
		v.add(path+".noSafeReason", "only with safe: none (it says why %s has no safe value)", d.ID)
	case dc.safeNone():
	case dc.Safe != nil && !d.Access.CanWrite():
		v.readOnly(path+".safe", d)
	case dc.Safe != nil:
		if err := d.Schema.Validate(dc.Safe); err != nil {
			v.add(path+".safe", "%s does not fit %s: %v", show(dc.Safe), d.ID, err)
		}
	}
}

// ownRulesNeedSafe reports the board's own rules that drive d back to
// its safe value when the file says `safe: none` and leaves those rules
// in force (the file's own rules are judged by needsSafe).
func (v *validator) ownRulesNeedSafe(path string, d device.Descriptor, dc DeviceConfig, own device.Rules) {
	if !dc.safeNone() {
		return
	}
	if own.MaxOn > 0 && dc.Rules.MaxOnMs == nil {
		v.add(path+".safe", "%s cannot have safe: none: the board's maxOnMs rule drives it back to its safe value", d.ID)
	}
	if len(own.Interlock) > 0 && dc.Rules.Interlock == nil {
		v.add(path+".safe", "%s cannot have safe: none: the board's interlock drives it to its safe value (interlock: [] removes it)", d.ID)
	}
}
