package history

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/openhal/gateway/internal/atomicfile"
)

func isTorn(err error) bool { return errors.Is(err, errTorn) }

// Append writes the batches of each kind to its current segment, as one
// write and one fsync a kind, and then removes the segments that are past
// their time or over the size bound. Batches of a kind kept for 0 are not
// written. On an error, what the failed write left is cut at the next
// Open; the batches may be passed again.
func (s *Store) Append(full, minutes []batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	wrote := false
	for kind, bs := range [...][]batch{full, minutes} {
		g := s.kinds[kind]
		if g.keep <= 0 || len(bs) == 0 {
			continue
		}
		if !wrote {
			wrote = true
			s.stats.Flushes++
		}
		if err := s.append(g, bs); err != nil {
			return err
		}
		for i := range bs {
			if kind == kindFull {
				s.stats.Samples += uint64(len(bs[i].samples))
			} else {
				s.stats.Buckets += uint64(len(bs[i].buckets))
			}
		}
	}
	s.dropOld()
	return nil
}

func (s *Store) append(g *segments, bs []batch) error {
	var buf, payload []byte
	for i := range bs {
		payload = appendRecord(payload[:0], &bs[i])
		buf = appendFrame(buf, payload)
	}
	if err := s.rotate(g); err != nil {
		return err
	}
	seg := g.list[len(g.list)-1]
	if _, err := g.active.Write(buf); err != nil {
		s.abandon(g)
		return fmt.Errorf("write history segment: %w", err)
	}
	s.stats.Writes++
	s.stats.Bytes += uint64(len(buf))
	if err := g.active.Sync(); err != nil {
		s.abandon(g)
		return fmt.Errorf("sync history segment: %w", err)
	}
	s.stats.Syncs++
	seg.size += int64(len(buf))
	for i := range bs {
		seg.note(&bs[i])
	}
	return nil
}

// segmentBytes is how large a segment grows before the next is begun.
func (s *Store) segmentBytes() int64 { return max(s.opt.MaxBytes/16, minSegment) }

// rotate makes sure g has a segment open for appending that was begun
// today (UTC) and is under segmentBytes, beginning one if not.
func (s *Store) rotate(g *segments) error {
	day := s.opt.Now().UTC().Format(time.DateOnly)
	if g.active != nil {
		if g.day == day && g.list[len(g.list)-1].size < s.segmentBytes() && s.stillThere(g) {
			return nil
		}
		if err := g.active.Close(); err != nil {
			return fmt.Errorf("close history segment: %w", err)
		}
		g.active = nil
	}
	// history/ and its kind's folder, if the state directory was made
	// again without them; never the state directory itself, which is
	// its owner's to make.
	for _, d := range []string{filepath.Dir(g.dir), g.dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("begin history segment: %w", err)
		}
	}
	seq := uint64(1)
	if n := len(g.list); n > 0 {
		seq = g.list[n-1].seq + 1
	}
	path := filepath.Join(g.dir, fmt.Sprintf("%010d.seg", seq))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("begin history segment: %w", err)
	}
	if _, err := f.Write([]byte(segmentMagic)); err != nil {
		// A full disk: no headless file left behind, and the next
		// flush tries the same name again.
		f.Close()
		os.Remove(path)
		return fmt.Errorf("begin history segment: %w", err)
	}
	s.stats.Writes++
	// The header and the directory entry reach the disk with the first
	// batch's fsync and this one: a power cut leaves at most an empty or
	// headless file, which Open mends.
	if err := atomicfile.SyncDir(g.dir); err != nil {
		f.Close()
		return fmt.Errorf("begin history segment: %w", err)
	}
	s.stats.Syncs++
	g.active, g.day = f, day
	g.list = append(g.list, &segment{path: path, seq: seq, size: int64(len(segmentMagic)), t0: math.MaxInt64, t1: math.MinInt64, series: map[string]*span{}})
	return nil
}

// dropOld removes whole segments: those whose newest item is older than
// their kind's keep, then, while the files take more than MaxBytes, the
// oldest full-resolution one (buckets are the long summary), then the
// oldest minute one. The segment being appended to is never removed.
func (s *Store) dropOld() {
	now := s.opt.Now().UnixMilli()
	for _, g := range s.kinds {
		cut := now - g.keep.Milliseconds()
		for len(g.list) > 0 && !s.current(g, 0) && g.list[0].t1 < cut {
			s.remove(g, "older than kept")
		}
	}
	for s.opt.MaxBytes > 0 && s.diskBytes() > s.opt.MaxBytes {
		switch full, minute := s.kinds[kindFull], s.kinds[kindMinute]; {
		case len(full.list) > 0 && !s.current(full, 0):
			s.remove(full, "over the size bound")
		case len(minute.list) > 0 && !s.current(minute, 0):
			s.remove(minute, "over the size bound")
		default:
			return
		}
	}
}

// current says whether g's segment i is the one appended to.
func (s *Store) current(g *segments, i int) bool {
	return g.active != nil && i == len(g.list)-1
}

// remove deletes g's oldest segment.
func (s *Store) remove(g *segments, why string) {
	seg := g.list[0]
	// Forgotten even if it stays: it is not read again, and the bound
	// is not held up by a file that cannot go.
	g.list = g.list[1:]
	if err := os.Remove(seg.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.opt.Logger.Warn("history segment not removed", "segment", seg.path, "err", err)
		return
	}
	s.opt.Logger.Debug("history segment removed", "segment", seg.path, "why", why, "bytes", seg.size)
}

// abandon stops appending to g's segment after a failed write, which may
// have left part of a frame: the next batch begins a new segment, and
// the next Open cuts the part.
func (s *Store) abandon(g *segments) {
	g.active.Close()
	g.active = nil
}

// stillThere says whether g's open segment is still the file at its
// path: a state directory removed and made again under the running
// gateway would leave it writing to a file nobody can read.
func (s *Store) stillThere(g *segments) bool {
	open, err := g.active.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(g.list[len(g.list)-1].path)
	if err != nil || !os.SameFile(open, now) {
		s.opt.Logger.Warn("history segment gone from the state directory; beginning another", "segment", g.list[len(g.list)-1].path)
		return false
	}
	return true
}
