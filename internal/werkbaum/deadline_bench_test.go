package werkbaum

import (
	"context"
	"errors"
	"testing"
	"time"

	"talkd/internal/werkbaum/gen"
)

// BenchmarkDeadlineOverrun measures how far past its deadline a call returns (issue 33:
// target ≤ 100 ms): an analysis of the 40,000-node generated plan (about 30 MB of JSON) is
// timed once without a deadline, then run with deadlines at fractions of that time, so that
// the interrupt lands in every phase including the answer's encoding. Reports the full
// call's time, its answer's size and the largest overrun seen:
//
//	go test -run '^$' -bench DeadlineOverrun -benchtime 1x ./internal/werkbaum
func BenchmarkDeadlineOverrun(b *testing.B) {
	text := gen.Plan(40000, 1)
	e, err := NewEngine(Options{Runtimes: 1, CacheEntries: -1, Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	opts := AnalyzeOptions{File: "p40000.werkbaum"}
	if _, err := e.Analyze(ctx, text, opts); err != nil { // warm the runtime
		b.Fatal(err)
	}
	var worst, full time.Duration
	var size int
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out, err := e.Analyze(ctx, text, opts)
		if err != nil {
			b.Fatal(err)
		}
		full, size = time.Since(start), len(out)
		for _, f := range []float64{0.3, 0.6, 0.8, 0.9, 0.95, 0.97, 0.99} {
			limit := time.Duration(f * float64(full))
			cctx, cancel := context.WithTimeout(ctx, limit)
			start := time.Now()
			_, err := e.Analyze(cctx, text, opts)
			took := time.Since(start)
			cancel()
			if err == nil {
				continue // finished inside this deadline: no overrun to see
			}
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
				b.Fatal(err)
			}
			if over := took - limit; over > worst {
				worst = over
			}
			if _, err := e.Analyze(ctx, smallPlan, opts); err != nil { // a fresh runtime, outside the timing
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(full.Milliseconds()), "full-ms")
	b.ReportMetric(float64(size)/1e6, "answer-MB")
	b.ReportMetric(float64(worst.Milliseconds()), "max-overrun-ms")
}

// TestJoinPiecesStopsOnceInterrupted: the host's join of a large answer stops between pieces
// once the call's deadline fired (the part of an answer the script's interrupt cannot reach),
// and joins the pieces unchanged otherwise.
func TestJoinPiecesStopsOnceInterrupted(t *testing.T) {
	_, rt := scriptFuncs(t, "", "call")
	v, err := rt.vm.RunString(`['{"a":', '[1,2', ',3]', '}']`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rt.joinPieces(v)
	if err != nil || string(out) != `{"a":[1,2,3]}` {
		t.Fatalf("joinPieces = %q, %v; want the joined pieces", out, err)
	}
	cause := error(ErrTimeout)
	rt.stopped.Store(&cause)
	defer rt.stopped.Store(nil)
	out, err = rt.joinPieces(v)
	var halted *haltedError
	if !errors.As(err, &halted) || !errors.Is(halted.cause, ErrTimeout) || out != nil {
		t.Fatalf("joinPieces after the deadline = %q, %v; want a halt caused by the timeout", out, err)
	}
}
