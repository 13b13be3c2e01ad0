package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	tests := []struct {
		in         string
		start, end int
		want       string // the String form
	}{
		{"22:00-07:00", 22 * 60, 7 * 60, "22:00-07:00"},
		{"12:30-13:00", 12*60 + 30, 13 * 60, "12:30-13:00"},
		{"7:05-9:00", 7*60 + 5, 9 * 60, "07:05-09:00"},
		{"08:00 - 12:30", 8 * 60, 12*60 + 30, "08:00-12:30"},
		{"00:00-23:59", 0, 23*60 + 59, "00:00-23:59"},
		{"23:59-00:00", 23*60 + 59, 0, "23:59-00:00"},
	}
	for _, tt := range tests {
		w, err := ParseWindow(tt.in)
		if err != nil {
			t.Errorf("ParseWindow(%q): %v", tt.in, err)
			continue
		}
		if w.Start != tt.start || w.End != tt.end {
			t.Errorf("ParseWindow(%q) = %+v, want start %d end %d", tt.in, w, tt.start, tt.end)
		}
		if w.String() != tt.want {
			t.Errorf("ParseWindow(%q).String() = %q, want %q", tt.in, w.String(), tt.want)
		}
	}
}

func TestParseWindowErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "want HH:MM-HH:MM"},
		{"22:00", "want HH:MM-HH:MM"},
		{"22-07", "not a time of day"},
		{"24:00-07:00", "hour must be 00..23"},
		{"22:60-07:00", "minute must be 00..59"},
		{"22:00-07:5", "not a time of day"},
		{"2a:00-07:00", "hour must be 00..23"},
		{"+1:00-07:00", "hour must be 00..23"},
		{"22:00-22:00", "start and end are equal"},
		{"100:00-07:00", "not a time of day"},
	}
	for _, tt := range tests {
		_, err := ParseWindow(tt.in)
		if err == nil {
			t.Errorf("ParseWindow(%q): no error, want one containing %q", tt.in, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.in) {
			t.Errorf("ParseWindow(%q) error %q, want it to quote the input and contain %q", tt.in, err, tt.want)
		}
	}
}

func TestWindowContains(t *testing.T) {
	at := func(h, m, s int) time.Time { return time.Date(2026, 3, 14, h, m, s, 0, time.UTC) }
	night, _ := ParseWindow("22:00-07:00")
	lunch, _ := ParseWindow("12:30-13:00")
	tests := []struct {
		w    Window
		t    time.Time
		want bool
	}{
		{night, at(21, 59, 59), false},
		{night, at(22, 0, 0), true},
		{night, at(23, 59, 59), true},
		{night, at(0, 0, 0), true},
		{night, at(3, 0, 0), true},
		{night, at(6, 59, 0), true},
		{night, at(6, 59, 59), true},
		{night, at(7, 0, 0), false},
		{night, at(12, 0, 0), false},
		{lunch, at(12, 29, 59), false},
		{lunch, at(12, 30, 0), true},
		{lunch, at(12, 59, 0), true},
		{lunch, at(13, 0, 0), false},
		{lunch, at(0, 0, 0), false},
	}
	for _, tt := range tests {
		if got := tt.w.Contains(tt.t); got != tt.want {
			t.Errorf("%s.Contains(%s) = %v, want %v", tt.w, tt.t.Format("15:04:05"), got, tt.want)
		}
	}
}

// The window is wall-clock time in the location of the time it is asked about.
func TestWindowContainsUsesTheTimesLocation(t *testing.T) {
	night, _ := ParseWindow("22:00-07:00")
	utc := time.Date(2026, 1, 10, 21, 30, 0, 0, time.UTC)
	berlin := utc.In(time.FixedZone("CET", 3600)) // 22:30 there
	if night.Contains(utc) {
		t.Errorf("21:30 UTC is outside 22:00-07:00")
	}
	if !night.Contains(berlin) {
		t.Errorf("the same instant at 22:30 CET is inside 22:00-07:00")
	}
}
