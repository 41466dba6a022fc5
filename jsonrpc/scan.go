package jsonrpc

import (
	"bytes"
	"math"
)

// scanResult is what the validating pass found.
type scanResult uint8

const (
	scanOK scanResult = iota
	scanSyntax
	scanTooDeep
	scanDuplicate
)

// smallObject is how many keys an object may have before its duplicate
// check moves from a linear search to a map, and maxKeys how many keys of
// the open objects the scanner holds in all: small messages cost no
// allocation, large objects no quadratic time.
const (
	smallObject = 16
	maxKeys     = 64
)

// keyRef locates one decoded key: in the message itself, or in the
// scanner's scratch buffer when the key had escapes.
type keyRef struct {
	start, end int32
	scratch    bool
}

// level is one open object or array.
type level struct {
	obj  bool
	keys int32               // index in scanner.keys of this object's first key
	set  map[string]struct{} // this object's keys once it has many
}

// scanner checks a whole message in one pass with an explicit stack, so
// that 10,000 nested brackets cost a loop, not a deep recursion. It checks
// JSON syntax (RFC 8259), the nesting depth and repeated keys in every
// object; UTF-8 is checked before it runs. Its stacks are arrays, not
// slices of itself, so that it stays on its caller's stack.
type scanner struct {
	b       []byte
	i       int
	depth   int
	levels  [MaxDepth]level
	keys    [maxKeys]keyRef
	nkeys   int32
	scratch []byte
	dup     bool

	top      fields // the message's members, when it is an object
	field    int    // the top-level member being read: 0 or a field* constant
	valStart int
}

// scan validates b. A syntax error wins over a duplicate key found
// earlier; too deep stops the scan where it is seen.
// It also picks out the top-level members that the protocols know.
func scan(b []byte) (scanResult, fields) {
	if len(b) > math.MaxInt32 {
		return scanSyntax, fields{} // no message of ours comes near
	}
	var s scanner
	s.b = b
	r := s.run()
	if r == scanOK && s.dup {
		return scanDuplicate, s.top
	}
	return r, s.top
}

func (s *scanner) run() scanResult {
	for {
		// A value is expected.
		s.ws()
		if s.i >= len(s.b) {
			return scanSyntax
		}
		if s.depth == 1 {
			s.valStart = s.i
		}
		switch c := s.b[s.i]; {
		case c == '{' || c == '[':
			if s.depth == MaxDepth {
				return scanTooDeep
			}
			s.levels[s.depth] = level{obj: c == '{', keys: s.nkeys}
			s.depth++
			s.i++
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == c+2 { // '}' or ']'
				s.i++
				s.pop()
				break
			}
			if c == '{' && !s.key() {
				return scanSyntax
			}
			continue
		case c == '"':
			if _, _, ok := s.str(); !ok {
				return scanSyntax
			}
		case c == 't':
			if !s.lit("true") {
				return scanSyntax
			}
		case c == 'f':
			if !s.lit("false") {
				return scanSyntax
			}
		case c == 'n':
			if !s.lit("null") {
				return scanSyntax
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if !s.num() {
				return scanSyntax
			}
		default:
			return scanSyntax
		}
		// A value ended: close containers until one goes on.
		more, r := s.after()
		if !more {
			return r
		}
	}
}

// after consumes what follows a value: a ',' (and the next key), closing
// brackets, or the end of the message.
func (s *scanner) after() (more bool, r scanResult) {
	for {
		if s.depth == 1 && s.field != 0 {
			s.top.set(s.field, s.b[s.valStart:s.i])
			s.field = 0
		}
		s.ws()
		if s.depth == 0 {
			if s.i != len(s.b) {
				return false, scanSyntax
			}
			return false, scanOK
		}
		if s.i >= len(s.b) {
			return false, scanSyntax
		}
		c := s.b[s.i]
		s.i++
		obj := s.levels[s.depth-1].obj
		switch {
		case c == ',' && obj:
			if !s.key() {
				return false, scanSyntax
			}
			return true, scanOK
		case c == ',':
			return true, scanOK
		case (c == '}' && obj) || (c == ']' && !obj):
			s.pop()
		default:
			return false, scanSyntax
		}
	}
}

func (s *scanner) pop() {
	s.depth--
	lv := &s.levels[s.depth]
	if lv.obj {
		s.nkeys = lv.keys
		lv.set = nil
	}
}

// key reads `"name" :` and records the name in the innermost object.
func (s *scanner) key() bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	start, esc, ok := s.str()
	if !ok {
		return false
	}
	if !s.dup || s.depth == 1 {
		ref := keyRef{start: int32(start + 1), end: int32(s.i - 1)}
		if esc {
			ref = s.unescapeKey(start+1, s.i-1)
		}
		if s.depth == 1 {
			s.field = member(s.keyBytes(ref))
		}
		if !s.dup {
			s.addKey(ref)
		}
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return false
	}
	s.i++
	return true
}

// addKey checks a key against the innermost object's keys.
// Keys are compared decoded, so "a" and "\u0061" are the same key.
func (s *scanner) addKey(ref keyRef) {
	k := s.keyBytes(ref)
	lv := &s.levels[s.depth-1]
	if lv.set == nil {
		for _, r := range s.keys[lv.keys:s.nkeys] {
			if bytes.Equal(s.keyBytes(r), k) {
				s.dup = true
				return
			}
		}
		if s.nkeys-lv.keys < smallObject && s.nkeys < maxKeys {
			s.keys[s.nkeys] = ref
			s.nkeys++
			return
		}
		s.spill(lv)
	}
	if _, ok := lv.set[string(k)]; ok {
		s.dup = true
	}
	lv.set[string(k)] = struct{}{}
}

// spill moves the keys of a large object into a map of its own.
func (s *scanner) spill(lv *level) {
	lv.set = make(map[string]struct{}, 2*smallObject)
	for _, r := range s.keys[lv.keys:s.nkeys] {
		lv.set[string(s.keyBytes(r))] = struct{}{}
	}
	s.nkeys = lv.keys
}

// unescapeKey decodes a key with escapes into the scratch buffer.
func (s *scanner) unescapeKey(start, end int) keyRef {
	k := unquote(s.b[start-1 : end+1])
	ref := keyRef{start: int32(len(s.scratch)), end: int32(len(s.scratch) + len(k)), scratch: true}
	s.scratch = append(s.scratch, k...)
	return ref
}

func (s *scanner) keyBytes(r keyRef) []byte {
	if r.scratch {
		return s.scratch[r.start:r.end]
	}
	return s.b[r.start:r.end]
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// Top-level members that the protocols know.
const (
	fieldNone = iota
	fieldJSONRPC
	fieldID
	fieldMethod
	fieldParams
	fieldResult
	fieldError
)

// member returns which known member key names, or fieldNone. (An index,
// not a pointer into the scanner, keeps the scanner off the heap.)
func member(key []byte) int {
	switch string(key) {
	case "jsonrpc":
		return fieldJSONRPC
	case "id":
		return fieldID
	case "method":
		return fieldMethod
	case "params":
		return fieldParams
	case "result":
		return fieldResult
	case "error":
		return fieldError
	}
	return fieldNone
}

func (f *fields) set(field int, v []byte) {
	switch field {
	case fieldJSONRPC:
		f.jsonrpc = v
	case fieldID:
		f.id = v
	case fieldMethod:
		f.method = v
	case fieldParams:
		f.params = v
	case fieldResult:
		f.result = v
	case fieldError:
		f.err = v
	}
}

// str reads a string starting at its '"' and reports where it started and
// whether it has escapes.
func (s *scanner) str() (start int, esc, ok bool) {
	start = s.i
	end, esc, ok := skipString(s.b, s.i)
	s.i = end
	return start, esc, ok
}

// skipString returns the index just after the string starting at b[i]
// (a '"'), checking escapes and control characters.
func skipString(b []byte, i int) (end int, esc, ok bool) {
	for i++; i < len(b); {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, esc, true
		case c < 0x20:
			return i, esc, false
		case c != '\\':
			i++
			continue
		}
		esc = true
		if i+1 >= len(b) {
			return i, esc, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return i, esc, false
			}
			i += 6
		default:
			return i, esc, false
		}
	}
	return i, esc, false
}

// plain marks the bytes that a string may hold as they are.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// num reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) num() bool {
	b, i := s.b, s.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
