package history

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// filled is a History whose device "n" has values 0..count-1 a second
// apart from t0, keeping the last 10 samples; "b" a boolean that turns
// each second; "obj" an object of two numbers.
func filled(count int) *History {
	h := New(Options{Samples: 10, Buckets: 4})
	for i := range count {
		ts := t0.Add(time.Duration(i) * time.Second)
		h.Record(value("n", float64(i), ts))
		h.Record(value("b", i%2 == 1, ts))
		h.Record(value("obj", map[string]any{"x": float64(i), "y": -float64(i)}, ts))
	}
	return h
}

func ms(d time.Duration) *int64 { v := t0.Add(d).UnixMilli(); return &v }

func TestQueryPages(t *testing.T) {
	t.Parallel()
	h := filled(25) // samples 15..24 kept
	at := func(i int) int64 { return t0.Add(time.Duration(i) * time.Second).UnixMilli() }
	for _, tc := range []struct {
		name    string
		q       Query
		t       []int64
		dropped uint64
		next    uint64
		more    bool
	}{
		{"all kept", Query{Device: "n"}, []int64{at(15), at(16), at(17), at(18), at(19), at(20), at(21), at(22), at(23), at(24)}, 15, 25, false},
		{"a page", Query{Device: "n", From: 15, Limit: 3}, []int64{at(15), at(16), at(17)}, 0, 18, true},
		{"the next page", Query{Device: "n", From: 18, Limit: 3}, []int64{at(18), at(19), at(20)}, 0, 21, true},
		{"following: nothing new", Query{Device: "n", From: 25}, []int64{}, 0, 25, false},
		{"a window", Query{Device: "n", Since: ms(20 * time.Second), Until: ms(22 * time.Second)}, []int64{at(20), at(21)}, 15, 25, false},
		{"a window, paged", Query{Device: "n", From: 15, Since: ms(20 * time.Second), Limit: 1}, []int64{at(20)}, 0, 21, true},
		{"an empty window", Query{Device: "n", From: 15, Until: ms(0)}, []int64{}, 0, 25, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := h.Query(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Samples.T, tc.t) || p.Dropped != tc.dropped || p.Next != tc.next || p.More != tc.more {
				t.Errorf("page t=%v dropped %d next %d more %v, want %v %d %d %v", p.Samples.T, p.Dropped, p.Next, p.More, tc.t, tc.dropped, tc.next, tc.more)
			}
			for i, v := range p.Samples.V {
				if want := float64((p.Samples.T[i] - t0.UnixMilli()) / 1000); v != want {
					t.Errorf("sample %d = %v, want %v", i, v, want)
				}
			}
		})
	}
}

// What each kind and resolution answers, as JSON.
func TestQueryJSON(t *testing.T) {
	t.Parallel()
	h := filled(3)
	h.Record(value("b", true, t0.Add(time.Minute)))
	base := t0.UnixMilli()
	for _, tc := range []struct {
		name string
		q    Query
		want string
	}{
		{"number, full", Query{Device: "n", Limit: 2},
			`{"device":"n","field":"","fields":[""],"kind":"number","resolution":"full","samples":{"t":[T0,T1000],"v":[0,1]},"next":2,"more":true}`},
		{"boolean, full", Query{Device: "b"},
			`{"device":"b","field":"","fields":[""],"kind":"boolean","resolution":"full","samples":{"t":[T0,T1000,T2000,T60000],"v":[false,true,false,true]},"next":4,"more":false}`},
		{"number, minute", Query{Device: "n", Resolution: Minute},
			`{"device":"n","field":"","fields":[""],"kind":"number","resolution":"minute","buckets":{"t":[T0],"n":[3],"min":[0],"max":[2],"mean":[1]},"next":1,"more":false}`},
		{"boolean, minute", Query{Device: "b", Resolution: Minute},
			`{"device":"b","field":"","fields":[""],"kind":"boolean","resolution":"minute","buckets":{"t":[T0,T60000],"n":[3,1],"mean":[0.3333333333333333,1],"last":[false,true],"changes":[2,1]},"next":2,"more":false}`},
		{"an object's field", Query{Device: "obj", Field: "y", Limit: 1},
			`{"device":"obj","field":"y","fields":["x","y"],"kind":"number","resolution":"full","samples":{"t":[T0],"v":[-0]},"next":1,"more":true}`},
		{"a device with no history", Query{Device: "meter"},
			`{"device":"meter","field":"","fields":[],"resolution":"full","samples":{"t":[],"v":[]},"next":0,"more":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := h.Query(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(p)
			want := tc.want
			for _, d := range []int64{60000, 2000, 1000, 0} {
				want = strings.ReplaceAll(want, "T"+itoa(d), itoa(base+d))
			}
			if string(b) != want {
				t.Errorf("got  %s\nwant %s", b, want)
			}
		})
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestQueryFieldErrors(t *testing.T) {
	t.Parallel()
	h := filled(1)
	for _, tc := range []struct {
		name string
		q    Query
		want string
	}{
		{"several series, no field", Query{Device: "obj"}, "device obj keeps several series: params.field must name one of x, y"},
		{"no such field", Query{Device: "obj", Field: "z"}, `device obj keeps no series "z"; it keeps "x", "y"`},
		{"a field of a plain value", Query{Device: "n", Field: "x"}, `device n keeps no series "x"; it keeps ""`},
		{"a field of a device with none", Query{Device: "meter", Field: "x"}, `device meter keeps no series "x"; it keeps none`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.Query(tc.q)
			var fe *FieldError
			if !errors.As(err, &fe) || err.Error() != tc.want {
				t.Errorf("error %v, want FieldError %q", err, tc.want)
			}
		})
	}
}

// A page given Room holds as many items as fit, and its JSON never
// passes Room, whatever the values.
func TestQueryRoom(t *testing.T) {
	t.Parallel()
	h := New(Options{Samples: 500, Buckets: 500})
	for i := range 500 {
		ts := time.UnixMilli(-9_000_000_000_000_000 + int64(i)*60_000)
		h.Record(value("big", -1.7976931348623157e+308+float64(i), ts))
		h.Record(value("small", 0.0, t0))
	}
	for _, room := range []int{400, 1000, 4000} {
		for _, id := range []string{"big", "small"} {
			for _, r := range []Resolution{Full, Minute} {
				p, err := h.Query(Query{Device: id, Resolution: r, Room: room})
				if err != nil {
					t.Fatalf("room %d, %s %s: %v", room, id, r, err)
				}
				b, _ := json.Marshal(p)
				if len(b) > room || (id == "big" && !p.More) {
					t.Errorf("room %d, %s %s: page of %d bytes, more %v", room, id, r, len(b), p.More)
				}
			}
		}
	}
	if _, err := h.Query(Query{Device: "big", Room: 100}); !errors.Is(err, ErrNoRoom) {
		t.Errorf("room 100: error %v, want ErrNoRoom", err)
	}
}

// A client following a series live (from = next, again and again) while
// values come reads each once, in order, however the pages fall.
func TestQueryFollowLive(t *testing.T) {
	t.Parallel()
	const values = 5000
	h := New(Options{Samples: values, Buckets: 10})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := range values {
			h.Record(value("n", float64(i), t0.Add(time.Duration(i)*time.Millisecond)))
		}
	}()
	var got []any
	var from uint64
	for done := false; !done; {
		select {
		case <-wrote:
			done = true // one more page after the last value
		default:
		}
		for more := true; more; {
			p, err := h.Query(Query{Device: "n", From: from, Limit: 97})
			if err != nil {
				t.Fatal(err)
			}
			if p.Dropped != 0 {
				t.Fatalf("dropped %d at %d", p.Dropped, from)
			}
			got = append(got, p.Samples.V...)
			from, more = p.Next, p.More
		}
	}
	if len(got) != values {
		t.Fatalf("read %d values, want %d", len(got), values)
	}
	for i, v := range got {
		if v != float64(i) {
			t.Fatalf("value %d = %v: read out of order or twice", i, v)
		}
	}
}
