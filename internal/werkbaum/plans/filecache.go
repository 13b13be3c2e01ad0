package plans

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"talkd/internal/werkbaum"
)

// The plan store keeps, per plan, what it last read of the file and what it derived from
// that text, so that reading or inspecting an unchanged plan costs an open and a stat:
//
//   - the text and its checksum (planfs.Cache, trusted while the file's identity is
//     unchanged and not racily recent);
//   - the inspect answers per option set, with the base spliced in, ready to send (views
//     of planfs.Cache, dropped with the content they were made of);
//   - the summary of plans_list and /status (nodes, warnings, or the engine's failure),
//     computed in the background, so those doors never run the engine themselves.
//
// The outline of the whole plan's view, which the summary counts and the compact reading
// shows, is the engine's (outline.go): the store asks for it and keeps none.
//
// Everything cached is immutable once stored and handed out without copying.

// summaryWait is how long Summarize waits for a summary that is being computed before it
// answers "pending": long enough for a small plan right after start or a write, short
// enough that one plan that times out in the engine cannot hold up /status.
const summaryWait = 200 * time.Millisecond

// summaryEntry is the engine's count of one content (by checksum), or its failure.
type summaryEntry struct {
	sum      string
	done     chan struct{} // closed when nodes/warnings/err are set
	nodes    int
	warnings int
	err      string
}

// cache holds the summaries of a Service.
type cache struct {
	mu        sync.Mutex
	summaries map[string]*summaryEntry // by plan key, the latest content's only
}

func newCache() *cache {
	return &cache{summaries: map[string]*summaryEntry{}}
}

// viewKey names an inspect answer: the revision is part of it because the answer carries
// the base, and content can come back under a new revision (A, B, A again).
func viewKey(rev uint64, opts werkbaum.InspectOptions) string {
	var b strings.Builder
	b.Grow(32 + len(opts.ID))
	b.WriteString(opts.ID)
	b.WriteByte(0)
	b.WriteString(strings.Join(opts.Include, ","))
	b.WriteByte(0)
	b.WriteString(uintString(rev))
	return b.String()
}

func uintString(n uint64) string {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(buf[i:])
		}
	}
}

// withBase splices the base in front of the engine's inspect object: {"base":…, …}.
func withBase(base Base, inspect json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(base)
	out := make([]byte, 0, len(inspect)+len(b)+10)
	out = append(out, `{"base":`...)
	out = append(out, b...)
	i, j := 0, len(inspect)
	for i < j && isSpace(inspect[i]) {
		i++
	}
	for j > i && isSpace(inspect[j-1]) {
		j--
	}
	if j-i > 2 {
		out = append(out, ',')
		out = append(out, inspect[i+1:j]...)
	} else {
		out = append(out, '}')
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// summary returns the summary of this content: at once when known, after at most wait
// when being computed, else nil (the caller says "pending"). A content not seen yet
// starts its computation in the background.
func (s *Service) summary(ctx context.Context, key string, snap *Snapshot, wait time.Duration) *summaryEntry {
	ent := s.startSummary(key, snap)
	select {
	case <-ent.done:
		return ent
	default:
	}
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ent.done:
		return ent
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// startSummary returns the summary entry of the content, starting its computation if it
// is new. One computation per content: concurrent /status calls share it, and a content
// whose analysis failed (the engine ran out of time) keeps that answer until it changes.
func (s *Service) startSummary(key string, snap *Snapshot) *summaryEntry {
	s.cache.mu.Lock()
	ent := s.cache.summaries[key]
	if ent != nil && ent.sum == snap.Base.Checksum {
		s.cache.mu.Unlock()
		return ent
	}
	ent = &summaryEntry{sum: snap.Base.Checksum, done: make(chan struct{})}
	s.cache.summaries[key] = ent
	s.cache.mu.Unlock()
	go s.computeSummary(key, snap, ent)
	return ent
}

// computeSummary counts nodes and warnings in the outline of the whole plan's view, which
// the engine makes with that view and keeps with it (werkbaum_inspect of the whole plan
// and its compact reading then find both cached there).
func (s *Service) computeSummary(key string, snap *Snapshot, ent *summaryEntry) {
	defer close(ent.done)
	// Not the caller's context: the summary outlives the request that asked first.
	o, err := s.engine.Outline(context.Background(), snap.Text)
	if err != nil {
		ent.err = err.Error()
		s.log.Warn("plan summary failed; cached until the plan changes", "plan", key, "checksum", snap.Base.Checksum, "err", err)
		return
	}
	ent.nodes, ent.warnings = len(o.Nodes), len(o.Warnings)
}

// warm computes the summary of these plans in the background (the configured ones at
// start, the added ones after Reconfigure), so the first /status finds them.
func (s *Service) warm(keys []string) {
	if s.engine == nil || len(keys) == 0 {
		return
	}
	s.warming.Add(1)
	go func() {
		defer s.warming.Done()
		s.warmSummaries(keys)
	}()
}

func (s *Service) warmSummaries(keys []string) {
	for _, k := range keys {
		snap, err := s.Read(context.Background(), k)
		if err != nil {
			continue
		}
		<-s.startSummary(k, snap).done
	}
}
