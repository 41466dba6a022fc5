package discovery

import (
	"net/netip"
	"reflect"
	"testing"
)

func TestServices(t *testing.T) {
	info := Info{Name: "bench", ID: "0123", Protocol: "openhal/0.1", Level: "full", Fingerprint: "ab12", Console: true}
	l := func(kind, addr string) Listener { return Listener{Kind: kind, Addr: netip.MustParseAddrPort(addr)} }
	tcpText := map[string]string{KeyProtocol: "openhal/0.1", KeyLevel: "full", KeyID: "0123", KeyTLS: "0"}
	wsText := map[string]string{KeyProtocol: "openhal/0.1", KeyLevel: "full", KeyID: "0123", KeyTLS: "0", KeyPath: "/hal", KeyConsole: "1", KeyMCP: "0"}
	wssText := map[string]string{KeyProtocol: "openhal/0.1", KeyLevel: "full", KeyID: "0123", KeyTLS: "1", KeyFingerprint: "ab12", KeyPath: "/hal", KeyConsole: "1", KeyMCP: "0"}
	tests := []struct {
		name string
		ls   []Listener
		want []Service
	}{
		{"every listener on loopback: nothing", []Listener{l("http", "127.0.0.1:7750"), l("tcp", "[::1]:7751"), l("wss", "127.0.0.1:7752")}, nil},
		{"none", nil, nil},
		{"tcp on every address", []Listener{l("tcp", "0.0.0.0:7751"), l("http", "127.0.0.1:7750")},
			[]Service{{Name: "bench", Type: TypeTCP, Port: 7751, Addr: netip.MustParseAddr("0.0.0.0"), Text: tcpText}}},
		{"both types", []Listener{l("http", "[::]:7750"), l("tcp", "192.0.2.7:7751")}, []Service{
			{Name: "bench", Type: TypeTCP, Port: 7751, Addr: netip.MustParseAddr("192.0.2.7"), Text: tcpText},
			{Name: "bench", Type: TypeWS, Port: 7750, Addr: netip.MustParseAddr("::"), Text: wsText},
		}},
		{"TLS wins over plain", []Listener{l("http", "0.0.0.0:7750"), l("wss", "0.0.0.0:7752")},
			[]Service{{Name: "bench", Type: TypeWS, Port: 7752, Addr: netip.MustParseAddr("0.0.0.0"), Text: wssText}}},
		{"v4-mapped loopback is loopback", []Listener{l("tcp", "[::ffff:127.0.0.1]:7751")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Services(info, tt.ls); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Services() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestTXTRecordSorted(t *testing.T) {
	got := txtRecord(map[string]string{"tls": "0", "id": "x", "proto": "openhal/0.1"})
	want := [][]byte{[]byte("id=x"), []byte("proto=openhal/0.1"), []byte("tls=0")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("txtRecord = %q, want %q", got, want)
	}
}
