package jsonrpc

import "encoding/json"

// members walks the members of an object that scan has already validated,
// without recursion and without allocating (except to decode a key that
// has escapes, which no real peer sends).
type members struct {
	b []byte
	i int
}

// newMembers starts a walk over obj, which must begin with '{' after any
// leading whitespace.
func newMembers(obj []byte) members {
	m := members{b: obj}
	m.ws()
	m.i++ // '{'
	return m
}

// next returns the next member's decoded key and raw value.
func (m *members) next() (key, val []byte, ok bool) {
	m.ws()
	if m.i < len(m.b) && m.b[m.i] == ',' {
		m.i++
		m.ws()
	}
	if m.i >= len(m.b) || m.b[m.i] != '"' {
		return nil, nil, false // '}'
	}
	end, esc, _ := skipString(m.b, m.i)
	key = m.b[m.i+1 : end-1]
	if esc {
		key = unquote(m.b[m.i:end])
	}
	m.i = end
	m.ws()
	m.i++ // ':'
	m.ws()
	start := m.i
	m.i = skipValue(m.b, m.i)
	return key, m.b[start:m.i], true
}

func (m *members) ws() {
	for m.i < len(m.b) {
		switch m.b[m.i] {
		case ' ', '\t', '\n', '\r':
			m.i++
		default:
			return
		}
	}
}

// skipValue returns the index after the validated value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _, _ := skipString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i, _, _ = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// unquote decodes a validated JSON string with escapes. Lone surrogates
// become U+FFFD, as encoding/json does.
func unquote(quoted []byte) []byte {
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return nil
	}
	return []byte(s)
}

// EachMember calls fn with the decoded key and raw value of each member of
// obj, in order, until fn returns false. obj must be an object taken from
// a decoded Message (Params or Result), which the decoder has validated;
// the walk then allocates nothing.
func EachMember(obj []byte, fn func(key, val []byte) bool) {
	m := newMembers(obj)
	for {
		k, v, ok := m.next()
		if !ok || !fn(k, v) {
			return
		}
	}
}
