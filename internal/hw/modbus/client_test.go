package modbus

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
)

// scripted is a Transport that returns a fixed reply and records the
// request.
type scripted struct {
	unit  byte
	req   []byte
	reply []byte
	err   error
	calls int
}

func (s *scripted) Do(_ context.Context, unit byte, pdu []byte) ([]byte, error) {
	s.calls++
	s.unit, s.req = unit, slices.Clone(pdu)
	if s.err != nil {
		return nil, s.err
	}
	return checkReply(pdu[0], s.reply)
}

func (s *scripted) Close() error { return nil }

func b(x ...byte) []byte { return x }

// TestClientEncoding checks every function's request and the decoding
// of its reply.
func TestClientEncoding(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		call  func(c *Client) (any, error)
		req   []byte
		reply []byte
		want  any
	}{
		{"read coils", func(c *Client) (any, error) { return c.ReadBits(ctx, 7, Coils, 0x13, 10) },
			b(0x01, 0x00, 0x13, 0x00, 0x0A), b(0x01, 0x02, 0xCD, 0x01),
			[]bool{true, false, true, true, false, false, true, true, true, false}},
		{"read discrete", func(c *Client) (any, error) { return c.ReadBits(ctx, 7, DiscreteInputs, 0xC4, 3) },
			b(0x02, 0x00, 0xC4, 0x00, 0x03), b(0x02, 0x01, 0x05), []bool{true, false, true}},
		{"read holding", func(c *Client) (any, error) { return c.ReadRegisters(ctx, 7, HoldingRegisters, 0x6B, 3) },
			b(0x03, 0x00, 0x6B, 0x00, 0x03), b(0x03, 0x06, 0x02, 0x2B, 0x00, 0x00, 0x00, 0x64), []uint16{0x022B, 0, 0x64}},
		{"read input", func(c *Client) (any, error) { return c.ReadRegisters(ctx, 7, InputRegisters, 8, 1) },
			b(0x04, 0x00, 0x08, 0x00, 0x01), b(0x04, 0x02, 0x00, 0x0A), []uint16{10}},
		{"write coil on", func(c *Client) (any, error) { return nil, c.WriteCoil(ctx, 7, 0xAC, true) },
			b(0x05, 0x00, 0xAC, 0xFF, 0x00), b(0x05, 0x00, 0xAC, 0xFF, 0x00), nil},
		{"write coil off", func(c *Client) (any, error) { return nil, c.WriteCoil(ctx, 7, 1, false) },
			b(0x05, 0x00, 0x01, 0x00, 0x00), b(0x05, 0x00, 0x01, 0x00, 0x00), nil},
		{"write register", func(c *Client) (any, error) { return nil, c.WriteRegister(ctx, 7, 1, 0x0003) },
			b(0x06, 0x00, 0x01, 0x00, 0x03), b(0x06, 0x00, 0x01, 0x00, 0x03), nil},
		{"write registers", func(c *Client) (any, error) { return nil, c.WriteRegisters(ctx, 7, 1, []uint16{0x000A, 0x0102}) },
			b(0x10, 0x00, 0x01, 0x00, 0x02, 0x04, 0x00, 0x0A, 0x01, 0x02), b(0x10, 0x00, 0x01, 0x00, 0x02), nil},
		{"write coils", func(c *Client) (any, error) {
			return nil, c.WriteCoils(ctx, 7, 0x13, []bool{true, false, true, true, false, false, true, true, true, false})
		}, b(0x0F, 0x00, 0x13, 0x00, 0x0A, 0x02, 0xCD, 0x01), b(0x0F, 0x00, 0x13, 0x00, 0x0A), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &scripted{reply: tt.reply}
			got, err := tt.call(&Client{T: tr})
			if err != nil {
				t.Fatal(err)
			}
			if tr.unit != 7 || !slices.Equal(tr.req, tt.req) {
				t.Errorf("request to unit %d: % x, want unit 7: % x", tr.unit, tr.req, tt.req)
			}
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestClientBadReplies checks that a reply that does not fit its
// request is ErrBadReply, and an exception an *Exception, both wrapped
// with what was being done.
func TestClientBadReplies(t *testing.T) {
	ctx := context.Background()
	readHolding := func(c *Client) error { _, err := c.ReadRegisters(ctx, 3, HoldingRegisters, 100, 2); return err }
	readCoils := func(c *Client) error { _, err := c.ReadBits(ctx, 3, Coils, 100, 9); return err }
	tests := []struct {
		name  string
		call  func(c *Client) error
		reply []byte
		want  error
		msg   string
	}{
		{"exception", readHolding, b(0x83, 0x02), &Exception{Function: 3, Code: 2},
			"read holding 100+2 of unit 3: exception 2: illegal data address"},
		{"exception without a name", readHolding, b(0x83, 0x42), &Exception{Function: 3, Code: 0x42},
			"read holding 100+2 of unit 3: exception 66"},
		{"short byte count", readHolding, b(0x03, 0x02, 0x00, 0x01), ErrBadReply,
			"read holding 100+2 of unit 3: bad reply: byte count 2, want 4"},
		{"byte count beyond the data", readHolding, b(0x03, 0x04, 0x00, 0x01), ErrBadReply,
			"read holding 100+2 of unit 3: bad reply: 4 bytes with byte count 4, want 6"},
		{"other function", readHolding, b(0x04, 0x04, 0, 1, 0, 2), ErrBadReply,
			"read holding 100+2 of unit 3: bad reply: function 0x04 answered a request of function 0x03"},
		{"empty", readHolding, b(), ErrBadReply, "read holding 100+2 of unit 3: bad reply: empty PDU"},
		{"bits: wrong byte count", readCoils, b(0x01, 0x01, 0xFF), ErrBadReply,
			"read coil 100+9 of unit 3: bad reply: byte count 1, want 2"},
		{"long exception", readCoils, b(0x81, 0x02, 0x00), ErrBadReply,
			"read coil 100+9 of unit 3: bad reply: exception reply of 3 bytes, want 2"},
		{"coil echo differs", func(c *Client) error { return c.WriteCoil(ctx, 3, 5, true) }, b(0x05, 0x00, 0x05, 0x00, 0x00), ErrBadReply,
			"write coil 5 of unit 3: bad reply: echo 05 00 05 00 00 differs from the request 05 00 05 ff 00"},
		{"register echo short", func(c *Client) error { return c.WriteRegister(ctx, 3, 5, 9) }, b(0x06, 0x00, 0x05), ErrBadReply,
			"write holding 5 of unit 3: bad reply: echo of 3 bytes, want 5"},
		{"write registers: wrong count", func(c *Client) error { return c.WriteRegisters(ctx, 3, 5, []uint16{1, 2}) },
			b(0x10, 0x00, 0x05, 0x00, 0x01), ErrBadReply, "write holding 5+2 of unit 3: bad reply: 10 00 05 00 01, want 10 00 05 00 02"},
		{"write coils: exception", func(c *Client) error { return c.WriteCoils(ctx, 3, 5, []bool{true}) },
			b(0x8F, 0x04), &Exception{Function: 15, Code: 4}, "write coil 5+1 of unit 3: exception 4: slave device failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(&Client{T: &scripted{reply: tt.reply}})
			if err == nil || err.Error() != tt.msg {
				t.Fatalf("err = %v, want %q", err, tt.msg)
			}
			var exc *Exception
			if want, ok := tt.want.(*Exception); ok {
				if !errors.As(err, &exc) || *exc != *want {
					t.Errorf("errors.As = %+v, want %+v", exc, want)
				}
			} else if !errors.Is(err, tt.want) {
				t.Errorf("err does not match %v", tt.want)
			}
			if IsLinkError(err) {
				t.Error("IsLinkError = true for a unit's bad reply")
			}
		})
	}
}

// TestClientRefuses checks the requests refused before sending.
func TestClientRefuses(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		call func(c *Client) error
		msg  string
	}{
		{"read 0 registers", func(c *Client) error { _, err := c.ReadRegisters(ctx, 1, HoldingRegisters, 0, 0); return err },
			"read holding 0+0 of unit 1: bad request: count 0, want 1 to 125"},
		{"read 126 registers", func(c *Client) error { _, err := c.ReadRegisters(ctx, 1, InputRegisters, 0, 126); return err },
			"read input 0+126 of unit 1: bad request: count 126, want 1 to 125"},
		{"read 2001 bits", func(c *Client) error { _, err := c.ReadBits(ctx, 1, Coils, 0, 2001); return err },
			"read coil 0+2001 of unit 1: bad request: count 2001, want 1 to 2000"},
		{"past 65535", func(c *Client) error { _, err := c.ReadRegisters(ctx, 1, HoldingRegisters, 65535, 2); return err },
			"read holding 65535+2 of unit 1: bad request: 65535+2 runs past address 65535"},
		{"registers of a bit table", func(c *Client) error { _, err := c.ReadRegisters(ctx, 1, Coils, 0, 1); return err },
			"read coil 0+1 of unit 1: bad request: coil is not a table of registers (input, holding)"},
		{"bits of a register table", func(c *Client) error { _, err := c.ReadBits(ctx, 1, HoldingRegisters, 0, 1); return err },
			"read holding 0+1 of unit 1: bad request: holding is not a table of bits (coil, discrete)"},
		{"write 124 registers", func(c *Client) error { return c.WriteRegisters(ctx, 1, 0, make([]uint16, 124)) },
			"write holding 0+124 of unit 1: bad request: count 124, want 1 to 123"},
		{"write 1969 coils", func(c *Client) error { return c.WriteCoils(ctx, 1, 0, make([]bool, 1969)) },
			"write coil 0+1969 of unit 1: bad request: count 1969, want 1 to 1968"},
		{"write no coils", func(c *Client) error { return c.WriteCoils(ctx, 1, 0, nil) },
			"write coil 0+0 of unit 1: bad request: count 0, want 1 to 1968"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &scripted{}
			err := tt.call(&Client{T: tr})
			if err == nil || err.Error() != tt.msg {
				t.Fatalf("err = %v, want %q", err, tt.msg)
			}
			if !errors.Is(err, ErrRequest) || IsLinkError(err) {
				t.Errorf("err is not ErrRequest, or is a link error")
			}
			if tr.calls != 0 {
				t.Errorf("the transport was called %d times", tr.calls)
			}
		})
	}
}

// TestClientLimits checks that the largest requests fit in a PDU.
func TestClientLimits(t *testing.T) {
	ctx := context.Background()
	tr := &scripted{reply: b(0x10, 0, 0, 0, MaxWriteRegisters)}
	if err := (&Client{T: tr}).WriteRegisters(ctx, 1, 0, make([]uint16, MaxWriteRegisters)); err != nil {
		t.Fatal(err)
	}
	if len(tr.req) > MaxPDU {
		t.Errorf("write of %d registers: PDU of %d bytes", MaxWriteRegisters, len(tr.req))
	}
	tr = &scripted{reply: b(0x0F, 0, 0, MaxWriteCoils>>8, MaxWriteCoils&0xFF)}
	if err := (&Client{T: tr}).WriteCoils(ctx, 1, 0, make([]bool, MaxWriteCoils)); err != nil {
		t.Fatal(err)
	}
	if len(tr.req) > MaxPDU {
		t.Errorf("write of %d coils: PDU of %d bytes", MaxWriteCoils, len(tr.req))
	}
}

// TestIsLinkError sorts the errors a transport returns.
func TestIsLinkError(t *testing.T) {
	tests := []struct {
		err  error
		link bool
	}{
		{nil, false},
		{&Exception{Function: 3, Code: 2}, false},
		{errors.Join(errors.New("read holding 1+1 of unit 1"), ErrTimeout), false},
		{ErrCRC, false},
		{ErrBadReply, false},
		{ErrRequest, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.New("Port has been closed"), true},
		{errors.New("read: EOF"), true},
	}
	for _, tt := range tests {
		if got := IsLinkError(tt.err); got != tt.link {
			t.Errorf("IsLinkError(%v) = %v, want %v", tt.err, got, tt.link)
		}
	}
}

// TestExceptionNames checks the exception codes' texts.
func TestExceptionNames(t *testing.T) {
	tests := map[byte]string{
		1: "exception 1: illegal function", 2: "exception 2: illegal data address", 3: "exception 3: illegal data value",
		4: "exception 4: slave device failure", 5: "exception 5: acknowledge", 6: "exception 6: slave device busy",
		7: "exception 7", 8: "exception 8: memory parity error", 9: "exception 9",
		0x0A: "exception 10: gateway path unavailable", 0x0B: "exception 11: gateway target device failed to respond",
		0xFF: "exception 255",
	}
	for code, want := range tests {
		if got := (&Exception{Code: code}).Error(); got != want {
			t.Errorf("code %d: %q, want %q", code, got, want)
		}
	}
}

// TestTableNames checks Table's names both ways and its properties.
func TestTableNames(t *testing.T) {
	tests := []struct {
		t              Table
		name           string
		bits, writable bool
	}{
		{Coils, "coil", true, true},
		{DiscreteInputs, "discrete", true, false},
		{InputRegisters, "input", false, false},
		{HoldingRegisters, "holding", false, true},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.name {
			t.Errorf("%d.String() = %q, want %q", tt.t, got, tt.name)
		}
		if got, ok := ParseTable(tt.name); !ok || got != tt.t {
			t.Errorf("ParseTable(%q) = %v, %v", tt.name, got, ok)
		}
		if tt.t.Bits() != tt.bits || tt.t.Writable() != tt.writable {
			t.Errorf("%s: Bits %v Writable %v, want %v %v", tt.t, tt.t.Bits(), tt.t.Writable(), tt.bits, tt.writable)
		}
	}
	for _, s := range []string{"", "coils", "Holding", "register"} {
		if _, ok := ParseTable(s); ok {
			t.Errorf("ParseTable(%q) accepted", s)
		}
	}
	if got := Table(0).String(); got != "table(0)" {
		t.Errorf("Table(0) = %q", got)
	}
}
