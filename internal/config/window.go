package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Window is a daily local-time window such as quiet hours, "22:00-07:00". It holds minutes
// since midnight, so it means the same wall-clock span in whatever location a time is given
// in; a window whose end is before its start crosses midnight.
type Window struct {
	// Start is the first minute inside the window (0..1439).
	Start int
	// End is the first minute after the window (0..1439).
	End int
}

// ParseWindow reads "HH:MM-HH:MM" (spaces around the dash are tolerated, a one-digit hour
// is accepted). Start equal to end is refused: it would mean either never or always, and a
// user who writes it almost certainly meant something else.
func ParseWindow(s string) (Window, error) {
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return Window{}, fmt.Errorf("quiet-hours window %q: want HH:MM-HH:MM, e.g. 22:00-07:00", s)
	}
	start, err := parseClock(strings.TrimSpace(from))
	if err != nil {
		return Window{}, fmt.Errorf("quiet-hours window %q: start: %w", s, err)
	}
	end, err := parseClock(strings.TrimSpace(to))
	if err != nil {
		return Window{}, fmt.Errorf("quiet-hours window %q: end: %w", s, err)
	}
	if start == end {
		return Window{}, fmt.Errorf("quiet-hours window %q: start and end are equal; the window would be empty or the whole day", s)
	}
	return Window{Start: start, End: end}, nil
}

// parseClock reads "HH:MM" (or "H:MM") into minutes since midnight.
func parseClock(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) < 1 || len(h) > 2 || len(m) != 2 {
		return 0, fmt.Errorf("%q is not a time of day HH:MM", s)
	}
	hour, err := strconv.Atoi(h)
	if err != nil || hour < 0 || hour > 23 || !allDigits(h) {
		return 0, fmt.Errorf("%q: hour must be 00..23", s)
	}
	minute, err := strconv.Atoi(m)
	if err != nil || minute < 0 || minute > 59 || !allDigits(m) {
		return 0, fmt.Errorf("%q: minute must be 00..59", s)
	}
	return hour*60 + minute, nil
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Contains reports whether t's wall-clock time, in t's own location, lies inside the
// window. The start minute is inside, the end minute is not: 22:00-07:00 contains 22:00 and
// 06:59:59 but not 07:00.
func (w Window) Contains(t time.Time) bool {
	m := t.Hour()*60 + t.Minute()
	if w.Start < w.End {
		return m >= w.Start && m < w.End
	}
	return m >= w.Start || m < w.End
}

// String writes the window back as "HH:MM-HH:MM", the form /status shows.
func (w Window) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.Start/60, w.Start%60, w.End/60, w.End%60)
}
