package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func quote(s string) string { return string(appendString(nil, s)) }

// show prints a Message for a test failure.
func show(m Message) string {
	s := fmt.Sprintf("{id:%s method:%q params:%s result:%s", m.ID, m.Method, m.Params, m.Result)
	if m.Error != nil {
		s += fmt.Sprintf(" error:{%d %q %v}", m.Error.Code, m.Error.Message, m.Error.Data)
	}
	return s + "}"
}

// sameMessage compares two Messages field by field, raw bytes exactly;
// nil and absent are different from empty.
func sameMessage(a, b Message) bool {
	return sameRaw(a.ID, b.ID) && a.Method == b.Method && sameRaw(a.Params, b.Params) &&
		sameRaw(a.Result, b.Result) && sameError(a.Error, b.Error)
}

func sameRaw(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func sameError(a, b *Error) bool {
	if a == nil || b == nil {
		return a == b
	}
	ad, _ := a.Data.(json.RawMessage)
	bd, _ := b.Data.(json.RawMessage)
	return a.Code == b.Code && a.Message == b.Message && sameRaw(ad, bd)
}

// appendMessage writes every field a Message has, in the protocols' key
// order, so that the fuzz tests can re-encode any decoded message.
func appendMessage(dst []byte, m Message) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if m.ID != nil {
		dst = append(append(dst, `,"id":`...), m.ID...)
	}
	if m.Method != "" {
		dst = appendString(append(dst, `,"method":`...), m.Method)
	}
	var err error
	for _, f := range []struct {
		key string
		v   json.RawMessage
	}{{`,"params":`, m.Params}, {`,"result":`, m.Result}} {
		if f.v != nil {
			if dst, err = appendValue(append(dst, f.key...), f.v); err != nil {
				return nil, err
			}
		}
	}
	if m.Error != nil {
		dst = appendErrorObject(dst, `,"error":`, m.Error)
	}
	return append(dst, '}'), nil
}
