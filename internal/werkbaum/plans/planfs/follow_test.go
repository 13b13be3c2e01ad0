package planfs

import (
	"strings"
	"testing"
	"time"
)

// At most maxFollowedRoots plans below roots are followed: the most recently used.
func TestFollowerBoundsRootPlans(t *testing.T) {
	fw := NewFollower(time.Hour, FollowWindow, nil)
	start := time.Now()
	for i := range maxFollowedRoots + 10 {
		fw.roots[strings.Repeat("x", i+1)] = start.Add(time.Duration(i) * time.Millisecond)
	}
	got := fw.FollowedRoots(start.Add(time.Second))
	if len(got) != maxFollowedRoots || got[0] != strings.Repeat("x", maxFollowedRoots+10) {
		t.Fatalf("%d followed, the first %d characters long", len(got), len(got[0]))
	}
}
