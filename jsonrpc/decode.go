package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// Reasons: the data.reason of DecodeHAL's errors and the Reason of
// DecodeAdapter's violations. ReasonTooLong is for the caller, who sees a
// line too long from LineReader before any decoder does.
const (
	ReasonParseError            = "parse_error" // HAL: not JSON
	ReasonBatch                 = "batch"       // HAL: an array
	ReasonNotJSON               = "not_json"    // adapter: not JSON
	ReasonArray                 = "array"       // adapter: an array
	ReasonNUL                   = "nul"
	ReasonInvalidUTF8           = "invalid_utf8"
	ReasonTooDeep               = "too_deep"
	ReasonDuplicateKey          = "duplicate_key"
	ReasonNotObject             = "not_object"
	ReasonBadJSONRPC            = "bad_jsonrpc"
	ReasonBadID                 = "bad_id"
	ReasonBadMethod             = "bad_method"
	ReasonParamsNotObject       = "params_not_object"
	ReasonResultNotObject       = "result_not_object"
	ReasonBadError              = "bad_error"
	ReasonBothResultAndError    = "both_result_and_error"
	ReasonNeitherResultNorError = "neither_result_nor_error"
	ReasonMethodWithResult      = "method_with_result"
	ReasonTooLong               = "too_long"
)

// ErrEmptyLine is DecodeAdapter's answer to an empty line: not a frame,
// but harmless (seed 001), so not a violation.
var ErrEmptyLine = errors.New("jsonrpc: empty line")

// Violation is a broken rule of the adapter protocol. Reason is one of the
// Reason constants; Detail says more for a person reading a log.
type Violation struct{ Reason, Detail string }

func (v *Violation) Error() string {
	if v.Detail == "" {
		return "adapter protocol violation: " + v.Reason
	}
	return "adapter protocol violation: " + v.Reason + ": " + v.Detail
}

// fields are the raw top-level members of a message; nil when absent.
type fields struct {
	jsonrpc, id, method, params, result, err []byte
}

// validate checks what both protocols share: UTF-8, JSON, depth, repeated
// keys, and that the message is an object. It returns a reason or "", and
// the top-level members. Syntax errors are reported as ReasonNotJSON,
// arrays as ReasonArray.
func validate(b []byte) (string, fields) {
	if !utf8.Valid(b) {
		return ReasonInvalidUTF8, fields{}
	}
	r, f := scan(b)
	switch r {
	case scanSyntax:
		return ReasonNotJSON, f
	case scanTooDeep:
		return ReasonTooDeep, f
	case scanDuplicate:
		return ReasonDuplicateKey, f
	}
	switch first(b) {
	case '{':
		return "", f
	case '[':
		return ReasonArray, f
	}
	return ReasonNotObject, f
}

func first(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// DecodeHAL parses one OpenHAL message (openhal-0.1.md §1). On failure it
// returns an *Error ready to send back with "id": null, with data.reason
// one of: parse_error, invalid_utf8 (-32700); batch, bad_jsonrpc, bad_id,
// bad_method, params_not_object, duplicate_key, too_deep, not_object,
// bad_error (-32600). A response needs an id (else bad_id); its result
// must be an object (params_not_object) and its error a well-formed error
// object (bad_error), although the Hub ignores responses. Unknown
// top-level fields are ignored.
func DecodeHAL(b []byte) (Message, *Error) { return DecodeHALNamed(b, nil) }

// DecodeHALNamed is DecodeHAL with the method names a server knows: a
// message whose method is one of names gets that very string as its
// Method, so that the commonest requests cost no string of their own.
// names is only read.
func DecodeHALNamed(b []byte, names map[string]string) (Message, *Error) {
	m, err := DecodeHALView(b, names)
	if err == nil {
		m = m.Owned()
	}
	return m, err
}

// DecodeHALView is DecodeHALNamed without the copy: the message's ID,
// Params and Result point into b, and are valid only while b is. A
// server that answers a request before it reads the next message into
// the same buffer needs no copy; one that keeps the message longer takes
// Owned first. An error's message owns its id.
func DecodeHALView(b []byte, names map[string]string) (Message, *Error) {
	r, f := validate(b)
	switch r {
	case "":
	case ReasonInvalidUTF8:
		return Message{}, halError(CodeParseError, "parse error: invalid UTF-8", r)
	case ReasonNotJSON:
		return Message{}, halError(CodeParseError, "parse error: not valid JSON", ReasonParseError)
	case ReasonArray:
		return Message{}, halError(CodeInvalidRequest, "invalid request: batches are not supported", ReasonBatch)
	default:
		return Message{}, halError(CodeInvalidRequest, "invalid request: "+reasonText[r], r)
	}
	var method string
	var e *Error
	// Once the id is known to be good, an error about the rest of the
	// message is answered with that id, as JSON-RPC 2.0 asks, so that the
	// client can match it; before that, with null.
	switch {
	case f.id != nil && !isInteger(f.id) && f.id[0] != '"':
		return halReject(nil, ReasonBadID)
	case !isVersion(f.jsonrpc):
		return halReject(f.id, ReasonBadJSONRPC)
	case f.method == nil && f.result == nil && f.err == nil:
		return halReject(f.id, ReasonBadMethod)
	case f.method == nil && f.id == nil:
		return halReject(nil, ReasonBadID)
	case f.method != nil && f.method[0] != '"':
		return halReject(f.id, ReasonBadMethod)
	case !isObject(f.params) || !isObject(f.result):
		return halReject(f.id, ReasonParamsNotObject)
	}
	if f.method != nil {
		if method = knownString(f.method, names); method == "" {
			return halReject(f.id, ReasonBadMethod)
		}
	}
	if f.err != nil {
		var detail string
		if e, detail = decodeError(f.err); e == nil {
			return Message{ID: ownID(f.id)}, halError(CodeInvalidRequest, "invalid request: "+detail, ReasonBadError)
		}
	}
	return view(f, method, e), nil
}

// view builds the Message from the fields, its raw ones pointing into the
// message decoded.
func view(f fields, method string, e *Error) Message {
	return Message{Method: method, Error: e, ID: f.id, Params: f.params, Result: f.result}
}

// Owned returns m with its ID, Params and Result copied into one buffer of
// its own, valid after the buffer m was decoded from changes.
func (m Message) Owned() Message {
	n := len(m.ID) + len(m.Params) + len(m.Result)
	if n == 0 {
		return m
	}
	buf := make([]byte, 0, n)
	m.ID, buf = take(buf, m.ID)
	m.Params, buf = take(buf, m.Params)
	m.Result, _ = take(buf, m.Result)
	return m
}

// halReject answers a broken rule; id is the message's id when it is well
// formed, nil otherwise.
func halReject(id []byte, reason string) (Message, *Error) {
	return Message{ID: ownID(id)}, halError(CodeInvalidRequest, "invalid request: "+reasonText[reason], reason)
}

func ownID(id []byte) json.RawMessage {
	if id == nil {
		return nil
	}
	return append(json.RawMessage(nil), id...)
}

func halError(code int64, msg, reason string) *Error {
	return &Error{Code: code, Message: msg, Data: map[string]any{"reason": reason}}
}

var reasonText = map[string]string{
	ReasonTooDeep:         "nested too deeply",
	ReasonDuplicateKey:    "a key is repeated in an object",
	ReasonNotObject:       "a message must be an object",
	ReasonBadJSONRPC:      `"jsonrpc" must be "2.0"`,
	ReasonBadID:           `"id" must be an integer or a string`,
	ReasonBadMethod:       `"method" must be a non-empty string`,
	ReasonParamsNotObject: `"params" and "result" must be objects`,
}

// DecodeAdapter parses one adapter-protocol line (without its '\n'),
// applying the rules of seed 001 and adapter spec §6. An empty line returns
// ErrEmptyLine (harmless, not a violation). Every other broken rule returns
// a *Violation. The id must be an unsigned 64-bit integer written as plain
// digits (never through a float: 18446744073709551616, -1 or 1.0 is a
// violation). A response needs an id and exactly one of result and error;
// a request or notification may carry neither. Reused request ids and
// responses to unknown ids are the supervisor's business.
func DecodeAdapter(line []byte) (Message, error) {
	if len(line) == 0 {
		return Message{}, ErrEmptyLine
	}
	if bytes.IndexByte(line, 0) >= 0 {
		return Message{}, violation(ReasonNUL, "the line contains a NUL byte")
	}
	r, f := validate(line)
	if r != "" {
		return Message{}, violation(r, "")
	}
	if !isVersion(f.jsonrpc) {
		return Message{}, violation(ReasonBadJSONRPC, `"jsonrpc" must be "2.0"`)
	}
	if _, ok := parseUint64(f.id); f.id != nil && !ok {
		return Message{}, violation(ReasonBadID, "the id must be an unsigned 64-bit integer, not "+clip(f.id))
	}
	method, v := adapterKind(f)
	if v != nil {
		return Message{}, v
	}
	if !isObject(f.params) {
		return Message{}, violation(ReasonParamsNotObject, "")
	}
	if !isObject(f.result) {
		return Message{}, violation(ReasonResultNotObject, "")
	}
	var e *Error
	if f.err != nil {
		var detail string
		if e, detail = decodeError(f.err); e == nil {
			return Message{}, violation(ReasonBadError, detail)
		}
	}
	return view(f, method, e).Owned(), nil
}

// adapterKind checks the method of a request or notification, or the id,
// result and error of a response.
func adapterKind(f fields) (string, *Violation) {
	if f.method == nil {
		switch {
		case f.id == nil:
			return "", violation(ReasonBadID, "a response without an id")
		case f.result != nil && f.err != nil:
			return "", violation(ReasonBothResultAndError, "")
		case f.result == nil && f.err == nil:
			return "", violation(ReasonNeitherResultNorError, "")
		}
		return "", nil
	}
	if f.method[0] != '"' {
		return "", violation(ReasonBadMethod, "the method is not a string")
	}
	method := decodeString(f.method)
	if !ValidMethodName(method) {
		return "", violation(ReasonBadMethod, "the method must be 1 to 64 letters, digits, '.', '_' or '-', not "+clip(f.method))
	}
	if f.result != nil || f.err != nil {
		return "", violation(ReasonMethodWithResult, "a request or notification with a result or an error")
	}
	return method, nil
}

// ValidMethodName reports whether name is a method name of the adapter
// protocol: 1 to 64 characters of letters, digits, '.', '_' and '-'.
func ValidMethodName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func violation(reason, detail string) *Violation {
	return &Violation{Reason: reason, Detail: detail}
}

// clip quotes at most 40 bytes of a raw value for a Detail.
func clip(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// decodeError reads an error object {code: integer, message: string,
// data?}, keeping data as raw bytes. Unknown members are ignored. It
// returns nil and what is wrong when the object is malformed.
func decodeError(raw []byte) (*Error, string) {
	if raw[0] != '{' {
		return nil, "the error is not an object"
	}
	var e Error
	var haveCode, haveMessage bool
	m := newMembers(raw)
	for {
		k, v, ok := m.next()
		if !ok {
			break
		}
		switch string(k) {
		case "code":
			if e.Code, haveCode = parseInt64(v); !haveCode {
				return nil, "the error code is not a 64-bit integer"
			}
		case "message":
			if v[0] != '"' {
				return nil, "the error message is not a string"
			}
			e.Message, haveMessage = decodeString(v), true
		case "data":
			e.Data = json.RawMessage(bytes.Clone(v))
		}
	}
	switch {
	case !haveCode:
		return nil, "the error has no code"
	case !haveMessage:
		return nil, "the error has no message"
	}
	return &e, ""
}

func take(buf, v []byte) (json.RawMessage, []byte) {
	if v == nil {
		return nil, buf
	}
	start := len(buf)
	buf = append(buf, v...)
	return buf[start:len(buf):len(buf)], buf
}

// knownString is decodeString that returns the string of names a string
// without escapes names, without making one.
func knownString(quoted []byte, names map[string]string) string {
	if known, ok := names[string(quoted[1:len(quoted)-1])]; ok {
		return known
	}
	return decodeString(quoted)
}

// decodeString decodes a validated JSON string.
func decodeString(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1])
	}
	return string(unquote(quoted))
}

func isVersion(v []byte) bool {
	return string(v) == `"2.0"` || (len(v) > 0 && v[0] == '"' && decodeString(v) == "2.0")
}

// isObject reports whether a raw member is absent or an object.
func isObject(v []byte) bool { return v == nil || v[0] == '{' }

// isInteger reports whether a validated value is a number without a
// fraction or an exponent.
func isInteger(v []byte) bool {
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return false
	}
	return bytes.IndexAny(v, ".eE") < 0
}
