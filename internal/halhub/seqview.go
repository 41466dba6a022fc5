package halhub

import (
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// What a token limited to some devices is told of value numbers (spec §8,
// docs/protocol.md "Telling missed values"). The Hub-wide seq grows with
// every device's values, so a limited token that saw it would count the
// values of devices it cannot see, and take their changes for its own
// losses. Such a token is sent every value, read and write answer
// without seq (0, left out of the JSON); devSeq, the device's own count,
// is sent to every token and is what tells a missed value. A token that
// sees every device keeps seq as it always was.

// limitedView reports whether entry sees only some devices. A pattern that
// happens to match every device today still counts as limited: a device
// added later may be hidden from it.
func limitedView(e token.Entry) bool { return len(e.Devices) > 0 }

// valueFor is v as a token with entry is told it.
func valueFor(e token.Entry, v openhal.ValueResult) openhal.ValueResult {
	if limitedView(e) {
		v.Seq = 0
	}
	return v
}

// writeFor is an applied write's answer as a token with entry is told it.
func writeFor(e token.Entry, w openhal.WriteResult) openhal.WriteResult {
	if limitedView(e) {
		w.Seq = 0
	}
	return w
}

// confirmationFor is c as a token with entry is told it: without seq for
// a limited token (of the applied write of an approved request, of the
// write that superseded it, of the device's current value).
func confirmationFor(e token.Entry, c openhal.Confirmation) openhal.Confirmation {
	if !limitedView(e) {
		return c
	}
	if c.Result != nil {
		r := writeFor(e, *c.Result)
		c.Result = &r
	}
	if c.SupersededBy != nil {
		by := *c.SupersededBy
		by.Seq = 0
		c.SupersededBy = &by
	}
	if c.Current != nil {
		cur := *c.Current
		cur.Seq = 0
		c.Current = &cur
	}
	return c
}

// viewMessages is one notification encoded for each of the two views —
// every device, or some — each only when an audience needs it, so that
// the tokens that see every device still share one encoding.
type viewMessages struct {
	method string
	view   func(token.Entry) any
	msgs   [2][]byte // [0]: every device, [1]: limited
}

// encoded returns the message for a connection with entry.
func (v *viewMessages) encoded(e token.Entry) ([]byte, error) {
	i := 0
	if limitedView(e) {
		i = 1
	}
	if v.msgs[i] == nil {
		msg, err := jsonrpc.AppendNotification(nil, v.method, v.view(e))
		if err != nil {
			return nil, err
		}
		v.msgs[i] = msg
	}
	return v.msgs[i], nil
}
