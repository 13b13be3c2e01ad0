package queue

import "time"

// Reconfigure gives the laws new parameters (a configuration reload) in one step under the
// queue's lock, so every announcement is judged either by the old rules or by the new
// ones, never by a mix. Nothing waiting is dropped: announcements already admitted stay
// in their lanes and are spoken (or dropped as stale, by the new max_wait) when their
// turn comes; the rate-limit slots already handed out stay taken, so a shorter interval
// applies from the next admission on. A smaller queue_size refuses new announcements
// until the line is short enough; it never evicts one. The flush interval is fixed at New
// (its ticker is running) and is kept.
func (v *Voice) Reconfigure(cfg Config) error {
	if cfg.Capacity <= 0 {
		return errCapacity
	}
	if cfg.HistorySize <= 0 {
		cfg.HistorySize = 500
	}
	v.mu.Lock()
	cfg.FlushEvery = v.cfg.FlushEvery
	v.cfg = cfg
	v.mu.Unlock()
	// A deferred announcement may be due sooner, or stale, under the new rules: let Run
	// look at the lanes again.
	select {
	case v.wake <- struct{}{}:
	default:
	}
	return nil
}

// speakTimeout is the current bound of one Prepare or Play.
func (v *Voice) speakTimeout() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cfg.SpeakTimeout
}
