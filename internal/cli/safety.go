package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// The safety commands (spec §6, §7, §10) talk to a running gateway like
// the other client commands, with the same common flags:
//
//	gateway stop [--reason TEXT]           engage the emergency stop; prints what went safe and what failed
//	gateway resume                         lift it (admin)
//	gateway confirm list [--status S]      the Confirmation Requests, a table
//	gateway confirm approve ID             apply a request's write (admin)
//	gateway confirm reject ID [--reason T] refuse it (admin)
//	gateway confirm cancel ID              withdraw it (its creator)
//	gateway audit [--since SEQ] [--limit N] [--follow]
//	                                       --limit alone: the newest N; with --since: the N after SEQ
//	                                       the audit log, one line per entry; --json prints entries as stored
//
// A stop that leaves a device short of its safe value, and an approval
// whose write then fails, print what happened and exit 1 with the reason
// on standard error.

// cmdStop engages the emergency stop.
func (a *app) cmdStop(args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("stop", "[--reason TEXT] [flags]", true, stderr)
	reason := fs.String("reason", "", "why, for the audit log and every client")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	raw, err := f.callOnce(openhal.MethodStop, openhal.StopParams{Reason: *reason}, "")
	if err != nil {
		// Engaged and acted on, but not latched on disk: the answer is an
		// error carrying the result. Show what was done, then the error.
		if res, ok := latchFailedResult(err); ok {
			printStopOutput(stdout, f.json, res)
		}
		return err
	}
	var res openhal.StopResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("decode the answer to the stop: %w", err)
	}
	if f.json {
		printJSON(stdout, raw)
	} else {
		printStop(stdout, res)
	}
	return stopOutcome(res)
}

// latchFailedResult finds the stop's result in a latch_failed error.
func latchFailedResult(err error) (json.RawMessage, bool) {
	var he *halclient.HubError
	if !errors.As(err, &he) || he.Reason() != "latch_failed" {
		return nil, false
	}
	d, _ := he.Err.Data.(map[string]any)
	res, ok := d["result"]
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(res)
	return b, err == nil
}

func printStopOutput(w io.Writer, asJSON bool, raw json.RawMessage) {
	if asJSON {
		printJSON(w, raw)
		return
	}
	var res openhal.StopResult
	if json.Unmarshal(raw, &res) == nil {
		printStop(w, res)
	}
}

// printStop says that the stop is engaged (or was already, and the safe
// values were driven again), then one line per device: its safe value
// applied, or the error that kept it from it.
func printStop(w io.Writer, res openhal.StopResult) {
	if res.AlreadyStopped {
		fmt.Fprintln(w, "emergency stop was already engaged: safe values driven again; only safe values may be written until an admin runs `gateway resume`")
	} else {
		fmt.Fprintln(w, "emergency stop engaged: only safe values may be written until an admin runs `gateway resume`")
	}
	for _, id := range res.SafeApplied {
		fmt.Fprintf(w, "safe: %s\n", id)
	}
	for _, fl := range res.Failed {
		fmt.Fprintf(w, "FAILED: %s: %s\n", fl.Device, errorText(fl.Error, fl.Device, false))
	}
	printLeftAsIs(w, res.LeftAsIs)
	if len(res.SafeApplied) == 0 && len(res.Failed) == 0 {
		fmt.Fprintln(w, "no device has a safe value to drive")
	}
}

// stopFailures is the command's error when a device did not reach its
// safe value: the stop is engaged, but someone must look at that device.
func stopFailures(res openhal.StopResult) error {
	if len(res.Failed) == 0 {
		return nil
	}
	ids := make([]string, len(res.Failed))
	for i, fl := range res.Failed {
		ids[i] = fl.Device
	}
	return fmt.Errorf("the emergency stop is engaged, but %d %s did not reach %s safe value: %s",
		len(ids), plural(uint64(len(ids)), "device", "devices"), plural(uint64(len(ids)), "its", "their"), strings.Join(ids, ", "))
}

// errorText is an error carried in a result (a stop's failure, a failed
// approval) for a person: its message and the data fields that the
// message does not already say. tagged adds the code's name and the
// reason, which the message says in words (for --json).
func errorText(eo openhal.ErrorObject, dev string, tagged bool) string {
	msg := eo.Message
	if dev != "" && !strings.Contains(msg, dev) {
		msg = dev + ": " + msg
	}
	s := msg
	var d map[string]any
	if len(eo.Data) > 0 && json.Unmarshal(eo.Data, &d) != nil {
		return s + " " + string(eo.Data)
	}
	if tagged {
		name := openhal.CodeName(eo.Code)
		if name == "" {
			name = "error " + strconv.FormatInt(eo.Code, 10)
		}
		s += " (" + name + ")"
		if r, ok := d["reason"].(string); ok && r != "" {
			s += ": " + r
		}
	}
	var extra []string
	for k, v := range d {
		if k == "reason" || k == "device" {
			continue
		}
		if vs := formatValue(v); !strings.Contains(msg, strings.Trim(vs, `"`)) {
			extra = append(extra, k+"="+vs)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		s += " [" + strings.Join(extra, " ") + "]"
	}
	return s
}

// cmdResume lifts the emergency stop.
func (a *app) cmdResume(args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("resume", "[flags]", true, stderr)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	raw, err := f.callOnce(openhal.MethodResume, nil, "")
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(stdout, raw)
	}
	var res struct {
		Stopped    bool  `json:"stopped"`
		WasStopped *bool `json:"wasStopped"` // absent from a Hub before it
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("decode the answer to the resume: %w", err)
	}
	msg := "resumed: the emergency stop is off and writes are accepted again"
	switch {
	case res.Stopped:
		// Another stop was engaged while this resume was being recorded.
		msg = "still stopped: a stop was engaged again while the resume was recorded; run gateway status"
	case res.WasStopped != nil && !*res.WasStopped:
		msg = "not stopped: the emergency stop was not engaged, nothing changed"
	}
	_, err = fmt.Fprintln(stdout, msg)
	return err
}

// cmdConfirm runs `gateway confirm list|approve|reject|cancel`.
func (a *app) cmdConfirm(args []string, stdout, stderr io.Writer) error {
	resolve := func(verb string) func([]string, io.Writer, io.Writer) error {
		return func(args []string, stdout, stderr io.Writer) error {
			return a.confirmResolve(verb, args, stdout, stderr)
		}
	}
	return runGroup("confirm", []subcommand{
		{"list", "the confirmation requests, a table", a.confirmList},
		{"approve", "apply a request's write (admin)", resolve("approve")},
		{"reject", "refuse a request (admin)", resolve("reject")},
		{"cancel", "withdraw a request (its creator)", resolve("cancel")},
	}, args, stdout, stderr)
}

// confirmList prints the Confirmation Requests: a table, or the hub's
// answer with --json.
func (a *app) confirmList(args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("confirm list", "[--status S] [flags]", true, stderr)
	// A misspelt status would otherwise list nothing, silently.
	status := fs.String("status", "", "only the requests with this `status`: "+strings.Join(openhal.ConfirmStatuses, ", ")+" (default: all)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *status != "" && !slices.Contains(openhal.ConfirmStatuses, *status) {
		return Usagef(fs, "--status %q is not one of %s", *status, strings.Join(openhal.ConfirmStatuses, ", "))
	}
	all, stopped, schemas, err := f.confirmationPages(*status)
	if err != nil {
		return err
	}
	if f.json {
		raw, err := json.Marshal(struct {
			Confirmations []json.RawMessage `json:"confirmations"`
		}{all})
		if err != nil {
			return fmt.Errorf("encode the confirmation list: %w", err)
		}
		return printJSON(stdout, raw)
	}
	cs := make([]openhal.Confirmation, len(all))
	for i, raw := range all {
		if err := json.Unmarshal(raw, &cs[i]); err != nil {
			return fmt.Errorf("decode the confirmation list: %w", err)
		}
	}
	printStopBanner(stdout, stopped)
	return printConfirmations(stdout, cs, schemas)
}

// confirmationPages reads every page of hal/confirmations/list on one
// connection, within --timeout in all, and returns the requests as the
// hub sent them, by id, with the emergency stop in force when it
// connected, and (without --json) the devices' value schemas, for the
// units beside the values.
func (f *clientFlags) confirmationPages(status string) ([]json.RawMessage, *openhal.StopInfo, map[string]device.Schema, error) {
	ctx, stop := f.context(true)
	defer stop()
	c, err := f.dial(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	defer c.Close()
	all, err := f.listConfirmations(ctx, c, status)
	var schemas map[string]device.Schema
	if err == nil && !f.json {
		var devs openhal.DevicesListResult
		if c.Call(ctx, openhal.MethodDevicesList, nil, &devs) == nil {
			schemas = schemasOf(devs.Devices)
		}
	}
	return all, c.Init().Stopped, schemas, err
}

// listConfirmations reads every page of hal/confirmations/list on c.
func (f *clientFlags) listConfirmations(ctx context.Context, c *halclient.Conn, status string) ([]json.RawMessage, error) {
	all := []json.RawMessage{}
	p := openhal.ConfirmationsListParams{Status: status}
	for {
		raw, err := f.call(ctx, c, openhal.MethodConfirmationsList, p, "")
		if err != nil {
			return nil, err
		}
		var page struct {
			Confirmations []json.RawMessage `json:"confirmations"`
			Next          string            `json:"next"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("decode the confirmation list: %w", err)
		}
		all = append(all, page.Confirmations...)
		if page.Next == "" {
			return all, nil
		}
		if len(page.Confirmations) == 0 || page.Next == p.After {
			return nil, fmt.Errorf("the hub sent an empty page of confirmations after %q that says more follow", p.After)
		}
		p.After = page.Next
	}
}

// printConfirmations prints the requests as a table: VALUE is what each
// asks for and NOW the device's value when the hub answered (pending
// ones; "-" for the others), so that an approver sees what approving
// would change. What superseded a request follows the table, a line each.
func printConfirmations(w io.Writer, cs []openhal.Confirmation, schemas map[string]device.Schema) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDEVICE\tVALUE\tNOW\tREQUESTED BY\tREASON\tSTATUS\tEXPIRES")
	for _, c := range cs {
		reason := c.Reason
		if reason == "" {
			reason = "-"
		}
		s := schemas[c.Device]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Device, valueWithUnit(s, c.Value), currentText(c, s), principalText(c.RequestedBy),
			oneLine(reason), c.Status, c.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range cs {
		if c.Status == openhal.ConfirmSuperseded && c.SupersededBy != nil {
			if _, err := fmt.Fprintf(w, "%s superseded by %s\n", c.ID, supersededText(*c.SupersededBy)); err != nil {
				return err
			}
		}
	}
	return nil
}

// currentText is the device's value beside a pending request's, "-"
// when the hub sent none (a resolved request, a device with no value).
func currentText(c openhal.Confirmation, s device.Schema) string {
	if c.Current == nil {
		return "-"
	}
	return valueWithUnit(s, c.Current.Value)
}

// supersededText says what superseded a request: "agent bench-agent's
// write of false at 2026-01-01 12:00:03 UTC (devSeq 7)", or "its
// creator's newer request c-00000043 for true".
func supersededText(by openhal.SupersededBy) string {
	if by.Request != "" {
		return fmt.Sprintf("its creator's newer request %s for %s", by.Request, formatValue(by.Value))
	}
	s := fmt.Sprintf("%s's write of %s at %s (%s)", principalText(by.Principal), formatValue(by.Value), clockTime(by.TS), seqNote(by.Seq, by.DevSeq))
	if by.Confirmation != "" {
		s += ", approved as " + by.Confirmation
	}
	return s
}

func principalText(p openhal.Principal) string {
	return strings.TrimSpace(p.Kind + " " + p.Name)
}

// confirmResolve approves, rejects or cancels one request and prints it
// resolved.
func (a *app) confirmResolve(verb string, args []string, stdout, stderr io.Writer) error {
	synopsis := "ID [flags]"
	if verb == "reject" {
		synopsis = "ID [--reason TEXT] [flags]"
	}
	fs, f := a.newClientFlags("confirm "+verb, synopsis, true, stderr)
	var reason *string
	if verb == "reject" {
		reason = fs.String("reason", "", "why, for the requester and the audit log")
	}
	pos, err := parseClientArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, pos, 1, "confirmation id"); err != nil {
		return err
	}
	id := pos[0]
	method, params := openhal.MethodConfirmationApprove, any(openhal.ConfirmationParams{ID: id})
	switch verb {
	case "reject":
		method, params = openhal.MethodConfirmationReject, openhal.RejectParams{ID: id, Reason: *reason}
	case "cancel":
		method = openhal.MethodConfirmationCancel
	}
	raw, err := f.callOnce(method, params, "")
	if err != nil {
		return err
	}
	var cf openhal.Confirmation
	if err := json.Unmarshal(raw, &cf); err != nil {
		return fmt.Errorf("decode the answer for confirmation %s: %w", id, err)
	}
	if f.json {
		printJSON(stdout, raw)
	}
	if cf.Status == openhal.ConfirmFailed {
		msg := "the write was refused"
		if cf.Error != nil {
			msg = errorText(*cf.Error, "", f.json) // the sentence names the device
		}
		return fmt.Errorf("confirmation %s failed: approved, but the write of %s = %s then failed: %s", cf.ID, cf.Device, formatValue(cf.Value), msg)
	}
	if f.json {
		return nil
	}
	_, err = fmt.Fprintln(stdout, resolvedLine(cf))
	return err
}

// resolvedLine says what became of a request.
func resolvedLine(cf openhal.Confirmation) string {
	s := fmt.Sprintf("%s %s: %s = %s, requested by %s", cf.ID, cf.Status, cf.Device, formatValue(cf.Value), principalText(cf.RequestedBy))
	if cf.Result != nil {
		s += fmt.Sprintf(" (applied, %s)", seqNote(cf.Result.Seq, cf.Result.DevSeq))
	}
	if cf.ResolveReason != "" {
		s += ": " + oneLine(cf.ResolveReason)
	}
	if cf.SupersededBy != nil {
		s += ": superseded by " + supersededText(*cf.SupersededBy)
	}
	return s
}

// auditPage is how many entries one hal/audit/list asks for: the Hub's
// most.
const auditPage = 1000

// followInterval is how often `audit --follow` asks for new entries: the
// Hub sends no notification for them.
const followInterval = 500 * time.Millisecond

// cmdAudit prints the audit log from a seq on, one line per entry, or
// with --json each entry as stored. --timeout bounds each request, so
// that --follow runs until interrupted.
func (a *app) cmdAudit(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return a.runAudit(ctx, args, stdout, stderr)
}

// runAudit is cmdAudit until ctx ends.
func (a *app) runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("audit", "[--since SEQ] [--limit N] [--follow] [flags]", true, stderr)
	since := fs.Uint64("since", 0, "print the entries after this `seq`, oldest first")
	limit := fs.Int("limit", 0, "print `N` entries: the newest N, or with --since the first N after it (default: all)")
	follow := fs.Bool("follow", false, "then print new entries as they are written, until interrupted")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *limit < 0 {
		return Usagef(fs, "--limit %d: want a positive number", *limit)
	}
	dctx, cancel := context.WithTimeout(ctx, f.timeout)
	c, err := f.dial(dctx)
	cancel()
	if err != nil {
		return err
	}
	defer c.Close()
	r := auditReader{f: f, c: c, since: *since, out: stdout}
	if flagSet(fs, "since") {
		r.left, r.limited = *limit, *limit > 0
	} else {
		r.tail = *limit
	}
	err = r.run(ctx, *follow)
	if r.skipped > 0 {
		fmt.Fprintf(stderr, "gateway: the hub skipped %d unreadable audit %s\n", r.skipped, plural(uint64(r.skipped), "line", "lines"))
	}
	if ctx.Err() != nil {
		return nil // interrupted: the normal end of --follow
	}
	return err
}

// auditReader pages through the audit log.
type auditReader struct {
	f       *clientFlags
	c       *halclient.Conn
	since   uint64 // where the next page starts: the last seq printed, or the Hub's next
	left    int    // entries still to print, with --since and --limit
	limited bool   // --since and --limit were given
	tail    int    // --limit without --since: keep the newest tail entries until the log's end
	kept    []auditItem
	out     io.Writer
	skipped int // the most unreadable lines one answer reported
}

// run prints pages until the log's end, or with follow until ctx ends.
func (r *auditReader) run(ctx context.Context, follow bool) error {
	for {
		full, err := r.page(ctx)
		switch {
		case err != nil:
			return err
		case r.limited && r.left == 0:
			return nil
		case full:
			continue // more may be waiting
		}
		r.flushTail()
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.c.Done():
			return fmt.Errorf("lost the hub: %w", r.c.Err())
		case <-time.After(followInterval):
		}
	}
}

// page asks for one page after r.since and prints it; full says that the
// Hub has more at once (its answer's next). A page may hold fewer entries
// than asked for: the Hub stops before its answer would pass its message
// limit.
func (r *auditReader) page(ctx context.Context) (full bool, err error) {
	want := auditPage
	if r.limited {
		want = min(want, r.left)
	}
	cctx, cancel := context.WithTimeout(ctx, r.f.timeout)
	defer cancel()
	p := openhal.AuditListParams{Since: &r.since, Limit: &want}
	raw, err := r.f.call(cctx, r.c, openhal.MethodAuditList, p, "")
	if err != nil {
		return false, err
	}
	var res openhal.AuditListResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return false, fmt.Errorf("decode the audit entries: %w", err)
	}
	r.skipped = max(r.skipped, res.Skipped)
	for _, raw := range res.Entries {
		var e gatewayext.AuditEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return false, fmt.Errorf("decode audit entry %.40s: %w", raw, err)
		}
		if e.Seq <= r.since {
			return false, fmt.Errorf("the hub sent audit entry %d after %d", e.Seq, r.since)
		}
		r.since = e.Seq
		r.take(auditItem{raw, e})
	}
	if r.limited {
		r.left -= len(res.Entries)
	}
	if res.Next == nil {
		return false, nil
	}
	if *res.Next < r.since {
		return false, fmt.Errorf("the hub's next audit page starts after %d, before %d", *res.Next, r.since)
	}
	r.since = *res.Next // past entries this token may not see
	return true, nil
}

// auditItem is one entry, as the Hub sent it and decoded.
type auditItem struct {
	raw json.RawMessage
	e   gatewayext.AuditEntry
}

// take prints an entry, or keeps it while the newest are being sought
// (--limit without --since): the log is read to its end, keeping the
// last tail entries.
func (r *auditReader) take(it auditItem) {
	if r.tail == 0 {
		r.print(it)
		return
	}
	r.kept = append(r.kept, it)
	if len(r.kept) > r.tail {
		r.kept = r.kept[1:]
	}
}

// flushTail prints the newest entries kept, once the log's end is
// reached; from then on entries are printed as they come (--follow).
func (r *auditReader) flushTail() {
	for _, it := range r.kept {
		r.print(it)
	}
	r.kept, r.tail = nil, 0
}

func (r *auditReader) print(it auditItem) {
	if r.f.json {
		fmt.Fprintf(r.out, "%s\n", it.raw)
	} else {
		fmt.Fprintln(r.out, auditLine(it.e))
	}
}

// flagSet reports whether the command line gave the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// auditLine is one entry for a person: seq, ts, principal, action,
// device=value, outcome, then what else it says.
func auditLine(e gatewayext.AuditEntry) string {
	target := "-"
	switch {
	case e.Device != "" && e.Value != nil:
		target = e.Device + "=" + formatValue(e.Value)
	case e.Device != "":
		target = e.Device
	}
	who := e.Principal.Kind + ":" + e.Principal.Name
	s := fmt.Sprintf("%6d %s %-20s %-12s %-24s %-9s", e.Seq, e.TS.UTC().Format("2006-01-02T15:04:05.000Z"), who, e.Action, target, e.Outcome)
	var more []string
	if e.Rule != "" {
		more = append(more, "rule="+e.Rule)
	}
	if e.Confirmation != "" {
		more = append(more, "confirmation="+e.Confirmation)
	}
	if e.Reason != "" {
		more = append(more, "reason="+strconv.Quote(e.Reason))
	}
	if e.Error != nil {
		// The message says in words what the code and reason say; an
		// error recorded without one gets them instead.
		msg := e.Error.Message
		if msg == "" {
			msg = strings.TrimSpace(openhal.CodeName(e.Error.Code) + " " + e.Error.Reason)
		}
		more = append(more, "error="+strconv.Quote(msg))
	}
	if e.Count > 0 {
		more = append(more, "count="+strconv.Itoa(e.Count))
	}
	if !e.From.IsZero() {
		more = append(more, "from="+e.From.UTC().Format("2006-01-02T15:04:05.000Z"), "to="+e.To.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	for _, t := range e.By {
		more = append(more, "by="+tallyText(t))
	}
	for _, field := range slices.Sorted(maps.Keys(e.Cut)) {
		c := e.Cut[field]
		more = append(more, fmt.Sprintf("cut=%s:%d:sha256:%s", field, c.Bytes, c.SHA256))
	}
	if len(more) > 0 {
		s += " " + strings.Join(more, " ")
	}
	return strings.TrimRight(s, " ")
}

// tallyText is one kind of counted request: action/outcome[/rule][/reason]×count.
func tallyText(t gatewayext.AuditTally) string {
	s := t.Action + "/" + t.Outcome
	if t.Rule != "" {
		s += "/" + t.Rule
	}
	if t.Reason != "" && t.Reason != t.Rule {
		s += "/" + t.Reason
	}
	return s + "×" + strconv.Itoa(t.Count)
}
