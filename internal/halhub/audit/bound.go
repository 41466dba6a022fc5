package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"unicode/utf8"

	"github.com/openhal/gateway/openhal"
)

// Bounds of one entry (spec §10: "an entry is bounded in size"), so that no
// request, however large its value or reason, can make its entry large:
// a flood of refused writes with 255 KiB reasons must not rotate the
// history away. Sizes are of a field's JSON encoding, without its quotes,
// so that escaping (a control character takes 6 bytes) cannot stretch
// them.
const (
	// CutText is the most kept of a text a client chose: a reason, a
	// value, an error message (which may quote either).
	CutText = 1024
	// CutName is the most kept of a name: a device id, a confirmation
	// id, a principal's kind, name and scope, an action, an outcome, a
	// rule, an error's reason. Well-formed names are far shorter; a
	// refused request may carry anything.
	CutName = 128
	// MaxTallies is the most items in a count entry's By; counts of
	// further kinds are added to the last item, whose action becomes
	// "other".
	MaxTallies = 16
	// EntryLimit is the longest line Append writes, without its newline:
	// an entry with every field at its bound encodes to less (see
	// TestEntryLimit). Lines written before the bound (an upgraded log)
	// may be longer; List cuts those it returns (see ListOptions).
	EntryLimit = 16 << 10
)

// Cut records a field that was cut to its bound: its full length and
// hash, so that the whole text, kept elsewhere, can be matched to the
// entry. For a string (a reason, a string value, a message, a name) Bytes
// and SHA256 are of its UTF-8 bytes; for another value they are of its
// JSON encoding, and the value is left out.
type Cut struct {
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"` // lowercase hex
}

// Cut fields, the keys of Entry.Cut.
const (
	CutReason        = "reason"
	CutValue         = "value"
	CutDevice        = "device"
	CutConfirmation  = "confirmation"
	CutErrorMessage  = "error.message"
	CutErrorReason   = "error.reason"
	CutPrincipalKind = "principal.kind"
	CutPrincipalName = "principal.name"
	CutScope         = "principal.scope"
	CutAction        = "action"
	CutOutcome       = "outcome"
	CutRule          = "rule"
)

// bound cuts every field of e to its bound, noting each cut in e.Cut. It
// returns an error only for a value that cannot be encoded at all.
func (e *Entry) bound() error {
	c := cutter{e: e}
	c.text(&e.Reason, CutReason, CutText)
	c.text(&e.Device, CutDevice, CutName)
	c.text(&e.Confirmation, CutConfirmation, CutName)
	c.text(&e.Principal.Kind, CutPrincipalKind, CutName)
	c.text(&e.Principal.Name, CutPrincipalName, CutName)
	scope := string(e.Principal.Scope)
	c.text(&scope, CutScope, CutName)
	e.Principal.Scope = openhal.Scope(scope)
	c.text(&e.Action, CutAction, CutName)
	c.text(&e.Outcome, CutOutcome, CutName)
	c.text(&e.Rule, CutRule, CutName)
	if e.Error != nil {
		er := *e.Error
		c.text(&er.Message, CutErrorMessage, CutText)
		c.text(&er.Reason, CutErrorReason, CutName)
		e.Error = &er
	}
	e.By = boundTallies(e.By)
	return c.value()
}

// cutter cuts the fields of one entry.
type cutter struct{ e *Entry }

// text cuts *s to max encoded bytes and notes the cut under key.
func (c cutter) text(s *string, key string, max int) {
	kept, cut := cutString(*s, max)
	if !cut {
		return
	}
	c.note(key, []byte(*s))
	*s = kept
}

func (c cutter) note(key string, full []byte) {
	if c.e.Cut == nil {
		c.e.Cut = map[string]Cut{}
	}
	sum := sha256.Sum256(full)
	c.e.Cut[key] = Cut{Bytes: len(full), SHA256: hex.EncodeToString(sum[:])}
}

// value cuts a string value as a text; another value whose encoding
// passes CutText is left out, its length and hash kept.
func (c cutter) value() error {
	switch v := c.e.Value.(type) {
	case nil, bool, float64, int, int64, uint64:
		return nil // short by nature
	case string:
		c.text(&v, CutValue, CutText)
		c.e.Value = v
		return nil
	}
	b, err := json.Marshal(c.e.Value)
	if err != nil {
		return err
	}
	if len(b) > CutText {
		c.note(CutValue, b)
		c.e.Value = nil
	}
	return nil
}

// cutString returns the longest prefix of s, ended at a character
// boundary, whose JSON encoding (as encoding/json writes it, without the
// quotes) takes at most max bytes, and whether that is shorter than s.
func cutString(s string, max int) (string, bool) {
	if len(s) <= max/6 {
		return s, false // no character encodes to more than 6 bytes
	}
	n := 0
	for i, r := range s {
		_, size := utf8.DecodeRuneInString(s[i:])
		n += encodedLen(r, size)
		if n > max {
			return s[:i], true
		}
	}
	return s, false
}

// encodedLen is how many bytes encoding/json writes for the character r,
// which takes size bytes in the string.
func encodedLen(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size == 1:
		return 6 // written as \ufffd
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20, r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029':
		return 6 // \u00XX
	}
	return size
}

// boundTallies cuts the words of each item and folds the items past
// MaxTallies into the last one.
func boundTallies(by []Tally) []Tally {
	if len(by) == 0 {
		return by
	}
	out := make([]Tally, 0, min(len(by), MaxTallies))
	for i, t := range by {
		if i >= MaxTallies {
			out[MaxTallies-1].Count += t.Count
			continue
		}
		for _, s := range []*string{&t.Action, &t.Outcome, &t.Rule, &t.Reason} {
			*s, _ = cutString(*s, CutName)
		}
		out = append(out, t)
	}
	if len(by) > MaxTallies {
		last := &out[MaxTallies-1]
		last.Action, last.Outcome, last.Rule, last.Reason = "other", "other", "", ""
	}
	return out
}
