package history

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Store keeps the history on disk, in a directory of the state directory
// (<state>/history): the full-resolution samples in full/ and the
// one-minute buckets in minute/, each as numbered segment files of framed
// records (frame.go, record.go). It is written in batches (Append: one
// write and one fsync per kind), a segment is never rewritten but for
// cutting a torn tail at Open, and old segments are removed whole: past
// their kind's Keep, or the oldest first while the files take more than
// MaxBytes. A new segment starts at each Open, each UTC day, and when the
// current one reaches a sixteenth of MaxBytes, so that there is always
// an old one to drop.
type Store struct {
	opt   StoreOptions
	mu    sync.Mutex
	kinds [2]*segments // full, minute
	stats StoreStats
}

// StoreOptions bound a Store; see Store.
type StoreOptions struct {
	KeepFull    time.Duration // 0: no samples kept
	KeepMinutes time.Duration // 0: no buckets kept
	MaxBytes    int64
	Now         func() time.Time // the clock retention and rotation read
	Logger      *slog.Logger
}

// StoreStats count what a Store wrote, since it was opened: the write and
// fsync calls (what an SD card sees), the bytes, and the flushes and
// items appended.
type StoreStats struct {
	Flushes, Writes, Syncs uint64
	Bytes                  uint64
	Samples, Buckets       uint64
	DiskBytes              int64 // the segments' size now
}

const (
	kindFull = iota
	kindMinute
)

// segments are one kind's files, oldest first; the last is appended to.
type segments struct {
	dir    string
	keep   time.Duration
	list   []*segment
	active *os.File // open for appending to list's last, nil before the first write
	day    string   // UTC day the active segment was begun on
}

// segment is what Open and Append learned of one file.
type segment struct {
	path   string
	seq    uint64
	size   int64 // bytes of whole frames
	t0, t1 int64 // the span of its items' times (t0 > t1 when none)
	series map[string]*span
}

// span is one series' items in a segment.
type span struct {
	first, last uint64 // indices
	t0, t1      int64
}

func seriesKey(device, field string) string { return device + "\x00" + field }

// minSegment bounds how small MaxBytes makes a segment.
const minSegment = 64 << 10

// OpenStore opens (making it) the history directory dir, reads every
// segment, oldest first, the minute ones before the full ones, calling
// load with each record (kindFull or kindMinute), and cuts a torn tail.
// A segment's corrupt middle is cut likewise: a frame's length cannot be
// trusted past a bad CRC, so what follows it is unreadable.
func OpenStore(dir string, opt StoreOptions, load func(kind int, b batch)) (*Store, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{opt: opt}
	for kind, name := range [...]string{"full", "minute"} {
		keep := opt.KeepFull
		if kind == kindMinute {
			keep = opt.KeepMinutes
		}
		sub := filepath.Join(dir, name)
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return nil, fmt.Errorf("create history directory: %w", err)
		}
		s.kinds[kind] = &segments{dir: sub, keep: keep}
	}
	for _, kind := range [...]int{kindMinute, kindFull} {
		if err := s.kinds[kind].open(kind, load, opt.Logger); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropOld()
	return s, nil
}

// open lists and reads the kind's segments.
func (g *segments) open(kind int, load func(int, batch), log *slog.Logger) error {
	ents, err := os.ReadDir(g.dir)
	if err != nil {
		return fmt.Errorf("list history segments: %w", err)
	}
	for _, e := range ents {
		seq, ok := segmentSeq(e.Name())
		if !ok {
			continue
		}
		seg := &segment{path: filepath.Join(g.dir, e.Name()), seq: seq, t0: math.MaxInt64, t1: math.MinInt64, series: map[string]*span{}}
		if err := seg.read(kind, load, log); err != nil {
			return err
		}
		g.list = append(g.list, seg)
	}
	slices.SortFunc(g.list, func(a, b *segment) int { return cmpU64(a.seq, b.seq) })
	return nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// segmentSeq reads a segment's number from its name, 0000000042.seg.
func segmentSeq(name string) (uint64, bool) {
	num, ok := strings.CutSuffix(name, ".seg")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	return seq, err == nil
}

// read reads seg's records into load and its spans, and cuts what
// follows its last whole frame.
func (seg *segment) read(kind int, load func(int, batch), log *slog.Logger) error {
	f, err := os.OpenFile(seg.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open history segment: %w", err)
	}
	defer f.Close()
	good, err := readFrames(f, func(payload []byte) error {
		b, err := decodeRecord(payload)
		if err != nil { // a whole frame of a format this build does not read
			log.Warn("history record skipped", "segment", seg.path, "err", err)
			return nil
		}
		seg.note(&b)
		if load != nil {
			load(kind, b)
		}
		return nil
	})
	if err == nil {
		seg.size = good
		return nil
	}
	if !isTorn(err) {
		return fmt.Errorf("read history segment %s: %w", seg.path, err)
	}
	st, serr := f.Stat()
	if serr != nil {
		return fmt.Errorf("read history segment %s: %w", seg.path, serr)
	}
	log.Warn("history segment's torn tail cut", "segment", seg.path, "kept_bytes", good, "cut_bytes", st.Size()-good, "why", err)
	if good < int64(len(segmentMagic)) { // not even a header: write one
		if _, err := f.WriteAt([]byte(segmentMagic), 0); err != nil {
			return fmt.Errorf("repair history segment %s: %w", seg.path, err)
		}
		good = int64(len(segmentMagic))
	}
	if err := f.Truncate(good); err != nil {
		return fmt.Errorf("cut history segment %s: %w", seg.path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("cut history segment %s: %w", seg.path, err)
	}
	seg.size = good
	return nil
}

// note adds b's items to seg's spans.
func (seg *segment) note(b *batch) {
	n := b.count()
	if n == 0 {
		return
	}
	t0, t1 := b.span()
	seg.t0, seg.t1 = min(seg.t0, t0), max(seg.t1, t1)
	key := seriesKey(b.device, b.field)
	last := b.first + uint64(n) - 1
	if sp := seg.series[key]; sp != nil {
		sp.first, sp.last = min(sp.first, b.first), max(sp.last, last)
		sp.t0, sp.t1 = min(sp.t0, t0), max(sp.t1, t1)
		return
	}
	seg.series[key] = &span{first: b.first, last: last, t0: t0, t1: t1}
}

// Close closes the files being appended to.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for _, g := range s.kinds {
		if g.active != nil {
			if err := g.active.Close(); err != nil && first == nil {
				first = fmt.Errorf("close history segment: %w", err)
			}
			g.active = nil
		}
	}
	return first
}

// Stats returns what s wrote so far.
func (s *Store) Stats() StoreStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.DiskBytes = s.diskBytes()
	return st
}

func (s *Store) diskBytes() int64 {
	var n int64
	for _, g := range s.kinds {
		for _, seg := range g.list {
			n += seg.size
		}
	}
	return n
}
