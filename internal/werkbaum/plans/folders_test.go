package plans

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
)

// Four plans saved at once in one folder by one process: every save lands, nothing is
// left behind, and the folder share is gone when no write uses it.
func TestFileSavesAcrossPlansInOneFolder(t *testing.T) {
	svc, cfg := serviceWithPlans(t, 4, nil, time.Second)
	const saves = 25
	var wg sync.WaitGroup
	for i := range cfg {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ref, err := svc.resolve(cfg[i].Key)
			for k := 0; err == nil && k < saves; k++ {
				err = saveNext(svc, ref, k)
			}
			if err != nil {
				t.Errorf("plan %s: %v", cfg[i].Key, err)
			}
		}()
	}
	wg.Wait()
	for _, p := range cfg {
		data, err := os.ReadFile(p.Path)
		if err != nil {
			t.Fatal(err)
		}
		if want := benchTexts[saves%2]; string(data) != string(want) {
			t.Errorf("plan %s holds %q after %d saves, want %q", p.Key, data, saves, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(cfg[0].Path), ".*talkd-tmp-*"))
	if len(left) > 0 {
		t.Errorf("temp files left behind: %v", left)
	}
	if n := svc.folders.InUse(); n != 0 {
		t.Errorf("%d folder shares kept after the writes ended", n)
	}
}

// serviceWithPlans makes a service with n plans in one folder, each holding benchTexts[0],
// on a real bbolt journal (eng may be nil; lockTimeout 0 is the default).
func serviceWithPlans(tb testing.TB, n int, eng *werkbaum.Engine, lockTimeout time.Duration) (*Service, []config.Plan) {
	tb.Helper()
	dir := tb.TempDir()
	var cfg []config.Plan
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("p%d.werkbaum", i))
		if err := os.WriteFile(p, benchTexts[0], 0o644); err != nil {
			tb.Fatal(err)
		}
		cfg = append(cfg, config.Plan{Key: fmt.Sprintf("p%d", i), Path: p, Lang: "en"})
	}
	svc, err := New(Options{Plans: cfg, Engine: eng, DB: Bolt(stateDB(tb, dir)), Lanes: &queue.Lanes{}, LockTimeout: lockTimeout})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close() })
	return svc, cfg
}
