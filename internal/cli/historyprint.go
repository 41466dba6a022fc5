package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// historyPrinter writes the items of history pages: for people, a line
// each with the local time and the value with its unit's symbol; --csv,
// comma-separated with a header and times in RFC 3339 (UTC); --json, a
// JSON object a line.
type historyPrinter struct {
	w       io.Writer
	json    bool
	csv     *csv.Writer
	minute  bool
	header  bool // the CSV header is written
	printed int
}

func newHistoryPrinter(w io.Writer, asJSON, asCSV, minute bool) *historyPrinter {
	p := &historyPrinter{w: w, json: asJSON, minute: minute}
	if asCSV {
		p.csv = csv.NewWriter(w)
	}
	return p
}

// historyItem is one line of --json (and a row of --csv).
type historyItem struct {
	Device  string   `json:"device"`
	Field   string   `json:"field,omitempty"`
	T       int64    `json:"t"`
	TS      string   `json:"ts"`
	Value   any      `json:"value,omitempty"`
	N       uint32   `json:"n,omitempty"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	Mean    *float64 `json:"mean,omitempty"`
	Last    *bool    `json:"last,omitempty"`
	Changes *uint32  `json:"changes,omitempty"`
	Unit    string   `json:"unit,omitempty"`
}

// page prints p's items; unit is the series' SenML unit.
func (h *historyPrinter) page(p *gatewayext.HistoryPage, unit string) error {
	var items []historyItem
	base := historyItem{Device: p.Device, Field: p.Field, Unit: unit}
	switch b := p.Buckets.(type) {
	case *gatewayext.HistoryNumberBuckets:
		for i, t := range b.T {
			it := base
			it.T, it.N, it.Min, it.Max, it.Mean = t, b.N[i], &b.Min[i], &b.Max[i], &b.Mean[i]
			items = append(items, it)
		}
	case *gatewayext.HistoryBooleanBuckets:
		for i, t := range b.T {
			it := base
			it.T, it.N, it.Mean, it.Last, it.Changes = t, b.N[i], &b.Mean[i], &b.Last[i], &b.Changes[i]
			items = append(items, it)
		}
	}
	if p.Samples != nil {
		for i, t := range p.Samples.T {
			it := base
			it.T, it.Value = t, p.Samples.V[i]
			items = append(items, it)
		}
	}
	for _, it := range items {
		it.TS = time.UnixMilli(it.T).UTC().Format("2006-01-02T15:04:05.000Z07:00")
		if err := h.item(it, p.Kind); err != nil {
			return err
		}
		h.printed++
	}
	return nil
}

func (h *historyPrinter) item(it historyItem, kind gatewayext.HistoryKind) error {
	switch {
	case h.json:
		b, err := json.Marshal(it)
		if err != nil {
			return fmt.Errorf("encode a history item: %w", err)
		}
		_, err = fmt.Fprintf(h.w, "%s\n", b)
		return err
	case h.csv != nil:
		return h.csvRow(it, kind)
	}
	_, err := fmt.Fprintln(h.w, humanItem(it, kind))
	return err
}

// humanItem is a line for people: local time, the field, the value or
// the minute's figures, each number with its unit's symbol.
func humanItem(it historyItem, kind gatewayext.HistoryKind) string {
	unit := ""
	if it.Unit != "" {
		unit = " " + device.UnitSymbol(it.Unit)
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) + unit }
	at := time.UnixMilli(it.T).Local()
	line := at.Format("2006-01-02 15:04:05.000")
	if it.Value == nil {
		line = at.Format("2006-01-02 15:04")
	}
	if it.Field != "" {
		line += "  " + it.Field
	}
	switch {
	case it.Value != nil:
		if v, ok := it.Value.(float64); ok {
			return line + "  " + num(v)
		}
		return line + "  " + formatValue(it.Value)
	case kind == gatewayext.HistoryBoolean:
		return fmt.Sprintf("%s  %d values, %.0f%% true, last %v, %d changes", line, it.N, *it.Mean*100, *it.Last, *it.Changes)
	}
	return fmt.Sprintf("%s  %d values, min %s, mean %s, max %s", line, it.N, num(*it.Min), num(*it.Mean), num(*it.Max))
}

// csvRow writes the header before the first row: time,device,field,
// then value,unit or the minute's columns.
func (h *historyPrinter) csvRow(it historyItem, kind gatewayext.HistoryKind) error {
	f := func(p *float64) string { return strconv.FormatFloat(*p, 'g', -1, 64) }
	row := []string{it.TS, it.Device, it.Field}
	switch {
	case !h.minute:
		row = append(row, formatValue(it.Value), it.Unit)
	case kind == gatewayext.HistoryBoolean:
		row = append(row, fmt.Sprint(it.N), f(it.Mean), fmt.Sprint(*it.Last), fmt.Sprint(*it.Changes))
	default:
		row = append(row, fmt.Sprint(it.N), f(it.Min), f(it.Mean), f(it.Max), it.Unit)
	}
	if err := h.csvHeader(kind); err != nil {
		return err
	}
	return h.csv.Write(row)
}

// csvHeader writes the header once, before the first row or alone.
func (h *historyPrinter) csvHeader(kind gatewayext.HistoryKind) error {
	if h.header {
		return nil
	}
	h.header = true
	head := []string{"time", "device", "field"}
	switch {
	case !h.minute:
		head = append(head, "value", "unit")
	case kind == gatewayext.HistoryBoolean:
		head = append(head, "n", "mean", "last", "changes")
	default:
		head = append(head, "n", "min", "mean", "max", "unit")
	}
	if err := h.csv.Write(head); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}

// done flushes --csv's output (a header alone when there was no item);
// for people, says when nothing was kept.
func (h *historyPrinter) done() error {
	if h.csv != nil {
		if err := h.csvHeader(gatewayext.HistoryNumber); err != nil {
			return err
		}
		h.csv.Flush()
		return h.csv.Error()
	}
	if h.printed == 0 && !h.json {
		_, err := fmt.Fprintln(h.w, "no values kept in that time")
		return err
	}
	return nil
}
