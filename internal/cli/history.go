package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// defaultHistorySince is how far back `gateway history` reads unless
// --since says.
const defaultHistorySince = time.Hour

// historyQuery is what `gateway history` was asked.
type historyQuery struct {
	device, field string
	minute        bool
	since, until  *int64 // Unix ms
}

// cmdHistory prints a device's history, read through the Hub
// (gateway/history): the token's scope and device limits apply as to
// hal/read, the command works against a remote gateway like the others,
// and it sees the values not written to disk yet.
func (a *app) cmdHistory(args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("history", "DEVICE [--since DURATION|TIME] [--until DURATION|TIME] [--field NAME] [--minute] [--csv|--json] [flags]", true, stderr)
	since := fs.String("since", "1h", "from this long ago (30m, 2h, 7d) or this time (2026-12-06, '2026-12-06 15:00', RFC 3339)")
	until := fs.String("until", "", "up to this long ago or this time (default: now)")
	field := fs.String("field", "", "the member of an object value to print (default: every one kept)")
	minute := fs.Bool("minute", false, "one line a minute (count, min, mean, max), from the one-minute buckets kept a year, instead of every value (kept 7 days)")
	csv := fs.Bool("csv", false, "comma-separated values, with a header line")
	pos, err := parseClientArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, pos, 1, "device id"); err != nil {
		return err
	}
	if *csv && f.json {
		return Usagef(fs, "--csv and --json: choose one")
	}
	now := time.Now()
	q := historyQuery{device: pos[0], field: *field, minute: *minute}
	if q.since, err = parseWhen(*since, now); err != nil {
		return Usagef(fs, "--since %q: %v", *since, err)
	}
	if *until != "" {
		if q.until, err = parseWhen(*until, now); err != nil {
			return Usagef(fs, "--until %q: %v", *until, err)
		}
		if *q.until < *q.since {
			return Usagef(fs, "--until %s is before --since %s", *until, *since)
		}
	}
	ctx, stop := f.context(true)
	defer stop()
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	out := newHistoryPrinter(stdout, f.json, *csv, q.minute)
	units, err := f.unitsOf(ctx, c, q.device)
	if err != nil {
		return err
	}
	fields := []string{q.field}
	if q.field == "" {
		if fields, err = f.historyFields(ctx, c, q); err != nil {
			return err
		}
		if len(fields) == 0 {
			fmt.Fprintf(stderr, "%s has no history: only number and boolean values are kept\n", q.device)
			if out.csv != nil {
				return out.done() // the header: a script reads an empty table
			}
			return nil
		}
	}
	for _, fl := range fields {
		q.field = fl
		if err := f.eachHistoryPage(ctx, c, q, func(p *gatewayext.HistoryPage) error {
			return out.page(p, units[p.Field])
		}); err != nil {
			return err
		}
	}
	return out.done()
}

// parseWhen reads --since and --until: a duration before now (30m, 2h,
// 7d), a date (local midnight), a local date and time, or RFC 3339.
func parseWhen(s string, now time.Time) (*int64, error) {
	ms := func(t time.Time) (*int64, error) { v := t.UnixMilli(); return &v, nil }
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n >= 0 {
			return ms(now.Add(-time.Duration(n * float64(24*time.Hour))))
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return nil, errors.New("want a duration back from now, not a negative one")
		}
		return ms(now.Add(-d))
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		var t time.Time
		var err error
		if layout == time.RFC3339Nano {
			t, err = time.Parse(layout, s)
		} else {
			t, err = time.ParseInLocation(layout, s, time.Local)
		}
		if err == nil {
			return ms(t)
		}
	}
	return nil, errors.New("want a duration (30m, 2h, 7d) or a time (2026-12-06, '2026-12-06 15:00', 2026-12-06T15:00:00Z)")
}

// unitsOf returns the device's units by field ("" for a plain value), as
// SenML symbols; a device the token cannot see is the Hub's
// DEVICE_NOT_FOUND, worded.
func (f *clientFlags) unitsOf(ctx context.Context, c *halclient.Conn, id string) (map[string]string, error) {
	raw, err := f.call(ctx, c, openhal.MethodDevicesList, nil, "")
	if err != nil {
		return nil, err
	}
	var res openhal.DevicesListResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decode the device list: %w", err)
	}
	units := map[string]string{}
	for _, d := range res.Devices {
		if d.ID != id {
			continue
		}
		units[""] = d.Schema.Unit
		for name, p := range d.Schema.Properties {
			units[name] = p.Unit
		}
	}
	return units, nil
}

// historyFields are the series the device keeps: its one, or each that
// the Hub names when it keeps several.
func (f *clientFlags) historyFields(ctx context.Context, c *halclient.Conn, q historyQuery) ([]string, error) {
	one := 1
	raw, err := f.call(ctx, c, gatewayext.MethodHistory, historyParams(q, nil, &one), q.device)
	if err == nil {
		var p gatewayext.HistoryPage
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("decode the history of %s: %w", q.device, err)
		}
		if len(p.Fields) == 0 {
			return nil, nil // nothing kept: no page to print
		}
		return []string{""}, nil
	}
	var he *halclient.HubError
	if !errors.As(err, &he) || he.Code() != openhal.CodeInvalidParams {
		return nil, err
	}
	data, _ := he.Err.Data.(map[string]any)
	list, _ := data["fields"].([]any)
	if data["param"] != "field" || len(list) == 0 {
		return nil, err
	}
	fields := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			fields = append(fields, s)
		}
	}
	return fields, nil
}

func historyParams(q historyQuery, from *uint64, limit *int) gatewayext.HistoryParams {
	p := gatewayext.HistoryParams{Device: q.device, Field: q.field, Resolution: gatewayext.HistoryFull, Since: q.since, Until: q.until, From: from, Limit: limit}
	if q.minute {
		p.Resolution = gatewayext.HistoryMinute
	}
	return p
}

// eachHistoryPage calls fn with each page of q's series, from --since on,
// until the pages reach the newest item or --until.
func (f *clientFlags) eachHistoryPage(ctx context.Context, c *halclient.Conn, q historyQuery, fn func(*gatewayext.HistoryPage) error) error {
	var from *uint64
	for {
		raw, err := f.call(ctx, c, gatewayext.MethodHistory, historyParams(q, from, nil), q.device)
		if err != nil {
			return err
		}
		var p gatewayext.HistoryPage
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("decode the history of %s: %w", q.device, err)
		}
		if err := fn(&p); err != nil {
			return err
		}
		if !p.More {
			return nil
		}
		next := p.Next
		from = &next
	}
}
