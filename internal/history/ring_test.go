package history

import "testing"

func TestRing(t *testing.T) {
	t.Parallel()
	r := newRing[int](3)
	if r.newest() != nil || r.oldest() != 0 {
		t.Fatalf("empty ring: newest %v, oldest %d", r.newest(), r.oldest())
	}
	for _, tc := range []struct {
		push        int
		oldest, tot uint64
		items       []int
	}{
		{10, 0, 1, []int{10}},
		{11, 0, 2, []int{10, 11}},
		{12, 0, 3, []int{10, 11, 12}},
		{13, 1, 4, []int{11, 12, 13}},
		{14, 2, 5, []int{12, 13, 14}},
	} {
		r.push(tc.push)
		if r.oldest() != tc.oldest || r.total != tc.tot || *r.newest() != tc.push {
			t.Errorf("after %d: oldest %d total %d newest %d, want %d %d %d", tc.push, r.oldest(), r.total, *r.newest(), tc.oldest, tc.tot, tc.push)
		}
		for i, want := range tc.items {
			if got := *r.at(tc.oldest + uint64(i)); got != want {
				t.Errorf("after %d: item %d = %d, want %d", tc.push, tc.oldest+uint64(i), got, want)
			}
		}
	}
}
