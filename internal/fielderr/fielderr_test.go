package fielderr

import "testing"

func TestErrorsOneFaultALine(t *testing.T) {
	var es Errors
	es.Add("", "line 3: bad syntax")
	es.Add("hub.conformance", "unknown level %q", "fuul")
	if got := es.Error(); got != "line 3: bad syntax\nhub.conformance: unknown level \"fuul\"" {
		t.Errorf("%q", got)
	}
}
