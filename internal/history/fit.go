package history

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNoRoom is a query whose Room cannot hold one item.
var ErrNoRoom = errors.New("the message limit leaves no room for one item of history")

// fit returns how many items a page of q may hold so that its JSON takes
// at most q.Room bytes, each item at its longest, and at most q.Limit
// (0: none asked; no Room: no bound of size). The page's other members
// are measured as encoded, with fields as they are and its numbers at
// their largest.
func fit(q Query, fields []string) (int, error) {
	if q.Room <= 0 {
		return max(q.Limit, 0), nil
	}
	most := ^uint64(0)
	envelope := Page{Device: q.Device, Field: q.Field, Fields: fields, Kind: KindBoolean, Resolution: q.Resolution, Dropped: most, Next: most, More: true}
	per := sampleJSONBytes
	envelope.Samples = &Samples{T: []int64{}, V: []any{}}
	if q.Resolution == Minute {
		per = bucketJSONBytes
		envelope.Samples = nil
		envelope.Buckets = &BooleanBuckets{T: []int64{}, N: []uint32{}, Mean: []float64{}, Last: []bool{}, Changes: []uint32{}}
	}
	b, err := json.Marshal(envelope)
	if err != nil {
		return 0, fmt.Errorf("size a page of history: %w", err)
	}
	n := (q.Room - len(b)) / per
	if n < 1 {
		return 0, ErrNoRoom
	}
	if q.Limit > 0 {
		n = min(n, q.Limit)
	}
	return n, nil
}
