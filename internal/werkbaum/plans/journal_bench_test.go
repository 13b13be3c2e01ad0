package plans

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/journal"
	"talkd/internal/werkbaum/plans/planfs"
)

// The benchmarks below take a daemon write on a small plan apart into its durable
// parts and measure how each scales from one plan to four plans written at once (issue
// 16's target for the live daemon, BenchmarkPlanWritesAcrossPlans in test/, is four plans
// ≥ 3× one plan). Together they are the ceiling the disk sets for that benchmark: the
// daemon adds the engine, HTTP and the client's CPU to the same two cores.
//
//	go test ./internal/werkbaum/plans -run '^$' -bench AcrossPlans -benchtime=300x -count=3

// BenchmarkJournalAcrossPlans measures the journal's share of a write alone (no engine,
// no plan file): the pending record and the settle, two durable commits on a real bbolt
// file. Without the group commit each record is its own fsync'd transaction and four
// writers reach about the rate of one; with it their records share transactions.
func BenchmarkJournalAcrossPlans(b *testing.B) {
	acrossPlans(b, "writes/s", func(svc *Service, plan planfs.Ref, tag string, k int) error {
		e := pendingEntry(tag, k)
		if err := svc.record(plan.Key, e); err != nil {
			return err
		}
		return settleEntry(svc, plan.Key, e)
	})
}

// BenchmarkFileSaveAcrossPlans measures the plan file's share of a write alone (no
// engine, no journal): writeAtomic's temp file, its fsync, the check and the rename under
// the folder lock and the folder's fsync.
func BenchmarkFileSaveAcrossPlans(b *testing.B) {
	acrossPlans(b, "saves/s", func(svc *Service, plan planfs.Ref, _ string, k int) error {
		return saveNext(svc, plan, k)
	})
}

// BenchmarkStorageAcrossPlans measures all the durable work of a daemon write in its
// order: the pending record, the file save, the settle. No engine, no HTTP: what is left
// of a write when they cost nothing.
func BenchmarkStorageAcrossPlans(b *testing.B) {
	acrossPlans(b, "writes/s", func(svc *Service, plan planfs.Ref, tag string, k int) error {
		e := pendingEntry(tag, k)
		if err := svc.record(plan.Key, e); err != nil {
			return err
		}
		if err := saveNext(svc, plan, k); err != nil {
			return err
		}
		return settleEntry(svc, plan.Key, e)
	})
}

// BenchmarkServiceWritesAcrossPlans measures whole writes through the service, with
// the engine and the plan's lane but without HTTP: set_status flips one node, each
// write on the base the last one answered.
func BenchmarkServiceWritesAcrossPlans(b *testing.B) {
	eng, err := werkbaum.NewEngine(werkbaum.Options{})
	if err != nil {
		b.Fatal(err)
	}
	acrossPlansWith(b, eng, "writes/s", func(svc *Service, plan planfs.Ref, tag string, k int) error {
		ctx := context.Background()
		snap, err := svc.Read(ctx, plan.Key)
		if err != nil {
			return err
		}
		res, err := svc.Write(ctx, plan.Key, WriteRequest{Tool: "werkbaum_set_status", RequestID: fmt.Sprintf("%s-%d", tag, k),
			ArgsHash: "h", Base: snap.Base, Verb: werkbaum.SetStatus{ID: "auth", Status: []string{"done", "planned"}[k%2]},
			Author: Author{Client: "local", Agent: "bench"}})
		if err == nil && !res.Changed {
			err = fmt.Errorf("write %d changed nothing", k)
		}
		return err
	})
}

// The plan file alternates between these two texts: write k turns text k%2 into the other.
var (
	benchTexts = [2][]byte{[]byte(planText), []byte(planText + "- [ ] one more\n")}
	benchSums  = [2]string{werkbaum.Checksum(benchTexts[0]), werkbaum.Checksum(benchTexts[1])}
)

func saveNext(svc *Service, plan planfs.Ref, k int) error {
	return svc.folders.WriteAtomic(plan, benchTexts[(k+1)%2], benchSums[k%2], svc.maxBytes, svc.lockTimeout, nil)
}

func pendingEntry(tag string, k int) *journalEntry {
	return &journalEntry{RequestID: fmt.Sprintf("%s-%d", tag, k), ArgsHash: "h", Tool: "werkbaum_set_status",
		State: statePending, NewChecksum: benchSums[(k+1)%2], Revision: uint64(k + 2),
		Result: []byte(`{"revision":2}`), At: time.Now()}
}

// settleEntry settles e as a write does, without a document version.
func settleEntry(svc *Service, key string, e *journalEntry) error {
	e.State = StateApplied
	return svc.commit.Do(svc.settleTx(key, e, journal.Meta{Revision: e.Revision, Checksum: e.NewChecksum}, func(Tx) error { return nil }))
}

// acrossPlans runs write (its k-th call on a plan: k from 0, tag unique per phase and
// plan) b.N times on one plan alone, then b.N times on each of four plans at once, all
// four in one folder with one bbolt journal on the real disk, and reports both rates in
// unit and their ratio. A plan's file starts as benchTexts[0] in each phase.
func acrossPlans(b *testing.B, unit string, write func(svc *Service, plan planfs.Ref, tag string, k int) error) {
	acrossPlansWith(b, nil, unit, write)
}

// acrossPlansWith is acrossPlans with the service's engine (nil: none).
func acrossPlansWith(b *testing.B, eng *werkbaum.Engine, unit string, write func(svc *Service, plan planfs.Ref, tag string, k int) error) {
	svc, cfg := serviceWithPlans(b, 4, eng, 0)
	reset := func() {
		for _, p := range cfg {
			if err := os.WriteFile(p.Path, benchTexts[0], 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	phase := func(plans int) float64 {
		reset()
		var wg sync.WaitGroup
		errs := make(chan error, plans)
		start := time.Now()
		for i := range plans {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ref, err := svc.resolve(cfg[i].Key)
				for k := 0; err == nil && k < b.N; k++ {
					err = write(svc, ref, fmt.Sprintf("b-%d-%d", plans, i), k)
				}
				if err != nil {
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
	b.ReportMetric(one, "1plan-"+unit)
	b.ReportMetric(four, "4plans-"+unit)
	b.ReportMetric(four/one, "ratio")
}
