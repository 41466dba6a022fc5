package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// The adapter commands (DESIGN.md, "Command line contract"):
//
//	gateway adapter install DIR     check and install an adapter folder, then apply it to the running gateway
//	gateway adapter list            installed adapters, with their live state when the gateway is reachable
//	gateway adapter status NAME     an adapter's live status
//	gateway adapter logs NAME [-n N] the last lines of its standard error
//	gateway adapter reset NAME      let a failed adapter start again
//	gateway adapter remove NAME     uninstall it, and stop it in the running gateway
//
// Installs and logs are files in the state directory (--state-dir); the
// live state is the running gateway's, asked over the Hub with the admin
// token, as the other client commands do.

func (a *app) cmdAdapter(args []string, stdout, stderr io.Writer) error {
	return runGroup("adapter", []subcommand{
		{"install", "check and install an adapter folder, then apply it to the running gateway", a.adapterInstall},
		{"list", "installed adapters, with their live state when the gateway is reachable", a.adapterList},
		{"status", "an adapter's live status", a.adapterStatus},
		{"logs", "the last lines of an adapter's standard error", a.adapterLogs},
		{"reset", "let a failed adapter start again", a.adapterReset},
		{"remove", "uninstall an adapter, and stop it in the running gateway", a.adapterRemove},
	}, args, stdout, stderr)
}

// adapterFlags parses a subcommand's flags and its n positional arguments.
func (a *app) adapterFlags(name, synopsis string, args []string, n int, stderr io.Writer, extra func(*flag.FlagSet)) (*clientFlags, []string, error) {
	what := "adapter name"
	if name == "install" {
		what = "adapter folder"
	}
	fs, f := a.newClientFlags("adapter "+name, synopsis, true, stderr)
	if extra != nil {
		extra(fs)
	}
	pos, err := parseClientArgs(fs, args)
	if err != nil {
		return nil, nil, err
	}
	if err := WantArgs(fs, pos, n, what); err != nil {
		return nil, nil, err
	}
	if f.stateDir == "" {
		return nil, nil, Usagef(fs, "no state directory: pass --state-dir")
	}
	if name == "install" || name == "remove" {
		if err := ServerOnly("adapter " + name); err != nil {
			return nil, nil, err
		}
		if err := asStateOwner(f.stateDir); err != nil {
			return nil, nil, err
		}
	}
	return f, pos, nil
}

// errUnreachable wraps the failure to reach the gateway: the commands
// that can do without it say so and go on.
type errUnreachable struct{ err error }

func (e errUnreachable) Error() string { return "gateway not reachable: " + e.err.Error() }
func (e errUnreachable) Unwrap() error { return e.err }

// askGateway makes one adapter request to the running gateway and decodes
// its result into out. Failing to connect is an errUnreachable; an error
// answer is a *halclient.HubError.
func (f *clientFlags) askGateway(method string, params, out any) error {
	ctx, stop := f.context(true)
	defer stop()
	c, err := f.dial(ctx)
	if err != nil {
		return errUnreachable{err}
	}
	defer c.Close()
	raw, err := f.call(ctx, c, method, params, "")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decode the answer: %w", method, err)
	}
	return nil
}

// notEnabled reports whether err is the gateway's answer that it does
// not run the adapter.
func notEnabled(err error) bool {
	var he *halclient.HubError
	return errors.As(err, &he) && he.Reason() == gatewayext.ReasonAdapterNotEnabled
}

func (a *app) adapterInstall(args []string, stdout, stderr io.Writer) error {
	f, pos, err := a.adapterFlags("install", "DIR [--state-dir DIR]", args, 1, stderr, nil)
	if err != nil {
		return err
	}
	rec, err := a.env.StateDir.Adapters(f.stateDir).Install(pos[0])
	var faults FieldErrors
	if errors.As(err, &faults) {
		for _, e := range faults {
			fmt.Fprintf(stderr, "gateway: %s: %s\n", pos[0], withExecHint(pos[0], e))
		}
		return ErrReported
	}
	if err != nil {
		return fmt.Errorf("install %s: %w", pos[0], err)
	}
	fmt.Fprintf(stdout, "installed %s %s\nsha256 %s\n", rec.Name, rec.Version, rec.Hash)
	return reloadAfter(f, rec.Name, "install", stdout)
}

// reloadAfter applies an install or remove of name to the running
// gateway, and says what became of it.
func reloadAfter(f *clientFlags, name, what string, stdout io.Writer) error {
	var ans gatewayext.AdapterResult
	err := f.askGateway(gatewayext.MethodAdaptersReload, gatewayext.AdapterParams{Name: name}, &ans)
	switch {
	case err == nil && what == "remove":
		fmt.Fprintf(stdout, "stopped in the running gateway (%s)\n", ans.Adapter.State)
	case err == nil:
		fmt.Fprintf(stdout, "applied to the running gateway: %s\n", stateLine(ans.Adapter))
	case errors.As(err, new(errUnreachable)) && what == "remove":
		fmt.Fprintf(stdout, "the gateway is not reachable (%v)\n", errors.Unwrap(err))
	case errors.As(err, new(errUnreachable)):
		fmt.Fprintf(stdout, "the gateway is not reachable (%v): %s starts with the gateway if the configuration enables it (adapters.enabled)\n", errors.Unwrap(err), name)
	case notEnabled(err) && what == "remove":
	case notEnabled(err):
		fmt.Fprintf(stdout, "the running gateway does not run %s: add it to adapters.enabled in the configuration (adapters: {enabled: [%s]}) and restart the gateway\n", name, name)
	default:
		return fmt.Errorf("%s: apply to the running gateway: %w", name, err)
	}
	return nil
}

// stateLine is an adapter's state in a few words: "running (pid 42)",
// "failed (tampered): hash mismatch".
func stateLine(st gatewayext.AdapterStatus) string {
	s := string(st.State)
	if st.Reason != "" {
		s += " (" + string(st.Reason) + ")"
	}
	if st.Pid != 0 {
		s += fmt.Sprintf(" pid %d", st.Pid)
	}
	if st.Detail != "" {
		s += ": " + st.Detail
	}
	return s
}

// listEntry is one row of `adapter list --json`: an install record, the
// live status, or both.
type listEntry struct {
	Name      string                    `json:"name"`
	Installed *AdapterRecord            `json:"installed"`
	Status    *gatewayext.AdapterStatus `json:"status"`
}

func (a *app) adapterList(args []string, stdout, stderr io.Writer) error {
	f, _, err := a.adapterFlags("list", "[--state-dir DIR] [--json]", args, 0, stderr, nil)
	if err != nil {
		return err
	}
	recs, err := a.env.StateDir.Adapters(f.stateDir).List()
	if err != nil {
		return fmt.Errorf("list installed adapters: %w", err)
	}
	var live gatewayext.AdaptersResult
	liveErr := f.askGateway(gatewayext.MethodAdaptersStatus, nil, &live)
	if liveErr != nil && !errors.As(liveErr, new(errUnreachable)) {
		return liveErr
	}
	entries := mergeList(recs, live.Adapters)
	if f.json {
		out, err := json.Marshal(map[string]any{"adapters": entries, "reachable": liveErr == nil})
		if err != nil {
			return err
		}
		return printJSON(stdout, out)
	}
	printList(stdout, entries, liveErr == nil)
	if liveErr != nil {
		fmt.Fprintf(stderr, "gateway: %s\n", oneLine(liveErr.Error()))
	}
	return nil
}

// mergeList joins install records and live statuses by name, sorted.
func mergeList(recs []AdapterRecord, live []gatewayext.AdapterStatus) []listEntry {
	byName := map[string]*listEntry{}
	var names []string
	entry := func(name string) *listEntry {
		e, ok := byName[name]
		if !ok {
			e = &listEntry{Name: name}
			byName[name] = e
			names = append(names, name)
		}
		return e
	}
	for i := range recs {
		entry(recs[i].Name).Installed = &recs[i]
	}
	for i := range live {
		entry(live[i].Name).Status = &live[i]
	}
	slices.Sort(names)
	out := make([]listEntry, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out
}

func printList(w io.Writer, entries []listEntry, reachable bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tKIND\tINSTALLED\tSTATE")
	for _, e := range entries {
		version, kind, installed := "-", "-", "not installed"
		if r := e.Installed; r != nil {
			version, kind, installed = r.Version, r.Kind, r.InstalledAt.Local().Format(time.DateTime)
		}
		state := "not enabled"
		switch {
		case !reachable:
			state = "?"
		case e.Status != nil:
			state = stateLine(*e.Status)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name, version, kind, installed, state)
	}
	tw.Flush()
}

func (a *app) adapterStatus(args []string, stdout, stderr io.Writer) error {
	f, pos, err := a.adapterFlags("status", "NAME [--state-dir DIR] [--json]", args, 1, stderr, nil)
	if err != nil {
		return err
	}
	name := pos[0]
	var live gatewayext.AdaptersResult
	err = f.askGateway(gatewayext.MethodAdaptersStatus, gatewayext.AdapterParams{Name: name}, &live)
	if err == nil && len(live.Adapters) == 1 {
		return printStatus(stdout, live.Adapters[0], f.json)
	}
	if err == nil {
		return fmt.Errorf("status %s: the gateway answered %d adapters", name, len(live.Adapters))
	}
	if !errors.As(err, new(errUnreachable)) && !notEnabled(err) {
		return err
	}
	// Without the live state, the install record is what is known.
	rec, lerr := a.env.StateDir.Adapters(f.stateDir).Load(name)
	switch {
	case errors.Is(lerr, fs.ErrNotExist):
		fmt.Fprintf(stdout, "%s: not installed\n", name)
	case lerr != nil:
		fmt.Fprintf(stdout, "%s: install record: %v\n", name, lerr)
	case f.json:
		out, merr := json.Marshal(map[string]any{"installed": rec})
		if merr != nil {
			return merr
		}
		printJSON(stdout, out)
	default:
		fmt.Fprintf(stdout, "%s %s (%s), installed %s\nsha256 %s\n", rec.Name, rec.Version, rec.Kind,
			rec.InstalledAt.Local().Format(time.DateTime), rec.Hash)
	}
	if notEnabled(err) {
		return fmt.Errorf("%s is not enabled in the running gateway's configuration (adapters.enabled)", name)
	}
	return err
}

// printStatus prints a live status, for people or as its JSON.
func printStatus(w io.Writer, st gatewayext.AdapterStatus, asJSON bool) error {
	if asJSON {
		out, err := json.Marshal(st)
		if err != nil {
			return err
		}
		return printJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	if st.Version != "" {
		row("name", "%s %s (%s)", st.Name, st.Version, st.Kind)
	} else {
		row("name", "%s", st.Name)
	}
	row("state", "%s", stateLine(st))
	if st.Since != nil {
		row("since", "%s (up %s)", st.Since.Local().Format(time.DateTime), (time.Duration(st.UptimeSeconds) * time.Second).String())
	}
	row("user", "%s", st.User)
	row("restarts", "%d (crashes %d, %d in a row)", st.Restarts, st.Crashes, st.ConsecutiveCrashes)
	if st.LastExit != "" {
		row("last exit", "%s", st.LastExit)
	}
	row("strikes", "%d in the window, %d in all", st.Strikes, st.StrikesTotal)
	row("events dropped", "%d", st.DroppedEvents)
	row("late replies", "%d", st.LateReplies)
	row("in flight", "%d", st.InFlight)
	for i, id := range st.Devices {
		k := ""
		if i == 0 {
			k = "devices"
		}
		if v, ok := st.Values[id]; ok {
			row(k, "%s = %s", id, formatValue(v))
		} else {
			row(k, "%s", id)
		}
	}
	row("stderr", "%d lines (%d cut, %d dropped), gateway adapter logs %s", st.Stderr.Lines, st.Stderr.Cut, st.Stderr.DroppedLines, st.Name)
	return tw.Flush()
}

func (a *app) adapterLogs(args []string, stdout, stderr io.Writer) error {
	var n int
	f, pos, err := a.adapterFlags("logs", "NAME [-n N] [--state-dir DIR]", args, 1, stderr, func(fs *flag.FlagSet) {
		n = 50
		fs.Func("n", "how many of the last `lines` to print (default 50)", func(s string) error {
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 {
				return errors.New("want 0 or more lines")
			}
			n = v
			return nil
		})
	})
	if err != nil {
		return err
	}
	installed := a.env.StateDir.Adapters(f.stateDir)
	lines, err := installed.Logs(pos[0], n)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no log of adapter %s in %s (it has not run yet)", pos[0], installed.LogDir())
	}
	if err != nil {
		return err
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(stdout, l); err != nil {
			return err
		}
	}
	return nil
}

func (a *app) adapterReset(args []string, stdout, stderr io.Writer) error {
	f, pos, err := a.adapterFlags("reset", "NAME [--json]", args, 1, stderr, nil)
	if err != nil {
		return err
	}
	var ans gatewayext.AdapterResult
	if err := f.askGateway(gatewayext.MethodAdaptersReset, gatewayext.AdapterParams{Name: pos[0]}, &ans); err != nil {
		return err
	}
	if f.json {
		return printStatus(stdout, ans.Adapter, true)
	}
	fmt.Fprintf(stdout, "reset %s: %s\n", pos[0], stateLine(ans.Adapter))
	return nil
}

func (a *app) adapterRemove(args []string, stdout, stderr io.Writer) error {
	f, pos, err := a.adapterFlags("remove", "NAME [--state-dir DIR]", args, 1, stderr, nil)
	if err != nil {
		return err
	}
	name := pos[0]
	if err := a.env.StateDir.Adapters(f.stateDir).Remove(name); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("adapter %s is not installed in %s", name, f.stateDir)
	} else if err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	fmt.Fprintf(stdout, "removed %s\n", name)
	return reloadAfter(f, name, "remove", stdout)
}
