package docs

import (
	"fmt"
	"testing"
	"time"
)

// TestRetainThinsPeoplesSaves: every save of the last hour is history, older ones one per
// person per clock hour (the last), milestones all; texts kept for all of them.
func TestRetainThinsPeoplesSaves(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	var recs []Record
	v := uint64(0)
	add := func(at time.Time, r Record) {
		v++
		r.Version, r.At, r.Size, r.ChangeType = v, at, 10, ChangeUpdated
		recs = append(recs, r)
	}
	// Jörg saves every 10 minutes from 06:00 to 08:50, Müller every 20 from 06:05; an
	// agent's write (a milestone) at 06:30.
	byVersion := map[uint64]string{}
	for m := 0; m < 180; m += 5 {
		at := t0.Add(time.Duration(m) * time.Minute)
		switch {
		case m == 30:
			add(at, Record{ClientID: "mcp-1", DisplayName: "Agent", Milestone: true})
			byVersion[v] = "agent " + at.Format("15:04")
		case m%10 == 0:
			add(at, Record{ClientID: "ed-1", DisplayName: "Jörg"})
			byVersion[v] = "jörg " + at.Format("15:04")
		case m%20 == 5:
			add(at, Record{ClientID: "ed-2", DisplayName: "Müller"})
			byVersion[v] = "müller " + at.Format("15:04")
		}
	}
	ret := Retain(recs)
	var got []string
	for _, r := range recs {
		if ret.History[r.Version] {
			got = append(got, byVersion[r.Version])
			if !ret.Texts[r.Version] {
				t.Errorf("version %d is history without its text", r.Version)
			}
		}
	}
	// The newest is 08:50: the last hour is after 07:50; before that, per hour the last
	// save of each person.
	want := "[agent 06:30 müller 06:45 jörg 06:50 müller 07:45 " +
		"jörg 07:50 jörg 08:00 müller 08:05 jörg 08:10 jörg 08:20 müller 08:25 jörg 08:30 jörg 08:40 müller 08:45 jörg 08:50]"
	if fmt.Sprint(got) != want {
		t.Fatalf("history\n%v\nwant\n%s", got, want)
	}
	// Bounded: a year of one save a minute keeps at most KeepSaves saves and the records
	// of those and the newest MaxRecords.
	recs, v = nil, 0
	for m := 0; m < 20000; m++ {
		add(t0.Add(time.Duration(m)*time.Minute), Record{ClientID: "ed", DisplayName: "Jörg"})
	}
	ret = Retain(recs)
	if n := len(ret.History); n != KeepSaves {
		t.Errorf("%d saves in the history, want the bound %d", n, KeepSaves)
	}
	if n := len(KeptRecords(recs, ret)); n > MaxRecords+KeepSaves {
		t.Errorf("%d records kept, bound %d", n, MaxRecords+KeepSaves)
	}
}
