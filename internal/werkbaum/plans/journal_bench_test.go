package plans

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"talkd/internal/config"
	"talkd/internal/queue"
)

// BenchmarkJournalAcrossPlans measures the journal's share of a write alone (no engine,
// no plan file): the pending record and the settle, two durable commits on a real bbolt
// file. First one writer does b.N of them on one plan, then four writers on four plans do
// b.N each at the same time; reported are the journalled writes/s of both and their
// ratio. Without the group commit each record is its own fsync'd transaction and four
// writers reach about the rate of one; with it their records share transactions.
//
//	go test ./internal/werkbaum/plans -run '^$' -bench JournalAcrossPlans -benchtime=200x -count=3
func BenchmarkJournalAcrossPlans(b *testing.B) {
	dir := b.TempDir()
	var cfg []config.Plan
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("p%d.werkbaum", i))
		if err := os.WriteFile(p, []byte(planText), 0o644); err != nil {
			b.Fatal(err)
		}
		cfg = append(cfg, config.Plan{Key: fmt.Sprintf("p%d", i), Path: p, Lang: "en"})
	}
	db, err := bbolt.Open(filepath.Join(dir, "state.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	svc, err := New(Options{Plans: cfg, DB: Bolt(db), Lanes: &queue.Lanes{}})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	journalled := func(phase, plan, n int) error {
		key := fmt.Sprintf("p%d", plan)
		for k := range n {
			e := &journalEntry{RequestID: fmt.Sprintf("b-%d-%d-%d", phase, plan, k), ArgsHash: "h", Tool: "werkbaum_set_status",
				State: statePending, NewChecksum: "sum", Revision: uint64(k + 2), Result: []byte(`{"revision":2}`), At: time.Now()}
			if err := svc.record(key, e); err != nil {
				return err
			}
			e.State = StateApplied
			err := svc.commit.Do(func(tx Tx) error {
				bk := tx.Bucket(bucketName(key))
				if err := svc.putEntry(bk, e); err != nil {
					return err
				}
				return writeMeta(bk, planMeta{Revision: e.Revision, Checksum: "sum"})
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	phase := func(plans int) float64 {
		var wg sync.WaitGroup
		errs := make(chan error, plans)
		start := time.Now()
		for i := range plans {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := journalled(plans, i, b.N); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		return float64(plans*b.N) / elapsed.Seconds()
	}
	b.ResetTimer()
	one := phase(1)
	four := phase(4)
	b.StopTimer()
	b.ReportMetric(one, "1plan-writes/s")
	b.ReportMetric(four, "4plans-writes/s")
	b.ReportMetric(four/one, "ratio")
}
