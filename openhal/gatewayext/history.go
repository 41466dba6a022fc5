package gatewayext

import (
	"encoding/json"
	"fmt"
)

// HistoryResolution is which of a series' rings a page reads.
type HistoryResolution string

const (
	HistoryFull   HistoryResolution = "full"   // every value kept
	HistoryMinute HistoryResolution = "minute" // one bucket a minute
)

// HistoryKind is what a series holds.
type HistoryKind string

const (
	HistoryNumber  HistoryKind = "number"
	HistoryBoolean HistoryKind = "boolean"
)

// HistoryParams are the params of MethodHistory (docs/protocol.md,
// "gateway/history"). Since and Until, in Unix milliseconds, keep the
// items whose time is in [Since, Until); From is the Next of the page
// before; Limit bounds the items of the page.
type HistoryParams struct {
	Device     string            `json:"device"`
	Field      string            `json:"field,omitempty"`
	Resolution HistoryResolution `json:"resolution,omitempty"`
	Since      *int64            `json:"since,omitempty"`
	Until      *int64            `json:"until,omitempty"`
	From       *uint64           `json:"from,omitempty"`
	Limit      *int              `json:"limit,omitempty"`
}

// HistoryPage is the answer of MethodHistory: one series' items, each as
// columns, as a plot takes them (uPlot's data layout).
type HistoryPage struct {
	Device     string            `json:"device"`
	Field      string            `json:"field"`
	Fields     []string          `json:"fields"`
	Kind       HistoryKind       `json:"kind,omitempty"`
	Resolution HistoryResolution `json:"resolution"`
	// Samples (full) or Buckets (minute) hold the items, oldest first.
	// Buckets is a *HistoryNumberBuckets or a *HistoryBooleanBuckets, by
	// Kind; UnmarshalJSON decodes it so.
	Samples *HistorySamples `json:"samples,omitempty"`
	Buckets any             `json:"buckets,omitempty"`
	// Dropped counts the items between From and the oldest kept, which
	// newer ones overwrote before this page was asked for.
	Dropped uint64 `json:"dropped,omitempty"`
	// Next is the From of the following page; More says whether items
	// after it are kept already (else it is where new ones will come).
	Next uint64 `json:"next"`
	More bool   `json:"more"`
}

// UnmarshalJSON decodes a page, its buckets as the type its kind calls
// for. Buckets of a kind this package does not know are left as
// encoding/json decodes any object (map[string]any).
func (p *HistoryPage) UnmarshalJSON(b []byte) error {
	type plain HistoryPage // without this method
	var raw struct {
		plain
		Buckets json.RawMessage `json:"buckets,omitempty"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = HistoryPage(raw.plain)
	if len(raw.Buckets) == 0 || string(raw.Buckets) == "null" {
		return nil
	}
	switch p.Kind {
	case HistoryNumber:
		p.Buckets = new(HistoryNumberBuckets)
	case HistoryBoolean:
		p.Buckets = new(HistoryBooleanBuckets)
	}
	if err := json.Unmarshal(raw.Buckets, &p.Buckets); err != nil {
		return fmt.Errorf("history page of %s: buckets: %w", p.Device, err)
	}
	return nil
}

// HistorySamples are full-resolution values: T in Unix milliseconds, V
// numbers or booleans.
type HistorySamples struct {
	T []int64 `json:"t"`
	V []any   `json:"v"`
}

// HistoryNumberBuckets are a number's minutes: the count, smallest,
// largest and mean value of each.
type HistoryNumberBuckets struct {
	T    []int64   `json:"t"`
	N    []uint32  `json:"n"`
	Min  []float64 `json:"min"`
	Max  []float64 `json:"max"`
	Mean []float64 `json:"mean"`
}

// HistoryBooleanBuckets are a boolean's minutes: the count, the share of
// true values, the last value and how many times it changed.
type HistoryBooleanBuckets struct {
	T       []int64   `json:"t"`
	N       []uint32  `json:"n"`
	Mean    []float64 `json:"mean"`
	Last    []bool    `json:"last"`
	Changes []uint32  `json:"changes"`
}
