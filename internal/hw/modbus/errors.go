package modbus

import (
	"context"
	"errors"
	"strconv"
)

// The failures of an exchange on a working link. Transports wrap them
// with what was seen; test with errors.Is.
var (
	// ErrTimeout: no whole, valid answer came before the context's
	// deadline. Wrapped with what did come: "no answer", "3 bytes then
	// silence: 01 03 04".
	ErrTimeout = errors.New("timeout")
	// ErrCRC: an answer of the right unit and function came whose CRC is
	// wrong (RTU), and no valid one came before the deadline.
	ErrCRC = errors.New("bad CRC")
	// ErrBadReply: a reply that does not fit its request: a wrong length
	// or byte count, a write's echo that differs, another unit or
	// function.
	ErrBadReply = errors.New("bad reply")
	// ErrRequest: a request refused before anything was sent (a unit id
	// RTU cannot address, a count beyond a function's limit, a PDU too
	// long). Neither the unit nor the link is at fault: retrying will not
	// help.
	ErrRequest = errors.New("bad request")
)

// Exception is a unit's exception reply: it understood the request and
// refused it.
type Exception struct {
	Function byte // the request's function code (without the 0x80 bit)
	Code     byte // the exception code
}

// Exception codes (Modbus Application Protocol V1.1b3, 7).
const (
	IllegalFunction                    = 0x01
	IllegalDataAddress                 = 0x02
	IllegalDataValue                   = 0x03
	SlaveDeviceFailure                 = 0x04
	Acknowledge                        = 0x05
	SlaveDeviceBusy                    = 0x06
	MemoryParityError                  = 0x08
	GatewayPathUnavailable             = 0x0A
	GatewayTargetDeviceFailedToRespond = 0x0B
)

// exceptionNames are the specification's names of the codes, by code;
// an array, not a map, which would be built at every start.
var exceptionNames = [...]string{
	IllegalFunction:                    "illegal function",
	IllegalDataAddress:                 "illegal data address",
	IllegalDataValue:                   "illegal data value",
	SlaveDeviceFailure:                 "slave device failure",
	Acknowledge:                        "acknowledge",
	SlaveDeviceBusy:                    "slave device busy",
	MemoryParityError:                  "memory parity error",
	GatewayPathUnavailable:             "gateway path unavailable",
	GatewayTargetDeviceFailedToRespond: "gateway target device failed to respond",
}

// Error returns "exception 2: illegal data address", or "exception N"
// for a code without a name in the specification.
func (e *Exception) Error() string {
	s := "exception " + strconv.Itoa(int(e.Code))
	if int(e.Code) < len(exceptionNames) && exceptionNames[e.Code] != "" {
		s += ": " + exceptionNames[e.Code]
	}
	return s
}

// IsLinkError reports whether err, returned by a Transport or a Client,
// means the link itself failed (the port is gone or closed, the
// connection was reset, the stream lost its framing): the caller closes
// the transport and opens it again. It is false for nil, the unit's
// answers and failed exchanges (*Exception, ErrTimeout, ErrCRC,
// ErrBadReply), a refused request (ErrRequest), and the context's own
// errors.
func IsLinkError(err error) bool {
	if err == nil {
		return false
	}
	var exc *Exception
	switch {
	case errors.As(err, &exc),
		errors.Is(err, ErrTimeout), errors.Is(err, ErrCRC),
		errors.Is(err, ErrBadReply), errors.Is(err, ErrRequest),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return true
}
