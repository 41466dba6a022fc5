package discovery

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/brutella/dnssd"
)

// docs/discovery.md says how long the built-in responder's records
// outlive a crash: the TTLs it sends, which are the mDNS library's. A
// library that changed them fails here until the page says so.
func TestDocSaysBuiltinTTLs(t *testing.T) {
	b, err := os.ReadFile("../../docs/discovery.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		fmt.Sprintf("the SRV and address records after %d s", dnssd.TTLHostname),
		fmt.Sprintf("the PTR and TXT records after %d s", dnssd.TTLDefault),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/discovery.md does not say %q", want)
		}
	}
	srv, ptr := dnssd.SRV(dnssd.Service{Name: "bench", Type: "_openhal._tcp", Domain: "local", Host: "bench", Port: 7751}), dnssd.PTR(dnssd.Service{Name: "bench", Type: "_openhal._tcp", Domain: "local"})
	if srv.Hdr.Ttl != dnssd.TTLHostname || ptr.Hdr.Ttl != dnssd.TTLDefault {
		t.Errorf("the records sent carry TTLs SRV %d, PTR %d; the page's figures are %d and %d", srv.Hdr.Ttl, ptr.Hdr.Ttl, dnssd.TTLHostname, dnssd.TTLDefault)
	}
}
