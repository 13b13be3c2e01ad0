package test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHeavyCallsKeepHealthzAnswering: a burst of werkbaum_inspect calls on the big
// example plan (more calls at once than the daemon lets run) is answered completely and
// identically, and /healthz keeps answering 200 while they run. The heavy-call bound
// (api.Options.HeavyCalls) makes the excess calls wait instead of crowding out the cheap
// doors; this test asserts the behaviour, docs/bench-load.md records the latencies.
func TestHeavyCallsKeepHealthzAnswering(t *testing.T) {
	example, err := os.ReadFile(filepath.Join(sharedDir(t), "werkbaum", "examples", "werkbaum.werkbaum"))
	if err != nil {
		t.Skipf("the Werkbaum example plan is not available: %v", err)
	}
	d, _ := startPlanDaemon(t, planFile{Key: "big", Text: string(example)})
	c := newMCPClient(d)
	first := c.ok(t, "werkbaum_inspect", map[string]any{"plan": "big", "detail": "full"}, nil)

	const callers, perCaller = 32, 2
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		wg       sync.WaitGroup
		answered atomic.Int32
		inFlight atomic.Int32 // inspections sent and not yet answered
		probedOK atomic.Int32 // /healthz answers while inspections were in flight
		mu       sync.Mutex
		failures []string
	)
	stopProbe := make(chan struct{})
	began := make(chan struct{}) // closed when the first inspection is sent
	var beganOnce sync.Once
	probes := make(chan [2]int, 1)
	// worst is written by the probe goroutine and read after it reported.
	var worst time.Duration
	// /healthz on its own connection, from the first inspection on, every 5 ms until the
	// burst is over.
	go func() {
		hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
		ok, failed := 0, 0
		select {
		case <-began:
		case <-stopProbe:
		}
		for {
			select {
			case <-stopProbe:
				probes <- [2]int{ok, failed}
				return
			case <-time.After(5 * time.Millisecond):
			}
			t0 := time.Now()
			resp, err := hc.Get(d.URL + "/healthz")
			worst = max(worst, time.Since(t0))
			if err == nil {
				resp.Body.Close()
			}
			if err != nil || resp.StatusCode != http.StatusOK {
				failed++
			} else if inFlight.Load() > 0 {
				ok++ // answered while inspections were still outstanding (counted after the answer)
				probedOK.Add(1)
			}
		}
	}()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each caller sends perCaller inspections, and goes on (up to 20 times as many)
			// until /healthz has been answered during the burst: a burst of cached answers
			// can be over before the first probe returns, which proves nothing either way.
			for i := 0; i < perCaller || probedOK.Load() == 0 && i < 20*perCaller; i++ {
				beganOnce.Do(func() { close(began) })
				inFlight.Add(1)
				a, err := c.call(ctx, "werkbaum_inspect", map[string]any{"plan": "big", "detail": "full"})
				inFlight.Add(-1)
				answered.Add(1)
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case a.IsError:
					failures = append(failures, "tool error: "+a.Text)
				case string(a.Structured) != string(first.Structured):
					failures = append(failures, "an inspection differs from the first one")
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stopProbe)
	p := <-probes
	if len(failures) > 0 {
		t.Fatalf("%d of %d inspections failed, first: %s", len(failures), answered.Load(), failures[0])
	}
	if p[1] > 0 {
		t.Errorf("/healthz failed %d times during the burst", p[1])
	}
	if p[0] == 0 {
		t.Errorf("/healthz was never answered while inspections were outstanding")
	}
	t.Logf("%d inspections answered; /healthz answered %d times meanwhile, the slowest in %s", answered.Load(), p[0], worst)
}
