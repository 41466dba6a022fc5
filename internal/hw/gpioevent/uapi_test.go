package gpioevent

import (
	"strings"
	"testing"
	"time"
)

// The layout of include/uapi/linux/gpio.h as gcc compiles it (offsetof
// and sizeof, x86_64 and the same on arm64 and armhf, whose structs use
// __aligned_u64): what the encoding's constants must be.
func TestLayoutMatchesTheHeader(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"sizeof(struct gpio_v2_line_request)", requestSize, 592},
		{"offsetof(request, consumer)", offConsumer, 256},
		{"offsetof(request, config)", offConfig, 288},
		{"offsetof(request, config.num_attrs)", offNumAttrs, 288 + 8},
		{"offsetof(request, config.attrs)", offAttrs, 288 + 32},
		{"offsetof(request, num_lines)", offNumLines, 560},
		{"offsetof(request, event_buffer_size)", offBufferSize, 564},
		{"offsetof(request, fd)", offFD, 588},
		{"sizeof(struct gpio_v2_line_event)", eventSize, 48},
		{"GPIO_V2_GET_LINE_IOCTL", getLineIoctl, 0xc250b407},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestRequest(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cfg      Config
		flags    uint64
		debounce uint32 // 0: no attribute
	}{
		{"rising, no pull", Config{Edge: Rising}, flagInput | flagEdgeRising | flagBiasOff, 0},
		{"falling, pull-up", Config{Edge: Falling, Bias: PullUp}, flagInput | flagEdgeFalling | flagPullUp, 0},
		{"both, pull-down, 5 ms", Config{Edge: Both, Bias: PullDown, Debounce: 5 * time.Millisecond},
			flagInput | flagEdgeRising | flagEdgeFalling | flagPullDown, 5000},
		{"debounce rounded up to 1 µs", Config{Edge: Rising, Debounce: 1}, flagInput | flagEdgeRising | flagBiasOff, 1},
	} {
		r, err := tt.cfg.request(17)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := order.Uint32(r[0:]); got != 17 {
			t.Errorf("%s: offsets[0] = %d", tt.name, got)
		}
		if got := order.Uint64(r[offFlags:]); got != tt.flags {
			t.Errorf("%s: flags %#x, want %#x", tt.name, got, tt.flags)
		}
		if got := order.Uint32(r[offNumLines:]); got != 1 {
			t.Errorf("%s: num_lines %d", tt.name, got)
		}
		attrs := order.Uint32(r[offNumAttrs:])
		switch {
		case tt.debounce == 0 && attrs != 0:
			t.Errorf("%s: %d attributes, want none", tt.name, attrs)
		case tt.debounce != 0:
			if attrs != 1 || order.Uint32(r[offAttrs:]) != attrDebounce ||
				order.Uint32(r[offAttrs+8:]) != tt.debounce || order.Uint64(r[offAttrs+16:]) != 1 {
				t.Errorf("%s: attribute %d id %d µs %d mask %d, want one debounce of %d µs on line 0", tt.name, attrs,
					order.Uint32(r[offAttrs:]), order.Uint32(r[offAttrs+8:]), order.Uint64(r[offAttrs+16:]), tt.debounce)
			}
		}
	}
	r, _ := Config{Edge: Rising, Consumer: "gateway flow", Buffer: 256}.request(0)
	if got := string(r[offConsumer : offConsumer+13]); got != "gateway flow\x00" {
		t.Errorf("consumer %q", got)
	}
	if got := order.Uint32(r[offBufferSize:]); got != 256 {
		t.Errorf("event_buffer_size %d", got)
	}
}

func TestRequestRefuses(t *testing.T) {
	for _, tt := range []struct {
		cfg    Config
		offset int
		want   string
	}{
		{Config{}, 0, "no edge"},
		{Config{Edge: Rising, Bias: 7}, 0, "bias"},
		{Config{Edge: Rising, Debounce: -1}, 0, "debounce"},
		{Config{Edge: Rising, Debounce: MaxDebounce + time.Microsecond}, 0, "debounce"},
		{Config{Edge: Rising, Consumer: strings.Repeat("x", 32)}, 0, "consumer"},
		{Config{Edge: Rising, Buffer: MaxBuffer + 1}, 0, "buffer"},
		{Config{Edge: Rising}, -1, "offset"},
	} {
		if _, err := tt.cfg.request(tt.offset); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v offset %d: %v, want an error about %s", tt.cfg, tt.offset, err, tt.want)
		}
	}
}

// event lays out a struct gpio_v2_line_event.
func event(ts uint64, id, offset, seqno, lineSeqno uint32) []byte {
	b := make([]byte, eventSize)
	order.PutUint64(b[0:], ts)
	order.PutUint32(b[8:], id)
	order.PutUint32(b[12:], offset)
	order.PutUint32(b[16:], seqno)
	order.PutUint32(b[20:], lineSeqno)
	return b
}

func TestDecodeEvents(t *testing.T) {
	b := append(event(1_500_000_123, 1, 5, 7, 3), event(1_600_000_000, 2, 5, 8, 4)...)
	evs := make([]Event, 2)
	n, err := decodeEvents(b, evs)
	if err != nil || n != 2 {
		t.Fatalf("decode: %d %v", n, err)
	}
	want := []Event{
		{Time: 1_500_000_123, Rising: true, Offset: 5, Seqno: 7, LineSeqno: 3},
		{Time: 1600 * time.Millisecond, Rising: false, Offset: 5, Seqno: 8, LineSeqno: 4},
	}
	for i := range want {
		if evs[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, evs[i], want[i])
		}
	}
	if _, err := decodeEvents(b[:50], evs); err == nil {
		t.Error("a torn event decoded")
	}
}

func TestDropped(t *testing.T) {
	for _, tt := range []struct{ prev, next, want uint32 }{
		{0, 1, 0},            // the first event
		{0, 5, 4},            // four dropped before the first read
		{7, 8, 0},            // in order
		{7, 12, 4},           // four dropped
		{1<<32 - 2, 1, 2},    // across the counter's wrap: 2^32-1 and 0 dropped
		{1<<32 - 1, 0, 0},    // a wrap to 0, nothing dropped
		{9, 9, 0}, {9, 3, 0}, // numbers that do not go forward
		{0, 1 << 31, 1<<31 - 1}, // a huge gap is a gap
	} {
		if got := Dropped(tt.prev, tt.next); got != tt.want {
			t.Errorf("Dropped(%d, %d) = %d, want %d", tt.prev, tt.next, got, tt.want)
		}
	}
}
