package device

// ValueChecker is a device that refuses some values its schema allows:
// values the device could not apply as asked, which must be refused
// before the write rather than fail at the hardware. A line device, whose
// string schema allows any text, refuses one holding a line break: it
// would reach the instrument as two commands.
//
// The Hub calls CheckValue after the schema check, for a client's write
// and again for an approved confirmation's. It must not block nor touch
// the hardware.
type ValueChecker interface {
	// CheckValue returns nil or a *ValueError whose Reason is a word
	// for the client (data.reason of INVALID_PARAMS).
	CheckValue(v any) error
}

// CheckValue asks d's ValueChecker about v; a device without one takes
// every value its schema allows.
func CheckValue(d Device, v any) error {
	if c, ok := d.(ValueChecker); ok {
		return c.CheckValue(v)
	}
	return nil
}
