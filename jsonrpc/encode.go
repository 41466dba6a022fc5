package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The Append functions each append one complete message without a trailing
// newline, with the keys in the order jsonrpc, id, method, params (a
// request), jsonrpc, id, result or jsonrpc, id, error (a response), so that
// the frames match the protocols' reference frames byte for byte.
//
// A value given as any is encoded with encoding/json (struct field order
// kept) with HTML escaping off. A json.RawMessage is copied as is, except
// that one holding a line break is compacted first: a frame of the line
// transports must never contain a raw newline.

// AppendRequest appends a request. Params nil (or an empty RawMessage) is
// left out, which the protocols read as {}. On error dst is returned
// unchanged.
func AppendRequest(dst []byte, id json.RawMessage, method string, params any) ([]byte, error) {
	if len(id) == 0 {
		return dst, errors.New("jsonrpc: a request needs an id")
	}
	n := len(dst)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"method":`...)
	dst = appendString(dst, method)
	dst, err := appendMember(dst, `,"params":`, params, false)
	if err != nil {
		return dst[:n], fmt.Errorf("jsonrpc: encode params of %s: %w", method, err)
	}
	return append(dst, '}'), nil
}

// AppendNotification appends a notification. Params nil (or an empty
// RawMessage) is left out. On error dst is returned unchanged.
func AppendNotification(dst []byte, method string, params any) ([]byte, error) {
	n := len(dst)
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = appendString(dst, method)
	dst, err := appendMember(dst, `,"params":`, params, false)
	if err != nil {
		return dst[:n], fmt.Errorf("jsonrpc: encode params of %s: %w", method, err)
	}
	return append(dst, '}'), nil
}

// AppendResult appends a successful response. Result nil (or an empty
// RawMessage) is written as {}: both protocols want an object. An id nil
// is written as null. On error dst is returned unchanged.
func AppendResult(dst []byte, id json.RawMessage, result any) ([]byte, error) {
	n := len(dst)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst, err := appendMember(dst, `,"result":`, result, true)
	if err != nil {
		return dst[:n], fmt.Errorf("jsonrpc: encode result: %w", err)
	}
	return append(dst, '}'), nil
}

// AppendError appends an error response; an id nil is written as null. A
// nil e is written as an internal error. Data that encoding/json cannot
// encode (a programming error: a channel, a func) is left out rather than
// making a reply impossible.
func AppendError(dst []byte, id json.RawMessage, e *Error) []byte {
	if e == nil {
		e = &Error{Code: CodeInternalError, Message: "internal error"}
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = appendErrorObject(dst, `,"error":`, e)
	return append(dst, '}')
}

func appendErrorObject(dst []byte, key string, e *Error) []byte {
	dst = append(dst, key...)
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, e.Code, 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.Message)
	if d, err := appendMember(dst, `,"data":`, e.Data, false); err == nil {
		dst = d
	}
	return append(dst, '}')
}

func appendID(dst []byte, id json.RawMessage) []byte {
	if len(id) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// appendMember appends key and v. A nil v (or empty RawMessage) is left
// out, or written as {} when emptyObject is set. On error the returned
// slice is dst as it was.
func appendMember(dst []byte, key string, v any, emptyObject bool) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok && len(raw) == 0 {
		v = nil
	}
	if v == nil {
		if !emptyObject {
			return dst, nil
		}
		return append(append(dst, key...), "{}"...), nil
	}
	n := len(dst)
	dst, err := appendValue(append(dst, key...), v)
	if err != nil {
		return dst[:n], err
	}
	return dst, nil
}

// appendValue appends v encoded as JSON.
func appendValue(dst []byte, v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
			return append(dst, raw...), nil
		}
		buf := bytes.NewBuffer(dst)
		if err := json.Compact(buf, raw); err != nil {
			return dst, err
		}
		return buf.Bytes(), nil
	}
	if a, ok := v.(Appender); ok {
		out, err := a.AppendJSON(dst)
		if err != nil {
			return dst, err
		}
		return out, nil
	}
	return encodeJSON(dst, v)
}

// encodeJSON appends v as encoding/json encodes it with HTML escaping off.
func encodeJSON(dst []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	out := buf.Bytes()
	return out[:len(out)-1], nil // Encode's '\n'
}

// appendString appends s as a JSON string, escaped as encoding/json does
// with HTML escaping off: '"', '\\', control characters, U+2028 and U+2029
// are escaped, invalid UTF-8 becomes U+FFFD.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
