package plans

import (
	"context"
	"sync"
	"time"
)

// An agent's write analyses the new text (werkbaum.Engine.Edit runs the guards on it), and
// the engine's runtime keeps that model in its memo (trimmed to the newest text after 2 s,
// werkbaum memoIdle, and dropped once the daemon has been idle for 20 s, cmd/talkd
// modelKeep); no view of it is made. An agent writes, thinks for several seconds, then reads
// or writes again: its next werkbaum_inspect would make the view then (30–50 ms at 10,000
// nodes), and after a longer pause the whole analysis (about 0.3 s). So once the
// agents' writes pause, the plan written last has its summary made at once (startSummary:
// the engine's whole-plan view and its outline, which the engine caches and its disk cache
// keeps the view of, and the counts), from the model the memo still holds: a few
// milliseconds of view at 2,000 nodes, 30–50 ms at 10,000. The next reading finds it; an
// idle spell drops only what the disk holds or what is decoded again.
//
// The wait (Options.WarmAfter) is a debounce over all agent writes of the store, not per
// plan: a burst of writes makes no view until it ends, and then only the last written
// plan's. An earlier plan of an interleaved burst is not made: its model has likely left the
// memo (a large text's two newest entries fill it), so making its view would be a whole
// analysis nobody may ask for. Editor PATCHes do not warm (they do not analyse the text).

// defaultWarmAfter is how long the agents' writes must pause before the last written
// plan's view is made: longer than the gap between the writes of a scripted burst, far
// inside the engine's memo trim (2 s) and the disk cache's settle time (1 s) after it.
const defaultWarmAfter = 250 * time.Millisecond

// warmer owns the debounce of the post-write view: the writes under way, the plan written
// last with the checksum it was given, and the one timer.
type warmer struct {
	after time.Duration         // <= 0: off
	build func(key, sum string) // Service.warmView

	mu      sync.Mutex
	writing int    // agent writes under way (Service.Write)
	key     string // the plan written last, "" when nothing waits
	sum     string // the checksum that write gave it
	timer   *time.Timer
	closed  bool
	running sync.WaitGroup // warm-ups under way (Close waits for them)
}

func newWarmer(after time.Duration, build func(key, sum string)) *warmer {
	return &warmer{after: after, build: build}
}

// begin marks an agent write under way: no view is made while one runs (it would run on
// the engine's other runtime, whose memo lacks the text, and slow that write down).
func (w *warmer) begin() {
	if w.after <= 0 {
		return
	}
	w.mu.Lock()
	w.writing++
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
}

// end marks the write done; changed names the plan and checksum it wrote ("" when it
// changed nothing, failed, or wrote to a document server). Once no write is under way the
// debounce starts again for the plan written last.
func (w *warmer) end(key, sum string) {
	if w.after <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writing--
	if key != "" {
		w.key, w.sum = key, sum
	}
	if w.writing > 0 || w.key == "" || w.closed {
		return
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(w.after, w.fire)
	} else {
		w.timer.Reset(w.after)
	}
}

// fire makes the waiting plan's view unless a write began meanwhile (its end arms the
// timer again).
func (w *warmer) fire() {
	w.mu.Lock()
	if w.writing > 0 || w.key == "" || w.closed {
		w.mu.Unlock()
		return
	}
	key, sum := w.key, w.sum
	w.key, w.sum = "", ""
	w.running.Add(1)
	w.mu.Unlock()
	defer w.running.Done()
	w.build(key, sum)
}

// close stops the debounce and waits for a warm-up under way.
func (w *warmer) close() {
	w.mu.Lock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	w.running.Wait()
}

// warmView makes the summary (and with it the whole-plan view, cached) of plan key if its
// content is still the one an agent's write gave it (checksum sum). The file is read
// again: an editor or another program may have changed it since.
func (s *Service) warmView(key, sum string) {
	start := time.Now()
	ctx := context.Background() // no request: the view outlives the write that asked
	snap, err := s.Read(ctx, key)
	if err != nil {
		s.log.Debug("plan view after the writes not made: the plan cannot be read", "plan", key, "err", err)
		return
	}
	if snap.Base.Checksum != sum {
		s.log.Debug("plan view after the writes not made: the plan changed since", "plan", key, "revision", snap.Base.Revision)
		return
	}
	ent := s.startSummary(key, snap)
	<-ent.done
	if ent.err != "" {
		// computeSummary logged the failure; the next reading tries again only once the
		// plan changes, as for any summary.
		return
	}
	s.log.Debug("plan view made after the writes paused", "plan", key, "revision", snap.Base.Revision,
		"checksum", sum, "nodes", ent.nodes, "took", time.Since(start).Round(time.Microsecond))
}
