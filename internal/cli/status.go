package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// `gateway status` is the one screen an operator looks at first: is the
// gateway stopped, by whom and why; which devices are unwell; what waits
// for an admin; which adapters run; who is connected. It is a client of
// the Hub like the others: what it shows of devices and confirmations is
// what the token may see.

// statusNewest is how many pending confirmations the screen lists.
const statusNewest = 3

// statusReport is what `gateway status --json` prints.
type statusReport struct {
	Version       string                      `json:"version"`
	Commit        string                      `json:"commit"`
	Board         string                      `json:"board"`
	Name          string                      `json:"name"`
	ID            string                      `json:"id,omitempty"`
	Fingerprint   string                      `json:"fingerprint,omitempty"` // of the TLS listeners' certificate
	StartedAt     time.Time                   `json:"startedAt"`
	UptimeS       float64                     `json:"uptimeSeconds"`
	BootID        string                      `json:"bootId"`
	Principal     openhal.Principal           `json:"principal"`
	Stopped       *openhal.StopInfo           `json:"stopped"`
	Devices       deviceSummary               `json:"devices"`
	Confirmations confirmSummary              `json:"confirmations"`
	Adapters      []gatewayext.AdapterSummary `json:"adapters"` // null: not shown to this token
	Clients       gatewayext.ClientCounts     `json:"clients"`
	// schemas are the devices' value schemas, for the units beside the
	// confirmations' values.
	schemas map[string]device.Schema
}

// deviceSummary counts the devices by state and lists those not ok.
type deviceSummary struct {
	Total   int                  `json:"total"`
	ByState map[device.State]int `json:"byState"`
	Unwell  []deviceState        `json:"unwell"`
}

type deviceState struct {
	ID    string       `json:"id"`
	State device.State `json:"state"`
	Fault string       `json:"fault,omitempty"`
}

// confirmSummary counts the pending confirmations and keeps the newest.
type confirmSummary struct {
	Pending int                    `json:"pending"`
	Newest  []openhal.Confirmation `json:"newest"`
}

// cmdStatus prints the gateway's status: one screen, or one JSON object.
func (a *app) cmdStatus(args []string, stdout, stderr io.Writer) error {
	fs, f := a.newClientFlags("status", "[flags]", true, stderr)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	ctx, stop := f.context(true)
	defer stop()
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	r, err := f.gatherStatus(ctx, c)
	if err != nil {
		return err
	}
	if f.json {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode the status: %w", err)
		}
		return printJSON(stdout, b)
	}
	return printStatusScreen(stdout, r)
}

// gatherStatus asks the Hub, on one connection, for each part of the
// status.
func (f *clientFlags) gatherStatus(ctx context.Context, c *halclient.Conn) (statusReport, error) {
	init := c.Init()
	r := statusReport{Version: init.HubInfo.Version, BootID: init.BootID, Principal: init.Principal, Stopped: init.Stopped}
	raw, err := f.call(ctx, c, gatewayext.MethodStatus, nil, "")
	if err != nil {
		return r, err
	}
	var gs gatewayext.Status
	if err := json.Unmarshal(raw, &gs); err != nil {
		return r, fmt.Errorf("decode the answer of %s: %w", gatewayext.MethodStatus, err)
	}
	r.Commit, r.Board, r.StartedAt, r.UptimeS, r.Adapters, r.Clients = gs.Commit, gs.Board, gs.StartedAt, gs.UptimeSeconds, gs.Adapters, gs.Clients
	r.Name, r.ID, r.Fingerprint = gs.Name, gs.ID, gs.Fingerprint
	if raw, err = f.call(ctx, c, openhal.MethodDevicesList, nil, ""); err != nil {
		return r, err
	}
	var devs openhal.DevicesListResult
	if err := json.Unmarshal(raw, &devs); err != nil {
		return r, fmt.Errorf("decode the device list: %w", err)
	}
	r.Devices = summarizeDevices(devs.Devices)
	r.schemas = schemasOf(devs.Devices)
	pending, err := f.listConfirmations(ctx, c, openhal.ConfirmPending)
	if err != nil {
		return r, err
	}
	r.Confirmations, err = summarizeConfirmations(pending)
	return r, err
}

func summarizeDevices(devs []device.Descriptor) deviceSummary {
	s := deviceSummary{Total: len(devs), ByState: map[device.State]int{}, Unwell: []deviceState{}}
	for _, d := range devs {
		s.ByState[d.State]++
		if d.State != device.StateOK {
			s.Unwell = append(s.Unwell, deviceState{ID: d.ID, State: d.State, Fault: d.Fault})
		}
	}
	return s
}

func summarizeConfirmations(raws []json.RawMessage) (confirmSummary, error) {
	cs := make([]openhal.Confirmation, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &cs[i]); err != nil {
			return confirmSummary{}, fmt.Errorf("decode the confirmation list: %w", err)
		}
	}
	slices.SortStableFunc(cs, func(a, b openhal.Confirmation) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return confirmSummary{Pending: len(cs), Newest: cs[:min(len(cs), statusNewest)]}, nil
}

// printStatusScreen prints the screen: the stop first, then a row per part.
func printStatusScreen(w io.Writer, r statusReport) error {
	if r.Stopped != nil {
		fmt.Fprintln(w, stopBanner(r.Stopped))
		printStopOutcome(w, r.Stopped)
	} else {
		fmt.Fprintln(w, "running: no emergency stop")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	up := time.Duration(r.UptimeS * float64(time.Second)).Round(time.Second)
	fmt.Fprintf(tw, "gateway:\t%s, board %s, up %s since %s\n", strings.TrimPrefix(versionLine(r.Version, r.Commit), "gateway "), r.Board, up, clockTime(r.StartedAt))
	fmt.Fprintf(tw, "token:\t%s, scope %s\n", principalText(r.Principal), r.Principal.Scope)
	fmt.Fprintf(tw, "devices:\t%s\n", devicesRow(r.Devices))
	for _, d := range r.Devices.Unwell {
		fmt.Fprintf(tw, "  %s\t%s\n", d.ID, stateText(d.State, d.Fault))
	}
	fmt.Fprintf(tw, "confirmations:\t%d pending\n", r.Confirmations.Pending)
	for _, cf := range r.Confirmations.Newest {
		s := r.schemas[cf.Device]
		fmt.Fprintf(tw, "  %s\t%s = %s (now %s) by %s, expires %s\n", cf.ID, cf.Device, valueWithUnit(s, cf.Value), currentText(cf, s), principalText(cf.RequestedBy), clockTime(cf.ExpiresAt))
	}
	if more := r.Confirmations.Pending - len(r.Confirmations.Newest); more > 0 {
		fmt.Fprintf(tw, "  …\t%d more: gateway confirm list --status pending\n", more)
	}
	fmt.Fprintf(tw, "adapters:\t%s\n", adaptersRow(r.Adapters))
	fmt.Fprintf(tw, "clients:\t%s\n", clientsRow(r.Clients))
	fmt.Fprintf(tw, "name:\t%s\n", nameRow(r))
	fmt.Fprintf(tw, "certificate:\t%s\n", certificateRow(r.Fingerprint))
	return tw.Flush()
}

// nameRow is the gateway's name on the LAN and its id.
func nameRow(r statusReport) string {
	if r.ID == "" {
		return fmt.Sprintf("%q", r.Name)
	}
	return fmt.Sprintf("%q, id %s", r.Name, r.ID)
}

// certificateRow is the fingerprint a person compares with the one a
// client asks them to trust at first contact, or a browser shows.
func certificateRow(fp string) string {
	if fp == "" {
		return "none (no TLS listener)"
	}
	return "SHA-256 " + fp + " (of wss:// and tls://, the console over https://)"
}

func devicesRow(s deviceSummary) string {
	parts := []string{}
	for _, st := range []device.State{device.StateOK, device.StateFault, device.StateOffline} {
		if n := s.ByState[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	switch len(parts) {
	case 0:
		return "none visible to this token"
	case 1:
		return parts[0]
	}
	return fmt.Sprintf("%d: %s", s.Total, strings.Join(parts, ", "))
}

func stateText(st device.State, fault string) string {
	if fault == "" {
		return string(st)
	}
	return string(st) + ": " + oneLine(fault)
}

func adaptersRow(as []gatewayext.AdapterSummary) string {
	switch {
	case as == nil:
		return "shown to an admin token not limited to some devices"
	case len(as) == 0:
		return "none enabled"
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.Name + " " + string(a.State)
		if a.Detail != "" {
			parts[i] += " (" + oneLine(a.Detail) + ")"
		} else if a.Reason != "" {
			parts[i] += " (" + string(a.Reason) + ")"
		}
	}
	return strings.Join(parts, ", ")
}

func clientsRow(c gatewayext.ClientCounts) string {
	var parts []string
	for _, sc := range []openhal.Scope{openhal.ScopeAdmin, openhal.ScopeControlHigh, openhal.ScopeControlLow, openhal.ScopeRead} {
		if n := c.ByScope[sc]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, sc))
		}
	}
	s := fmt.Sprintf("%d connected", c.Total)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// clockTime is a time for people: the local date and time to the second.
func clockTime(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

// stopBanner says that the emergency stop is engaged, who engaged it,
// when and why: the first line of `devices`, `confirm list`, `watch` and
// `status` while it is, so that nobody reads a table of devices "ok"
// without knowing that they are held at their safe values.
func stopBanner(s *openhal.StopInfo) string {
	b := "EMERGENCY STOP engaged by " + principalText(s.Principal)
	if !s.TS.IsZero() {
		b += " at " + clockTime(s.TS)
	}
	if r := oneLine(s.Reason); r != "" {
		b += ": " + r
	}
	return b + " (only safe values can be written until an admin runs gateway resume)"
}

// printStopOutcome says, under the banner, what the stop in force could
// not make safe and what it left as it was, as hal/initialize tells it:
// the devices someone must look at while the gateway is stopped.
func printStopOutcome(w io.Writer, s *openhal.StopInfo) {
	for _, fl := range s.Failed {
		fmt.Fprintf(w, "FAILED to go safe: %s: %s\n", fl.Device, errorText(fl.Error, fl.Device, false))
	}
	printLeftAsIs(w, s.LeftAsIs)
}

// printStopBanner prints the banner when a stop is in force.
func printStopBanner(w io.Writer, s *openhal.StopInfo) {
	if s != nil {
		fmt.Fprintln(w, stopBanner(s))
	}
}
