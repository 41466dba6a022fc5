package history

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// A segment file is a header (segmentMagic) and then frames, appended
// and never rewritten: each frame is its payload's length (uint32, little
// endian), the CRC-32C of the payload, and the payload. A write that a
// power cut tore leaves a frame whose length runs past the end or whose
// CRC does not match: readFrames stops there, and Open cuts the file
// back to the last whole frame, so that nothing written before it is
// lost and the next frames append after good ones.
const (
	segmentMagic = "OHHIST1\n"
	frameHeader  = 8
	// maxPayload bounds a frame a reader accepts: a flush writes one
	// frame per series, well under this; a larger length is a torn or
	// corrupt header, not a frame to allocate for.
	maxPayload = 16 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errTorn is a segment whose frames stop before its end.
var errTorn = errors.New("torn or corrupt frame")

// appendFrame appends payload, framed, to buf.
func appendFrame(buf, payload []byte) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(payload)))
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(payload, castagnoli))
	return append(buf, payload...)
}

// readFrames calls fn with each whole frame's payload of the segment r
// (header included), in order, and returns the bytes those frames and
// the header take: where the good part of the file ends. err is errTorn
// (wrapped) when bytes follow that are no whole frame, fn's error, or a
// read error. A payload is valid only during fn.
func readFrames(r io.Reader, fn func(payload []byte) error) (good int64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic := make([]byte, len(segmentMagic))
	if n, err := io.ReadFull(br, magic); err != nil || string(magic) != segmentMagic {
		if err != nil {
			return 0, shortRead(err, fmt.Sprintf("header of %d bytes", n))
		}
		return 0, fmt.Errorf("%w: not a history segment (header %q)", errTorn, magic[:n])
	}
	good = int64(len(segmentMagic))
	var head [frameHeader]byte
	var payload []byte
	for {
		n, err := io.ReadFull(br, head[:])
		if n == 0 && errors.Is(err, io.EOF) {
			return good, nil
		}
		if err != nil {
			return good, shortRead(err, fmt.Sprintf("%d header bytes at offset %d", n, good))
		}
		size := binary.LittleEndian.Uint32(head[:4])
		if size > maxPayload {
			return good, fmt.Errorf("%w: length %d at offset %d", errTorn, size, good)
		}
		if cap(payload) < int(size) {
			payload = make([]byte, size)
		}
		payload = payload[:size]
		if _, err := io.ReadFull(br, payload); err != nil {
			return good, shortRead(err, fmt.Sprintf("frame at offset %d cut short", good))
		}
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(head[4:]) {
			return good, fmt.Errorf("%w: CRC mismatch at offset %d", errTorn, good)
		}
		if err := fn(payload); err != nil {
			return good, err
		}
		good += frameHeader + int64(size)
	}
}

// shortRead is a read that ended early: the end of the file is a torn
// frame (errTorn), any other error is the disk's and is returned as it
// is, so that a read error never gets a file cut.
func shortRead(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %s", errTorn, what)
	}
	return fmt.Errorf("read history segment: %w", err)
}
