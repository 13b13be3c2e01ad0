//go:build linux

package test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// smapsRollupKB reads the resident memory of pid from /proc/PID/smaps_rollup: in total,
// anonymous, and file-backed (the rest: the binary's pages and mapped files).
func smapsRollupKB(tb testing.TB, pid int) (rss, anon, file int) {
	tb.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 {
			continue
		}
		n, _ := strconv.Atoi(fields[1])
		switch fields[0] {
		case "Rss:":
			rss = n
		case "Anonymous:":
			anon = n
		}
	}
	if rss == 0 {
		tb.Fatalf("no Rss in smaps_rollup of %d", pid)
	}
	return rss, anon, rss - anon
}

// BenchmarkIdleMemory is the idle resident memory of talkd with the notation engine warm
// (one plan configured, one tools/list and one werkbaum_inspect answered), 1 s and 5 s
// after the last request: the daemon hands the garbage of its last work back to the
// system after 3 s without requests (cmd/talkd idle.go). Target (issue 9): ≤ 20 MB at 5 s.
// Results and the other variants measured are in docs/bench-memory.md.
//
//	go test ./test -run '^$' -bench IdleMemory -benchtime 3x
func BenchmarkIdleMemory(b *testing.B) {
	plan, err := os.ReadFile(filepath.Join(sharedDir(b), "werkbaum", "examples", "werkbaum.werkbaum"))
	if err != nil {
		b.Skipf("example plan not found (%v); set TALK_SHARED_DIR", err)
	}
	var at1, at5, anon1, anon5, file5 float64
	for range b.N {
		d, _ := startPlanDaemon(b, planFile{Key: "werkbaum", Text: string(plan)})
		c := newMCPClient(d)
		status, _, raw := d.request(b, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
		if status != 200 || !strings.Contains(string(raw), "werkbaum_inspect") {
			b.Fatalf("tools/list: %d %.200s", status, raw)
		}
		if a := c.must(b, "werkbaum_inspect", map[string]any{"plan": "werkbaum", "detail": "full"}); a.IsError {
			b.Fatalf("inspect: %s", a.Text)
		}
		time.Sleep(time.Second)
		rss, anon, _ := smapsRollupKB(b, d.cmd.Process.Pid)
		at1, anon1 = at1+float64(rss), anon1+float64(anon)
		time.Sleep(4 * time.Second)
		rss, anon, file := smapsRollupKB(b, d.cmd.Process.Pid)
		at5, anon5, file5 = at5+float64(rss), anon5+float64(anon), file5+float64(file)
		d.terminate(b)
	}
	n := float64(b.N) * 1024
	b.ReportMetric(at1/n, "MB-rss-1s")
	b.ReportMetric(anon1/n, "MB-anon-1s")
	b.ReportMetric(at5/n, "MB-rss-5s")
	b.ReportMetric(anon5/n, "MB-anon-5s")
	b.ReportMetric(file5/n, "MB-file-5s")
	b.ReportMetric(0, "ns/op")
}
