package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// loadResult is the part of test/load's JSON results this smoke test checks.
type loadResult struct {
	Target          string         `json:"target"`
	Scenario        string         `json:"scenario"`
	Conc            int            `json:"conc"`
	Seconds         float64        `json:"seconds"`
	Requests        int64          `json:"requests"`
	OK              int64          `json:"ok"`
	Failed          int64          `json:"failed"`
	Kinds           map[string]int `json:"kinds"`
	P99ms           float64        `json:"p99_ms"`
	RSSPeakKB       int64          `json:"rss_peak_kb"`
	HealthzProbes   int            `json:"healthz_probes"`
	HealthzFailures int            `json:"healthz_failures"`
}

type loadReport struct {
	Load    []loadResult `json:"load"`
	Peers   []loadResult `json:"peers"`
	Startup struct {
		Variants []struct {
			Name     string  `json:"name"`
			MedianMs float64 `json:"median_ms"`
		} `json:"variants"`
		Idle []struct {
			Name  string `json:"name"`
			RSSKB int64  `json:"rss_kb"`
		} `json:"idle"`
	} `json:"startup"`
}

// TestLoadGeneratorSmoke runs the load generator (test/load) briefly in every mode, so CI
// proves that it builds, drives talkd and the three peers (go-sdk, mcp-go and the floor,
// which sends talkd's own answer bytes), classifies every answer, and that
// talkd answers all of it correctly: no failed answer anywhere, /healthz answered during
// the runs and never failing, the default queue bound turning overload into 503s, and plan writes applied
// under concurrency. The numbers themselves are recorded in docs/bench-load.md, not
// asserted here.
func TestLoadGeneratorSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts about 20 daemons; skipped with -short")
	}
	talkd, _ := binaries(t)
	dir := t.TempDir()
	for _, pkg := range []string{"./test/load", "./test/peers/gosdk", "./test/peers/mcpgo", "./test/peers/floor"} {
		cmd := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), pkg)
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	plan := filepath.Join(sharedDir(t), "werkbaum", "examples", "werkbaum.werkbaum")
	if _, err := os.Stat(plan); err != nil {
		t.Fatalf("the example plan is needed: %v", err)
	}
	jsonOut := filepath.Join(dir, "results.json")
	cmd := exec.Command(filepath.Join(dir, "load"),
		"-talkd", talkd, "-gosdk", filepath.Join(dir, "gosdk"), "-mcpgo", filepath.Join(dir, "mcpgo"), "-floor", filepath.Join(dir, "floor"),
		"-plan", plan, "-mode", "load,peers,startup",
		"-scenarios", "speak,speak-default,tools/list,tools/call,inspect,write",
		"-conc", "1,4", "-duration", "600ms", "-warmup", "50ms", "-starts", "2", "-idle-wait", "100ms",
		"-json", jsonOut)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("load generator: %v\n%s", err, out)
	}
	t.Logf("load generator output:\n%s", out)
	raw, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var rep loadReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("results are not JSON: %v", err)
	}

	if len(rep.Load) != 6*2 {
		t.Fatalf("load mode: %d results, want 12", len(rep.Load))
	}
	applied, probes := 0, 0
	for _, r := range rep.Load {
		if r.Requests == 0 || r.Failed != 0 {
			t.Errorf("load %s conc %d: %d requests, %d failed (%v)", r.Scenario, r.Conc, r.Requests, r.Failed, r.Kinds)
		}
		probes += r.HealthzProbes
		if r.HealthzFailures != 0 {
			t.Errorf("load %s conc %d: /healthz %d probes, %d failed", r.Scenario, r.Conc, r.HealthzProbes, r.HealthzFailures)
		}
		if r.RSSPeakKB <= 0 {
			t.Errorf("load %s conc %d: the daemon's RSS was not sampled", r.Scenario, r.Conc)
		}
		switch r.Scenario {
		case "speak-default":
			// Queue 100 and a 50 ms voice: whatever was answered beyond what the queue and
			// the voice could take must have been a 503, never an unbounded queue.
			if capacity := 100 + int((r.Seconds+0.1)*1000/50) + 2; r.Kinds["202 queued"] > capacity {
				t.Errorf("speak-default conc %d: %d queued in %.2fs, more than the bound allows (%d): %v", r.Conc, r.Kinds["202 queued"], r.Seconds, capacity, r.Kinds)
			}
			if r.Requests > 400 && r.Kinds["503 queue_full"] == 0 {
				t.Errorf("speak-default conc %d: %d requests and no 503: %v", r.Conc, r.Requests, r.Kinds)
			}
		case "tools/call":
			if r.Kinds["muted"] != int(r.Requests) {
				t.Errorf("tools/call on a muted daemon: %v", r.Kinds)
			}
		case "write":
			applied += r.Kinds["applied"]
			for k := range r.Kinds {
				if k != "applied" && k != "conflict" && k != "read" {
					t.Errorf("write conc %d: unexpected outcome %q: %v", r.Conc, k, r.Kinds)
				}
			}
		}
	}
	if applied == 0 {
		t.Error("no plan write was applied")
	}
	// About six probes fit in each run; a slow start of the probe process may cost one run
	// its probes, but not most of them.
	if probes < 2*len(rep.Load) {
		t.Errorf("/healthz was probed %d times over %d runs", probes, len(rep.Load))
	}

	seen := map[string]int{}
	for _, r := range rep.Peers {
		seen[r.Target]++
		if r.OK == 0 || r.Failed != 0 || r.OK != r.Requests {
			t.Errorf("peers %s %s conc %d: %d requests, %d ok, %d failed (%v)", r.Target, r.Scenario, r.Conc, r.Requests, r.OK, r.Failed, r.Kinds)
		}
		// The floor replays the answer of the muted talkd it was given.
		if r.Target == "floor" && r.Scenario == "tools/call" && r.Kinds["muted"] != int(r.Requests) {
			t.Errorf("the floor's tools/call answers are not talkd's muted answer: %v", r.Kinds)
		}
	}
	for _, name := range []string{"talkd", "go-sdk", "mcp-go", "floor"} {
		if seen[name] != 2*2 {
			t.Errorf("peers: %d runs against %s, want 4", seen[name], name)
		}
	}

	if len(rep.Startup.Variants) != 2 || len(rep.Startup.Idle) != 2 {
		t.Fatalf("startup: %+v", rep.Startup)
	}
	for _, v := range rep.Startup.Variants {
		if v.MedianMs <= 0 {
			t.Errorf("startup %q: median %.1f ms", v.Name, v.MedianMs)
		}
	}
	for _, i := range rep.Startup.Idle {
		if i.RSSKB <= 0 {
			t.Errorf("idle %q: RSS %d kB", i.Name, i.RSSKB)
		}
	}
}
