package api

import (
	"strings"
	"testing"
)

// planFileName: the title made safe for a file name on any system, non-ASCII letters kept.
func TestPlanFileName(t *testing.T) {
	for _, tc := range []struct {
		title string
		n     int
		want  string
	}{
		{"Sprint 14", 1, "Sprint 14.werkbaum"},
		{"Sprint 14", 3, "Sprint 14 3.werkbaum"},
		{"Plan für @jörg: Q3/Q4", 1, "Plan für -jörg- Q3-Q4.werkbaum"},
		{`a\b*c?"d<e>f|g`, 1, "a-b-c--d-e-f-g.werkbaum"},
		{"  ..hidden  \t name ", 1, "hidden name.werkbaum"},
		{"../../etc/passwd", 1, "etc-passwd.werkbaum"},
		{"trailing dots...", 1, "trailing dots.werkbaum"},
		{"line\nbreak", 1, "line break.werkbaum"},
		{"\x00\x01", 1, "plan.werkbaum"},
		{"...", 2, "plan 2.werkbaum"},
		{"Müller ✓ 日本", 1, "Müller - 日本.werkbaum"},
	} {
		if got := planFileName(tc.title, tc.n); got != tc.want {
			t.Errorf("planFileName(%q, %d) = %q, want %q", tc.title, tc.n, got, tc.want)
		}
	}
	long := planFileName(strings.Repeat("ä", 300), 1)
	if n := len([]rune(long)); n != 100+len(".werkbaum") {
		t.Errorf("a long title gives %d characters", n)
	}
}
