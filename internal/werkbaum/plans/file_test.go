package plans

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"talkd/internal/werkbaum/plans/planfs"
	"testing"
)

// Another talkd (or an editor) saving the plan by rename while this one opens it: the
// path names a new file between the Lstat and the open. That is a new version to read,
// not an error for the caller: openPlan opens the file that is there now. Before, the
// swap reached clients as "the plan file was replaced while it was opened" from the
// write's pre-check (TestPlanFileTwoDaemons, one write in ~400).
func TestOpenPlanFollowsARenameSave(t *testing.T) {
	f := newFixture(t, planText)
	ref := mustRef(t, f.svc, "p")
	dir := filepath.Dir(f.path)
	var stop atomic.Bool
	var saved atomic.Int64
	saves := make(chan int64)
	go func() {
		defer func() { saves <- saved.Load() }()
		for n := 0; !stop.Load(); n++ {
			tmp := filepath.Join(dir, fmt.Sprintf(".save-%d", n))
			if err := os.WriteFile(tmp, []byte(planText), 0o640); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, f.path); err != nil {
				t.Error(err)
				return
			}
			saved.Add(1)
		}
	}()
	// The opens go on until the saves have raced them enough, not for a fixed count: on a
	// loaded machine the saver ran only 76 saves beside 20,000 opens. The bound keeps a
	// saver that never runs from hanging the test.
	const minOpens, minSaves, maxOpens = 20000, 500, 2000000
	opens := 0
	for ; opens < maxOpens && (opens < minOpens || saved.Load() < minSaves); opens++ {
		pf, err := planfs.Open(ref, f.svc.maxBytes)
		if err != nil {
			stop.Store(true)
			<-saves
			t.Fatalf("open %d during rename saves: %v (swapped: %v)", opens, err, errors.Is(err, errPlanSwapped))
		}
		pf.Close()
		if err := f.svc.checkWritable(ref); err != nil {
			stop.Store(true)
			<-saves
			t.Fatalf("write pre-check %d during rename saves: %v", opens, err)
		}
	}
	stop.Store(true)
	if n := <-saves; n < minSaves {
		t.Fatalf("only %d saves ran beside %d opens: the test did not race them", n, opens)
	}
}
