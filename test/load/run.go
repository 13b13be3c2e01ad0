package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// target is one server under load: its base URL and, when known, its process id (for RSS).
type target struct {
	Name    string
	URL     string // http://127.0.0.1:PORT
	PID     int
	Healthz bool // probe GET /healthz during the run
}

// outcome classifies one answer. OK means the server answered as it should for this
// scenario (for an overloaded queue a 503 is a correct answer but not OK: it is counted
// under its own kind); Failed marks answers that are wrong whatever the load (transport
// errors, unexpected status codes, malformed bodies).
type outcome struct {
	Kind   string
	OK     bool
	Failed bool
}

// worker performs one request of a scenario with p and classifies the answer. A worker is
// used by one goroutine only, so it may keep state (a plan base, a sequence number).
type worker func(ctx context.Context, p poster) outcome

// scenario builds one worker per connection.
type scenario struct {
	Name      string
	NewWorker func(t target, id int) worker
	// Method and Body are the JSON-RPC method and the one request body of a scenario
	// that sends the same request every time (the floor answers by method); else "".
	Method, Body string
}

// runConfig bounds one run: it ends after Duration (plus Warmup) or MaxRequests measured
// requests, whichever comes first.
type runConfig struct {
	Duration    time.Duration
	Warmup      time.Duration
	MaxRequests int64
	// Client is the HTTP client kind: "raw" (default) or "nethttp".
	Client string
}

// Result is one run of one scenario at one concurrency against one target.
type Result struct {
	Target          string         `json:"target"`
	Scenario        string         `json:"scenario"`
	Round           int            `json:"round,omitempty"` // peers mode: the round (1, 2, …)
	Conc            int            `json:"conc"`
	Seconds         float64        `json:"seconds"`
	Requests        int64          `json:"requests"`
	OK              int64          `json:"ok"`
	Failed          int64          `json:"failed"`
	Kinds           map[string]int `json:"kinds"`
	RPS             float64        `json:"rps"`    // answers per second (all kinds)
	OKRPS           float64        `json:"ok_rps"` // OK answers per second
	P50ms           float64        `json:"p50_ms"`
	P99ms           float64        `json:"p99_ms"`
	Maxms           float64        `json:"max_ms"`
	RSSPeakKB       int64          `json:"rss_peak_kb"` // highest VmRSS sampled during the run
	HWMKB           int64          `json:"hwm_kb"`      // VmHWM at the end of the run
	HealthzProbes   int            `json:"healthz_probes"`
	HealthzFailures int            `json:"healthz_failures"`
	HealthzWorstms  float64        `json:"healthz_worst_ms"`
	Load            string         `json:"load"` // /proc/loadavg when the run ended
	// CPUusPerReq is the server's CPU time (user + system, from /proc/PID/stat) spent in
	// the measured window per answer: unlike answers/s it does not depend on how much of
	// the shared machine the client and other processes took.
	CPUusPerReq float64 `json:"cpu_us_per_req"`
	// ClientCPUusPerReq is the generator's own CPU time per answer in the same window: on a
	// shared machine it bounds the reachable rate as much as the server's.
	ClientCPUusPerReq float64 `json:"client_cpu_us_per_req"`
}

// sample is one measured request.
type sample struct {
	lat time.Duration
	out outcome
}

// runLoad drives target with conc concurrent keep-alive connections.
func runLoad(ctx context.Context, t target, sc scenario, conc int, cfg runConfig) Result {
	start := time.Now()
	end := start.Add(cfg.Warmup + cfg.Duration)
	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	measureFrom := start.Add(cfg.Warmup)
	// over reports the end of the run. The deadline is checked on the clock as well:
	// the raw client's connections carry it, so they fail with a timeout at the deadline,
	// before the context's timer has fired (late under load); without the clock check a
	// worker would count thousands of such instant failures in that gap.
	over := func() bool { return ctx.Err() != nil || !time.Now().Before(end) }

	var (
		measured atomic.Int64
		wg       sync.WaitGroup
		samples  = make([][]sample, conc)
	)
	for i := range conc {
		w := sc.NewWorker(t, i)
		p, err := newPoster(cfg.Client, t.URL)
		if err != nil {
			samples[i] = []sample{{out: outcome{Kind: err.Error(), Failed: true}}}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.close()
			buf := make([]sample, 0, 1024)
			for !over() {
				t0 := time.Now()
				out := w(ctx, p)
				lat := time.Since(t0)
				if out.Failed && over() {
					break // cut off by the end of the run, not a server failure
				}
				if t0.Before(measureFrom) {
					continue
				}
				if measured.Add(1) > cfg.MaxRequests {
					cancel()
					break
				}
				buf = append(buf, sample{lat, out})
			}
			samples[i] = buf
		}()
	}

	var side sync.WaitGroup
	sideCtx, sideCancel := context.WithCancel(context.Background())
	var rssPeak atomic.Int64
	if t.PID > 0 {
		side.Add(1)
		go func() {
			defer side.Done()
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				if rss, _, err := procMemKB(t.PID); err == nil && rss > rssPeak.Load() {
					rssPeak.Store(rss)
				}
				select {
				case <-sideCtx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	var probes, probeFails int
	var worst time.Duration
	if t.Healthz {
		side.Add(1)
		go func() {
			defer side.Done()
			probes, probeFails, worst = probeInChild(sideCtx, t.URL)
		}()
	}

	var cpu0, self0 time.Duration
	select {
	case <-time.After(time.Until(measureFrom)):
	case <-ctx.Done():
	}
	if t.PID > 0 {
		cpu0, _ = procCPU(t.PID)
	}
	self0, _ = procCPU(os.Getpid())
	wg.Wait()
	elapsed := time.Since(start) - cfg.Warmup
	var cpu, self time.Duration
	if t.PID > 0 {
		if c1, err := procCPU(t.PID); err == nil {
			cpu = c1 - cpu0
		}
	}
	if s1, err := procCPU(os.Getpid()); err == nil {
		self = s1 - self0
	}
	sideCancel()
	side.Wait()

	r := Result{Target: t.Name, Scenario: sc.Name, Conc: conc, Seconds: elapsed.Seconds(), Kinds: map[string]int{},
		RSSPeakKB: rssPeak.Load(), HealthzProbes: probes, HealthzFailures: probeFails,
		HealthzWorstms: ms(worst), Load: loadavg()}
	var lats []time.Duration
	for _, ws := range samples {
		for _, s := range ws {
			r.Requests++
			r.Kinds[s.out.Kind]++
			if s.out.OK {
				r.OK++
			}
			if s.out.Failed {
				r.Failed++
			}
			lats = append(lats, s.lat)
		}
	}
	if elapsed > 0 {
		r.RPS = float64(r.Requests) / elapsed.Seconds()
		r.OKRPS = float64(r.OK) / elapsed.Seconds()
	}
	if r.Requests > 0 {
		r.CPUusPerReq = float64(cpu.Microseconds()) / float64(r.Requests)
		r.ClientCPUusPerReq = float64(self.Microseconds()) / float64(r.Requests)
	}
	slices.Sort(lats)
	if n := len(lats); n > 0 {
		r.P50ms = ms(lats[(n-1)*50/100])
		r.P99ms = ms(lats[(n-1)*99/100])
		r.Maxms = ms(lats[n-1])
	}
	if t.PID > 0 {
		if _, hwm, err := procMemKB(t.PID); err == nil {
			r.HWMKB = hwm
		}
	}
	return r
}

// probeHealthz sends GET /healthz every 100 ms on its own connection until ctx ends and
// returns the number of probes, how many failed, and the slowest answer.
func probeHealthz(ctx context.Context, base string) (probes, failures int, worst time.Duration) {
	tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return probes, failures, worst
		case <-tick.C:
		}
		t0 := time.Now()
		resp, err := c.Get(base + "/healthz")
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
		}
		d := time.Since(t0)
		probes++
		if err != nil {
			failures++
		}
		worst = max(worst, d)
	}
}

// probeResult is what a probe child reports on stdout.
type probeResult struct {
	Probes   int   `json:"probes"`
	Failures int   `json:"failures"`
	WorstUS  int64 `json:"worst_us"`
}

// probeInChild runs probeHealthz in a child process (this binary with -probe URL) so the
// probe's latency is not the generator's own scheduling delay under hundreds of busy
// goroutines; it falls back to probing in-process when the child cannot run.
func probeInChild(ctx context.Context, base string) (probes, failures int, worst time.Duration) {
	exe, err := os.Executable()
	if err != nil {
		return probeHealthz(ctx, base)
	}
	cmd := exec.Command(exe, "-probe", base)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return probeHealthz(ctx, base)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		return probeHealthz(ctx, base)
	}
	<-ctx.Done()
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return 0, 1, 0
	}
	var r probeResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return 0, 1, 0
	}
	return r.Probes, r.Failures, time.Duration(r.WorstUS) * time.Microsecond
}

// runProbe is the -probe mode: probe base until stdin closes, then print a probeResult.
func runProbe(base string, stdin io.Reader, stdout io.Writer) error {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		cancel()
	}()
	p, f, w := probeHealthz(ctx, base)
	return json.NewEncoder(stdout).Encode(probeResult{Probes: p, Failures: f, WorstUS: w.Microseconds()})
}

// procMemKB reads VmRSS and VmHWM (kB) of a process from /proc.
func procMemKB(pid int) (rss, hwm int64, err error) {
	m, err := procStatusKB(pid)
	return m["VmRSS"], m["VmHWM"], err
}

// procStatusKB reads the kB fields of /proc/PID/status (VmRSS, VmHWM, RssAnon, RssFile …).
func procStatusKB(pid int) (map[string]int64, error) {
	m := map[string]int64{}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return m, fmt.Errorf("read status of %d: %w", pid, err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			m[k] = n
		}
	}
	return m, nil
}

// procCPU is the user + system CPU time a process has used so far (/proc/PID/stat fields
// 14 and 15, in clock ticks of 10 ms on Linux).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read stat of %d: %w", pid, err)
	}
	// The command name (field 2) may contain spaces; fields are counted after its ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat of %d: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("stat of %d: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("stat of %d: bad times %q %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// loadavg is the first three fields of /proc/loadavg ("" when unreadable).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
