package plans

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"talkd/internal/config"
	"talkd/internal/werkbaum/plans/planfs"
)

// benchRoot is a root of n small plans in folders of 50, as a notes folder might be.
func benchRoot(b *testing.B, n int) *Service {
	b.Helper()
	root := b.TempDir()
	for i := range n {
		writePlanFile(b, filepath.Join(root, fmt.Sprintf("d%02d", i/50), fmt.Sprintf("p%04d.werkbaum", i)), planText)
	}
	f := newReconfFixture(b, nil, []config.Root{{Name: "notes", Path: root, Lang: "en"}})
	return f.svc
}

// BenchmarkRootWalk1000 is one walk of a 1,000-file root (the listing's bound): what a
// Keys() call costs once its cached listing is older than planfs.RootListTTL.
func BenchmarkRootWalk1000(b *testing.B) {
	svc := benchRoot(b, 1000)
	r, _ := svc.set.Load().Root("notes")
	b.ResetTimer()
	for b.Loop() {
		keys, _, err := planfs.WalkRoot(r)
		if err != nil || len(keys) != 1000 {
			b.Fatal(len(keys), err)
		}
	}
}

// BenchmarkRootKeysCached1000 is Keys() within planfs.RootListTTL (the hot path of plans_list).
func BenchmarkRootKeysCached1000(b *testing.B) {
	svc := benchRoot(b, 1000)
	svc.Keys()
	b.ResetTimer()
	for b.Loop() {
		if len(svc.Keys()) != 1000 {
			b.Fatal("keys")
		}
	}
}

// BenchmarkRootRead is one Read of an unchanged plan below a root (resolve through the
// root, open, stat, revision), against BenchmarkConfiguredRead on the same file.
func BenchmarkRootRead(b *testing.B) {
	svc := benchRoot(b, 1)
	ctx := context.Background()
	for b.Loop() {
		if _, err := svc.Read(ctx, "notes:d00/p0000.werkbaum"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConfiguredRead(b *testing.B) {
	root := b.TempDir()
	path := filepath.Join(root, "p.werkbaum")
	writePlanFile(b, path, planText)
	f := newReconfFixture(b, []config.Plan{{Key: "p", Path: path, Lang: "en"}}, nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := f.svc.Read(ctx, "p"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRootSummarizeAll1000 is what /status and plans_list cost with a root of 1,000
// plans once their summaries are known: one Summarize per listed key.
func BenchmarkRootSummarizeAll1000(b *testing.B) {
	svc := benchRoot(b, 1000)
	ctx := context.Background()
	keys := svc.Keys()
	for _, k := range keys { // the summaries are computed once, in the background
		<-svc.startSummary(k, mustRead(b, svc, k)).done
	}
	b.ResetTimer()
	for b.Loop() {
		for _, k := range svc.Keys() {
			if sum := svc.Summarize(ctx, k); sum.Error != "" || sum.Analysis != "" {
				b.Fatal(sum)
			}
		}
	}
}

func mustRead(b *testing.B, svc *Service, key string) *Snapshot {
	snap, err := svc.Read(context.Background(), key)
	if err != nil {
		b.Fatal(err)
	}
	return snap
}
