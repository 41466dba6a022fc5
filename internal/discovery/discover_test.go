package discovery

import (
	"context"
	"errors"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/brutella/dnssd"
)

// fakeBrowser hears the entries given for each type, then waits for the
// end of the browse, and withdraws those named in gone first.
func fakeBrowser(entries []dnssd.BrowseEntry, gone ...string) Browser {
	return func(ctx context.Context, service string, add, rmv func(dnssd.BrowseEntry)) error {
		for _, e := range entries {
			if e.Type+".local." == service {
				add(e)
			}
		}
		for _, e := range entries {
			if e.Type+".local." == service && contains(gone, e.Name) {
				rmv(e)
			}
		}
		<-ctx.Done()
		return ctx.Err()
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var benchEntries = []dnssd.BrowseEntry{
	{Name: "bench", Type: TypeWS, Host: "pi", Port: 7752, IfaceName: "eth0",
		IPs:  []net.IP{net.ParseIP("fe80::1"), net.ParseIP("192.0.2.7")},
		Text: map[string]string{"id": "abc", "level": "full", "proto": "openhal/0.1", "tls": "1", "fp": "ff00", "path": "/hal", "console": "1", "mcp": "0"}},
	{Name: "bench", Type: TypeTCP, Host: "pi", Port: 7751, IfaceName: "eth0",
		IPs:  []net.IP{net.ParseIP("192.0.2.7")},
		Text: map[string]string{"id": "abc", "level": "full", "proto": "openhal/0.1", "tls": "0"}},
	{Name: "lab", Type: TypeTCP, Host: "lab", Port: 7751, IPs: []net.IP{net.ParseIP("192.0.2.9")},
		Text: map[string]string{"id": "def", "level": "read", "proto": "openhal/0.1", "tls": "1", "fp": "aa11"}},
}

func TestList(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got, err := List(ctx, fakeBrowser(benchEntries))
	if err != nil {
		t.Fatal(err)
	}
	want := []Gateway{
		{Name: "bench", ID: "abc", Host: "pi", Addresses: []string{"192.0.2.7", "fe80::1%eth0"},
			URLs:        []string{"wss://192.0.2.7:7752/hal", "tcp://192.0.2.7:7751"},
			Fingerprint: "ff00", Level: "full", Protocol: "openhal/0.1", Console: true, ConsoleURL: "https://192.0.2.7:7752/"},
		{Name: "lab", ID: "def", Host: "lab", Addresses: []string{"192.0.2.9"}, URLs: []string{"tls://192.0.2.9:7751"},
			Fingerprint: "aa11", Level: "read", Protocol: "openhal/0.1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("List =\n%+v\nwant\n%+v", got, want)
	}
}

func TestListLeavesOutWithdrawn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got, err := List(ctx, fakeBrowser(benchEntries, "bench"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "lab" {
		t.Errorf("List = %+v, want lab only", got)
	}
}

func TestFind(t *testing.T) {
	tests := []struct{ name, ask, want string }{
		{"by name", "bench", "bench"},
		{"case aside", "BENCH", "bench"},
		{"by id", "def", "lab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No deadline: Find ends when it hears the gateway.
			g, err := Find(context.Background(), fakeBrowser(benchEntries), tt.ask)
			if err != nil || g.Name != tt.want {
				t.Errorf("Find(%q) = %q, %v; want %q", tt.ask, g.Name, err, tt.want)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Find(ctx, fakeBrowser(benchEntries), "garage"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find(garage) err = %v, want ErrNotFound", err)
	}
}

func TestBrowseFailure(t *testing.T) {
	failing := func(context.Context, string, func(dnssd.BrowseEntry), func(dnssd.BrowseEntry)) error {
		return errors.New("no multicast interface")
	}
	_, err := List(context.Background(), failing)
	if err == nil || err.Error() != "browse mDNS: no multicast interface" {
		t.Errorf("err = %v", err)
	}
}

func TestWatchTellsOnce(t *testing.T) {
	// Two browses hear the same service, as LookupType's repeated
	// questions do, and both hear its goodbye.
	twice := func(ctx context.Context, service string, add, rmv func(dnssd.BrowseEntry)) error {
		for _, e := range benchEntries[:1] {
			if e.Type+".local." == service {
				add(e)
				add(e)
				rmv(e)
				rmv(e)
			}
		}
		<-ctx.Done()
		return ctx.Err()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var got []string
	err := Watch(ctx, twice, func(e Event) { got = append(got, map[bool]string{false: "+", true: "-"}[e.Gone]+e.Gateway.Name) })
	if err != nil || !reflect.DeepEqual(got, []string{"+bench", "-bench"}) {
		t.Errorf("events %q, %v; want +bench, -bench", got, err)
	}
}

func TestWatchWaitsForTheTXTRecord(t *testing.T) {
	bare := benchEntries[1]
	bare.Text = map[string]string{}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var got []Gateway
	err := Watch(ctx, fakeBrowser([]dnssd.BrowseEntry{bare, benchEntries[1]}), func(e Event) { got = append(got, e.Gateway) })
	if err != nil || len(got) != 1 || got[0].ID != "abc" {
		t.Errorf("events %+v, %v; want bench once, with its id", got, err)
	}
}
