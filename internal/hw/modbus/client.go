package modbus

import (
	"context"
	"fmt"
)

// Client makes requests of functions 1-6, 15 and 16 over a Transport,
// checks their replies, and wraps every error with what was being done:
// "read holding 100+2 of unit 3: exception 2: illegal data address".
// errors.As to *Exception and errors.Is ErrTimeout (and the others) work
// through the wrap. A Client is as safe for concurrent use as its
// Transport (callers serialise).
type Client struct {
	T Transport
}

// ReadBits reads n coils or discrete inputs (t) from addr (functions 1,
// 2); 1 <= n <= MaxReadBits.
func (c *Client) ReadBits(ctx context.Context, unit byte, t Table, addr, n uint16) ([]bool, error) {
	bits, err := c.readBits(ctx, unit, t, addr, n)
	if err != nil {
		return nil, fmt.Errorf("read %s %d+%d of unit %d: %w", t, addr, n, unit, err)
	}
	return bits, nil
}

func (c *Client) readBits(ctx context.Context, unit byte, t Table, addr, n uint16) ([]bool, error) {
	if !t.Bits() {
		return nil, fmt.Errorf("%w: %s is not a table of bits (coil, discrete)", ErrRequest, t)
	}
	if err := checkSpan(addr, int(n), MaxReadBits); err != nil {
		return nil, err
	}
	fc := t.readFunction()
	reply, err := c.T.Do(ctx, unit, readRequest(fc, addr, n))
	if err != nil {
		return nil, err
	}
	return parseBits(fc, reply, n)
}

// ReadRegisters reads n input or holding registers (t) from addr
// (functions 4, 3); 1 <= n <= MaxReadRegisters.
func (c *Client) ReadRegisters(ctx context.Context, unit byte, t Table, addr, n uint16) ([]uint16, error) {
	regs, err := c.readRegisters(ctx, unit, t, addr, n)
	if err != nil {
		return nil, fmt.Errorf("read %s %d+%d of unit %d: %w", t, addr, n, unit, err)
	}
	return regs, nil
}

func (c *Client) readRegisters(ctx context.Context, unit byte, t Table, addr, n uint16) ([]uint16, error) {
	if t != InputRegisters && t != HoldingRegisters {
		return nil, fmt.Errorf("%w: %s is not a table of registers (input, holding)", ErrRequest, t)
	}
	if err := checkSpan(addr, int(n), MaxReadRegisters); err != nil {
		return nil, err
	}
	fc := t.readFunction()
	reply, err := c.T.Do(ctx, unit, readRequest(fc, addr, n))
	if err != nil {
		return nil, err
	}
	return parseRegisters(fc, reply, n)
}

// WriteCoil sets or clears one coil (function 5) and checks the unit's
// echo.
func (c *Client) WriteCoil(ctx context.Context, unit byte, addr uint16, v bool) error {
	var raw uint16
	if v {
		raw = 0xFF00
	}
	if err := c.writeSingle(ctx, unit, fcWriteSingleCoil, addr, raw); err != nil {
		return fmt.Errorf("write coil %d of unit %d: %w", addr, unit, err)
	}
	return nil
}

// WriteRegister writes one holding register (function 6) and checks the
// unit's echo.
func (c *Client) WriteRegister(ctx context.Context, unit byte, addr uint16, v uint16) error {
	if err := c.writeSingle(ctx, unit, fcWriteSingleRegister, addr, v); err != nil {
		return fmt.Errorf("write holding %d of unit %d: %w", addr, unit, err)
	}
	return nil
}

func (c *Client) writeSingle(ctx context.Context, unit, fc byte, addr, v uint16) error {
	req := writeSingleRequest(fc, addr, v)
	reply, err := c.T.Do(ctx, unit, req)
	if err != nil {
		return err
	}
	return checkEcho(req, reply)
}

// WriteRegisters writes holding registers from addr (function 16);
// 1 <= len(v) <= MaxWriteRegisters.
func (c *Client) WriteRegisters(ctx context.Context, unit byte, addr uint16, v []uint16) error {
	err := checkSpan(addr, len(v), MaxWriteRegisters)
	if err == nil {
		err = c.writeMultiple(ctx, unit, writeRegistersRequest(addr, v), addr, len(v))
	}
	if err != nil {
		return fmt.Errorf("write holding %d+%d of unit %d: %w", addr, len(v), unit, err)
	}
	return nil
}

// WriteCoils writes coils from addr (function 15); 1 <= len(v) <=
// MaxWriteCoils.
func (c *Client) WriteCoils(ctx context.Context, unit byte, addr uint16, v []bool) error {
	err := checkSpan(addr, len(v), MaxWriteCoils)
	if err == nil {
		err = c.writeMultiple(ctx, unit, writeCoilsRequest(addr, v), addr, len(v))
	}
	if err != nil {
		return fmt.Errorf("write coil %d+%d of unit %d: %w", addr, len(v), unit, err)
	}
	return nil
}

func (c *Client) writeMultiple(ctx context.Context, unit byte, req []byte, addr uint16, n int) error {
	reply, err := c.T.Do(ctx, unit, req)
	if err != nil {
		return err
	}
	return checkWriteMultiple(req[0], reply, addr, n)
}

// checkSpan refuses a count of 0 or above max, and a span that runs past
// address 65535.
func checkSpan(addr uint16, n, max int) error {
	switch {
	case n < 1 || n > max:
		return fmt.Errorf("%w: count %d, want 1 to %d", ErrRequest, n, max)
	case int(addr)+n > 0x10000:
		return fmt.Errorf("%w: %d+%d runs past address 65535", ErrRequest, addr, n)
	}
	return nil
}
