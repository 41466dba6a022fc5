package gpioevent

import (
	"encoding/binary"
	"fmt"
	"time"
)

// The uAPI v2 as include/uapi/linux/gpio.h lays it out (offsets checked
// against the header by uapi_test.go's table, which a C compiler gave).
const (
	requestSize = 592 // struct gpio_v2_line_request
	eventSize   = 48  // struct gpio_v2_line_event

	// request: __u32 offsets[64]; char consumer[32]; struct
	// gpio_v2_line_config config; __u32 num_lines, event_buffer_size,
	// padding[5]; __s32 fd.
	offConsumer   = 256
	offConfig     = 288 // config: __aligned_u64 flags; __u32 num_attrs, padding[5]; attrs[10]
	offFlags      = offConfig
	offNumAttrs   = offConfig + 8
	offAttrs      = offConfig + 32 // each attribute 24 bytes: __u32 id, padding; union (8); __aligned_u64 mask
	offNumLines   = 560
	offBufferSize = 564
	offFD         = 588
	consumerMax   = 31 // 32 bytes with the NUL

	// enum gpio_v2_line_flag
	flagInput       = 1 << 2
	flagEdgeRising  = 1 << 4
	flagEdgeFalling = 1 << 5
	flagPullUp      = 1 << 8
	flagPullDown    = 1 << 9
	flagBiasOff     = 1 << 10

	attrDebounce = 3 // GPIO_V2_LINE_ATTR_ID_DEBOUNCE

	eventRising = 1 // GPIO_V2_LINE_EVENT_RISING_EDGE
)

// getLineIoctl is GPIO_V2_GET_LINE_IOCTL, _IOWR(0xB4, 0x07, struct
// gpio_v2_line_request) in the encoding of x86, ARM, arm64 and RISC-V
// (direction in bits 30-31, size in 16-29, type in 8-15, number in 0-7);
// MIPS, PowerPC and SPARC encode ioctls otherwise and are not served.
const getLineIoctl = 3<<30 | requestSize<<16 | 0xB4<<8 | 0x07

var order = binary.NativeEndian

// request encodes the request of one line at offset with c.
func (c Config) request(offset int) ([requestSize]byte, error) {
	var r [requestSize]byte
	flags, err := c.flags()
	if err != nil {
		return r, err
	}
	if offset < 0 {
		return r, fmt.Errorf("gpioevent: line offset %d", offset)
	}
	if len(c.Consumer) > consumerMax {
		return r, fmt.Errorf("gpioevent: consumer %q is longer than %d bytes", c.Consumer, consumerMax)
	}
	if c.Buffer < 0 || c.Buffer > MaxBuffer {
		return r, fmt.Errorf("gpioevent: buffer of %d events: want 0 to %d", c.Buffer, MaxBuffer)
	}
	order.PutUint32(r[0:], uint32(offset))
	copy(r[offConsumer:offConsumer+consumerMax], c.Consumer)
	order.PutUint64(r[offFlags:], flags)
	if us := debounceMicros(c.Debounce); us > 0 {
		order.PutUint32(r[offNumAttrs:], 1)
		order.PutUint32(r[offAttrs:], attrDebounce)
		order.PutUint32(r[offAttrs+8:], us) // the union's __u32 debounce_period_us
		order.PutUint64(r[offAttrs+16:], 1) // mask: the request's line 0
	}
	order.PutUint32(r[offNumLines:], 1)
	order.PutUint32(r[offBufferSize:], uint32(c.Buffer))
	return r, nil
}

func (c Config) flags() (uint64, error) {
	f := uint64(flagInput)
	switch c.Edge {
	case Rising:
		f |= flagEdgeRising
	case Falling:
		f |= flagEdgeFalling
	case Both:
		f |= flagEdgeRising | flagEdgeFalling
	default:
		return 0, fmt.Errorf("gpioevent: no edge to report (%v)", c.Edge)
	}
	switch c.Bias {
	case BiasDisabled:
		f |= flagBiasOff
	case PullUp:
		f |= flagPullUp
	case PullDown:
		f |= flagPullDown
	default:
		return 0, fmt.Errorf("gpioevent: unknown bias %v", c.Bias)
	}
	if c.Debounce < 0 || c.Debounce > MaxDebounce {
		return 0, fmt.Errorf("gpioevent: debounce %v: want 0 to %v", c.Debounce, MaxDebounce)
	}
	return f, nil
}

// debounceMicros is d in whole microseconds, rounded up: a debounce
// asked for is never turned off by rounding.
func debounceMicros(d time.Duration) uint32 {
	return uint32((d + time.Microsecond - 1) / time.Microsecond)
}

// requestFD is the line's file descriptor the kernel wrote back.
func requestFD(r *[requestSize]byte) int { return int(int32(order.Uint32(r[offFD:]))) }

// decodeEvents decodes b, whole events, into events.
func decodeEvents(b []byte, events []Event) (int, error) {
	if len(b)%eventSize != 0 {
		return 0, fmt.Errorf("gpioevent: read %d bytes, not whole %d-byte events", len(b), eventSize)
	}
	n := len(b) / eventSize
	for i := range n {
		e := b[i*eventSize:]
		events[i] = Event{
			Time:      time.Duration(order.Uint64(e[0:])),
			Rising:    order.Uint32(e[8:]) == eventRising,
			Offset:    order.Uint32(e[12:]),
			Seqno:     order.Uint32(e[16:]),
			LineSeqno: order.Uint32(e[20:]),
		}
	}
	return n, nil
}
