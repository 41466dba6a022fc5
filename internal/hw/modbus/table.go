package modbus

import "strconv"

// Table is one of a unit's four data tables.
type Table uint8

// The four tables. The zero Table is none of them.
const (
	Coils Table = iota + 1
	DiscreteInputs
	InputRegisters
	HoldingRegisters
)

// Limits of one request (Modbus Application Protocol V1.1b3, 6.1-6.12):
// what fits in a PDU of at most 253 bytes.
const (
	MaxReadBits       = 2000 // coils or discrete inputs in one read (fc 1, 2)
	MaxReadRegisters  = 125  // registers in one read (fc 3, 4)
	MaxWriteRegisters = 123  // registers in one write (fc 16)
	MaxWriteCoils     = 1968 // coils in one write (fc 15)
)

var tableNames = [...]string{Coils: "coil", DiscreteInputs: "discrete", InputRegisters: "input", HoldingRegisters: "holding"}

// String returns the table's name in the configuration: "coil",
// "discrete", "input" or "holding".
func (t Table) String() string {
	if t.valid() {
		return tableNames[t]
	}
	return "table(" + strconv.Itoa(int(t)) + ")"
}

func (t Table) valid() bool { return t >= Coils && t <= HoldingRegisters }

// ParseTable returns the table named s (as String writes it).
func ParseTable(s string) (Table, bool) {
	for t := Coils; t <= HoldingRegisters; t++ {
		if tableNames[t] == s {
			return t, true
		}
	}
	return 0, false
}

// Bits reports whether t holds bits (coils, discrete inputs) rather than
// 16-bit registers.
func (t Table) Bits() bool { return t == Coils || t == DiscreteInputs }

// Writable reports whether a master may write t (coils, holding
// registers); the other two are the unit's inputs.
func (t Table) Writable() bool { return t == Coils || t == HoldingRegisters }

// readFunction is the function code that reads t.
func (t Table) readFunction() byte {
	switch t {
	case Coils:
		return fcReadCoils
	case DiscreteInputs:
		return fcReadDiscreteInputs
	case HoldingRegisters:
		return fcReadHoldingRegisters
	case InputRegisters:
		return fcReadInputRegisters
	}
	return 0
}
