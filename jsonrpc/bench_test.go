package jsonrpc

import (
	"bytes"
	"io"
	"testing"
)

func BenchmarkDecodeHAL(b *testing.B) {
	msg := []byte(smallRequest)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, e := DecodeHAL(msg); e != nil {
			b.Fatal(e)
		}
	}
}

func BenchmarkDecodeAdapter(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"result":{"value":21.5,"ts":"2026-01-02T03:04:05.678Z"}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := DecodeAdapter(msg); err != nil {
			b.Fatal(err)
		}
	}
}

type readResult struct {
	Value any    `json:"value"`
	TS    string `json:"ts"`
}

func BenchmarkAppendResult(b *testing.B) {
	id := IntID(7)
	res := readResult{Value: true, TS: "2026-01-02T03:04:05.678Z"}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendResult(buf[:0], id, res); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendResultRaw(b *testing.B) {
	id := IntID(7)
	res := raw(`{"value":true,"ts":"2026-01-02T03:04:05.678Z"}`)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendResult(buf[:0], id, res); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLineReader(b *testing.B) {
	data := bytes.Repeat([]byte(smallRequest+"\n"), 1000)
	r := bytes.NewReader(data)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r.Reset(data)
		l := NewLineReader(r, 256<<10)
		for {
			if _, err := l.Next(); err == io.EOF {
				break
			}
		}
	}
}
