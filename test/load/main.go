// Command load is talkd's load generator and side-by-side comparison with two peer MCP
// servers. It exists to back the promise that talkd stays fast and responsive with
// numbers anyone can re-run: it builds (or takes) the binaries, starts every server on
// 127.0.0.1 with an isolated HOME, drives it over keep-alive HTTP connections, and prints
// Markdown tables (and, with -json, the raw results).
//
// Modes (-mode, comma-separated):
//
//   - load: talkd alone, a fresh daemon per scenario and concurrency. Scenarios: speak
//     (POST /speak; "speak" with a 10 000 queue, rate limits 0 and a 1 ms fake voice so
//     admission is measured, "speak-default" with the embedded defaults, where the queue
//     bound of 100 must turn overload into 503s), tools/list, tools/call werkbaum_inspect
//     on a copy of the Werkbaum example plan, and concurrent plan writes
//     (werkbaum_apply_ops on the last answered base with a new request id, retried on
//     conflict). Reported: answers/s, p50/p99/max latency, outcomes by kind, the daemon's
//     peak VmRSS during the run and VmHWM after it, and the worst of the GET /healthz
//     probes sent every 100 ms on a separate connection by a child process (this binary
//     with -probe URL), so the generator's own busy goroutines do not delay the probe.
//   - peers: talkd (muted, so a speak call's outcome is immediate), the official Go SDK
//     peer, the mcp-go peer and the floor (a plain net/http handler sending talkd's own
//     answer bytes, test/peers/floor), all running at once; for each concurrency,
//     tools/list and tools/call speak against each in turn (the order reversed every
//     other round), with talkd's ratio to the better MCP peer and to the floor. -peers
//     chooses which of the three run beside talkd.
//   - startup: time from exec of talkd to the first 200 on /healthz (fresh home each
//     start, with and without a plan), and idle RSS with the engine warm (a plan
//     configured and one inspect done).
//
// Every run is bounded by -duration (plus -warmup) and -max-requests; everything listens
// on and connects to loopback only.
//
//	go run ./test/load -mode load,peers,startup -conc 1,8,32,128,256 -duration 3s
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command-line flags.
type options struct {
	Modes     []string
	Scenarios []string
	Conc      []int
	Run       runConfig
	Repeat    int
	Starts    int
	IdleWait  time.Duration
	Talkd     string
	GoSDK     string
	MCPGo     string
	Floor     string
	// Peers are the servers run beside talkd in peers mode: go-sdk, mcp-go, floor.
	Peers []string
	// PeerScenarios are the scenarios of peers mode: tools/list, tools/call.
	PeerScenarios []string
	// PeerPlan configures the example plan in talkd in peers mode, so tools/list lists
	// the plan tools too (the floor is handed that longer answer).
	PeerPlan bool
	Plan     string
	JSON     string
	TalkdEnv []string
	// Pin confines every server to CPU 0 and the generator (and its /healthz probe) to
	// CPU 1, so servers and generator no longer compete for the same core.
	Pin bool
}

// report is everything one invocation measured (the -json output).
type report struct {
	Started time.Time       `json:"started"`
	Load    []Result        `json:"load,omitempty"`
	Peers   []Result        `json:"peers,omitempty"`
	Startup *startupResult  `json:"startup,omitempty"`
	Options json.RawMessage `json:"options"`
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-probe" {
		if err := runProbe(os.Args[2], os.Stdin, os.Stdout); err != nil {
			slog.Error("probe", "err", err)
			os.Exit(1)
		}
		return
	}
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, os.Stdout); err != nil {
		slog.Error("load", "err", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	var o options
	modes := fs.String("mode", "load,peers,startup", "what to run: load, peers, startup (comma-separated)")
	scen := fs.String("scenarios", "speak,speak-default,tools/list,inspect,write", "load scenarios (comma-separated)")
	conc := fs.String("conc", "1,8,32,128,256", "concurrent connections per run (comma-separated)")
	fs.DurationVar(&o.Run.Duration, "duration", 3*time.Second, "measured time per run")
	fs.DurationVar(&o.Run.Warmup, "warmup", 500*time.Millisecond, "unmeasured time before each run")
	fs.Int64Var(&o.Run.MaxRequests, "max-requests", 1_000_000, "upper bound of measured requests per run")
	fs.IntVar(&o.Repeat, "repeat", 1, "peers mode: rounds over all concurrencies (results of every round are reported)")
	fs.IntVar(&o.Starts, "starts", 20, "startup mode: starts per variant")
	fs.DurationVar(&o.IdleWait, "idle-wait", 3*time.Second, "startup mode: idle time before reading RSS")
	fs.StringVar(&o.Talkd, "talkd", "", "talkd binary (default: build ./cmd/talkd)")
	fs.StringVar(&o.GoSDK, "gosdk", "", "go-sdk peer binary (default: build ./test/peers/gosdk)")
	fs.StringVar(&o.MCPGo, "mcpgo", "", "mcp-go peer binary (default: build ./test/peers/mcpgo)")
	fs.StringVar(&o.Floor, "floor", "", "floor peer binary (default: build ./test/peers/floor)")
	peerScen := fs.String("peer-scenarios", "tools/list,tools/call", "peers mode: the scenarios (comma-separated: tools/list, tools/call)")
	fs.BoolVar(&o.PeerPlan, "peer-plan", false, "peers mode: configure the example plan in talkd (tools/list then lists the plan tools)")
	peers := fs.String("peers", peerGoSDK+","+peerMCPGo+","+peerFloor, "peers mode: the servers beside talkd (comma-separated: go-sdk, mcp-go, floor)")
	fs.StringVar(&o.Plan, "plan", "", "Werkbaum plan to configure (default: ../shared/werkbaum/examples/werkbaum.werkbaum beside the module, or $TALK_SHARED_DIR/werkbaum/examples/werkbaum.werkbaum)")
	fs.StringVar(&o.JSON, "json", "", "also write all results as JSON to this file")
	fs.StringVar(&o.Run.Client, "client", clientRaw, "HTTP client of the generator: raw (hand-written HTTP/1.1, pre-built requests) or nethttp (Go's net/http)")
	fs.BoolVar(&o.Pin, "pin", false, "pin every server to CPU 0 and the generator to CPU 1 (taskset; needs 2 CPUs)")
	fs.Func("talkd-env", "KEY=VALUE added to talkd's environment (repeatable), e.g. GOGC=50", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		o.TalkdEnv = append(o.TalkdEnv, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.Modes = splitList(*modes)
	o.Scenarios = splitList(*scen)
	o.Peers = splitList(*peers)
	o.PeerScenarios = splitList(*peerScen)
	for _, s := range o.PeerScenarios {
		if s != "tools/list" && s != "tools/call" {
			return o, fmt.Errorf("unknown peer scenario %q (tools/list, tools/call)", s)
		}
	}
	for _, p := range o.Peers {
		if p != peerGoSDK && p != peerMCPGo && p != peerFloor {
			return o, fmt.Errorf("unknown peer %q (go-sdk, mcp-go, floor)", p)
		}
	}
	for _, m := range o.Modes {
		if m != "load" && m != "peers" && m != "startup" {
			return o, fmt.Errorf("unknown mode %q (load, peers, startup)", m)
		}
	}
	for _, s := range o.Scenarios {
		if _, ok := loadScenarios()[s]; !ok {
			return o, fmt.Errorf("unknown scenario %q", s)
		}
	}
	for _, c := range splitList(*conc) {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 || n > 1024 {
			return o, fmt.Errorf("concurrency %q: want 1..1024", c)
		}
		o.Conc = append(o.Conc, n)
	}
	if o.Run.Client != clientRaw && o.Run.Client != clientNetHTTP {
		return o, fmt.Errorf("unknown client %q (raw, nethttp)", o.Run.Client)
	}
	if o.Run.Duration <= 0 || o.Run.Duration > 10*time.Minute || o.Run.MaxRequests < 1 || o.Repeat < 1 || o.Starts < 1 {
		return o, errors.New("-duration must be in (0, 10m], -max-requests, -repeat and -starts at least 1")
	}
	return o, nil
}

// serverCPUs is the taskset CPU list for servers: "0" when pinning, else "".
func (o options) serverCPUs() string {
	if o.Pin {
		return "0"
	}
	return ""
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// loadScenario pairs a talkd setup with a scenario.
type loadScenario struct {
	Setup    talkdSetup
	Scenario string
}

func loadScenarios() map[string]loadScenario {
	admission := talkdSetup{Name: "queue 10000, rate limits 0, fake voice 1 ms", Config: admissionConfig, Plan: true}
	return map[string]loadScenario{
		"speak":         {admission, "speak"},
		"speak-default": {talkdSetup{Name: "embedded defaults (queue 100, fake voice 50 ms)"}, "speak"},
		"tools/list":    {admission, "tools/list"},
		"tools/call":    {talkdSetup{Name: "muted", Config: admissionConfig, Plan: true, Mute: true}, "tools/call"},
		"inspect":       {admission, "inspect"},
		"write":         {admission, "write"},
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	rep := report{Started: time.Now().UTC()}
	rep.Options, _ = json.Marshal(o)
	need := func(peer, bin string) bool {
		return bin == "" && slices.Contains(o.Modes, "peers") && slices.Contains(o.Peers, peer)
	}
	build := o.Talkd == "" || need(peerGoSDK, o.GoSDK) || need(peerMCPGo, o.MCPGo) || need(peerFloor, o.Floor)
	if build || o.Plan == "" {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		if o.Plan == "" {
			shared := os.Getenv("TALK_SHARED_DIR")
			if shared == "" {
				shared = filepath.Join(filepath.Dir(root), "shared")
			}
			o.Plan = filepath.Join(shared, "werkbaum", "examples", "werkbaum.werkbaum")
		}
		if build {
			dir, err := os.MkdirTemp("", "talkd-load-bin-")
			if err != nil {
				return fmt.Errorf("temp dir: %w", err)
			}
			defer os.RemoveAll(dir)
			b, err := buildBinaries(ctx, root, dir)
			if err != nil {
				return err
			}
			o.Talkd, o.GoSDK, o.MCPGo, o.Floor = cmp(o.Talkd, b.talkd), cmp(o.GoSDK, b.gosdk), cmp(o.MCPGo, b.mcpgo), cmp(o.Floor, b.floor)
		}
	}
	fmt.Fprintf(out, "# talkd load run %s\n\n", rep.Started.Format(time.RFC3339))
	fmt.Fprintf(out, "%s\n\n", machine())
	fmt.Fprintf(out, "generator: client %s", o.Run.Client)
	if o.Pin {
		if err := pinSelf(1); err != nil {
			return err
		}
		fmt.Fprintf(out, "; servers pinned to CPU 0, generator and /healthz probe to CPU 1 (GOMAXPROCS %d)", runtime.GOMAXPROCS(0))
	}
	fmt.Fprint(out, "\n\n")
	for _, mode := range o.Modes {
		var err error
		switch mode {
		case "load":
			rep.Load, err = runLoadMode(ctx, o, out)
		case "peers":
			rep.Peers, err = runPeersMode(ctx, o, out)
		case "startup":
			rep.Startup, err = runStartupMode(ctx, o, out)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
	}
	if o.JSON != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fmt.Errorf("encode results: %w", err)
		}
		if err := os.WriteFile(o.JSON, b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", o.JSON, err)
		}
	}
	return nil
}

func cmp(given, built string) string {
	if given != "" {
		return given
	}
	return built
}

// machine describes where the numbers come from.
func machine() string {
	cpu := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	up, _ := exec.Command("uptime").Output()
	return fmt.Sprintf("machine: %d CPUs (%s); uptime: %s", runtime.NumCPU(), cpu, strings.TrimSpace(string(up)))
}

func runLoadMode(ctx context.Context, o options, out io.Writer) ([]Result, error) {
	all := scenarios()
	var results []Result
	for _, name := range o.Scenarios {
		ls := loadScenarios()[name]
		sc := all[ls.Scenario]
		fmt.Fprintf(out, "## load: %s — talkd with %s\n\n", sc.Name, ls.Setup.Name)
		writeHeader(out)
		for _, conc := range o.Conc {
			setup := ls.Setup
			setup.Env = o.TalkdEnv
			setup.CPUs = o.serverCPUs()
			p, err := startTalkd(ctx, o.Talkd, o.Plan, setup)
			if err != nil {
				return results, err
			}
			r := runLoad(ctx, p.target(true), sc, conc, o.Run)
			p.stop()
			r.Scenario = name
			results = append(results, r)
			writeRow(out, r)
			if ctx.Err() != nil {
				return results, ctx.Err()
			}
		}
		fmt.Fprintln(out)
	}
	return results, nil
}

// The peers beside talkd in peers mode.
const (
	peerGoSDK = "go-sdk"
	peerMCPGo = "mcp-go"
	peerFloor = "floor"
)

func runPeersMode(ctx context.Context, o options, out io.Writer) ([]Result, error) {
	talkd, err := startTalkd(ctx, o.Talkd, o.Plan, talkdSetup{Config: admissionConfig, Plan: o.PeerPlan, Mute: true, Env: o.TalkdEnv, CPUs: o.serverCPUs()})
	if err != nil {
		return nil, err
	}
	defer talkd.stop()
	all := scenarios()
	peerScenarios := o.PeerScenarios
	targets := []target{talkd.target(true)}
	for _, name := range o.Peers {
		var p *proc
		switch name {
		case peerGoSDK:
			p, err = startPeer(ctx, name, o.GoSDK, o.serverCPUs())
		case peerMCPGo:
			p, err = startPeer(ctx, name, o.MCPGo, o.serverCPUs())
		case peerFloor:
			p, err = startFloor(ctx, o.Floor, o.serverCPUs(), talkd.target(false), peerScenarios)
		}
		if err != nil {
			return nil, err
		}
		defer p.stop()
		targets = append(targets, p.target(false))
	}
	var results []Result
	fmt.Fprintf(out, "## peers: the same requests against talkd (muted: speak answers at once) and %s\n\n", strings.Join(o.Peers, ", "))
	for _, name := range peerScenarios {
		sc := all[name]
		for round := 1; round <= o.Repeat; round++ {
			fmt.Fprintf(out, "### %s, round %d\n\n", sc.Name, round)
			writeHeader(out)
			for _, conc := range o.Conc {
				row := map[string]Result{}
				for _, t := range roundOrder(targets, round) {
					r := runLoad(ctx, t, sc, conc, o.Run)
					r.Scenario, r.Round = name, round
					row[t.Name] = r
					results = append(results, r)
					if ctx.Err() != nil {
						return results, ctx.Err()
					}
				}
				for _, t := range targets {
					writeRow(out, row[t.Name])
				}
				tk := row["talkd"]
				if best, ok := betterPeer(row); ok {
					fmt.Fprintf(out, "| **ratio** talkd / %s | %d | %.2f× | | | p99 %.2f× | | CPU %.2f× | | | | | | |\n",
						best.Target, conc, safeDiv(tk.OKRPS, best.OKRPS), safeDiv(tk.P99ms, best.P99ms), safeDiv(tk.CPUusPerReq, best.CPUusPerReq))
				}
				if fl, ok := row[peerFloor]; ok {
					fmt.Fprintf(out, "| **ratio** talkd / floor | %d | %.2f× | | | p99 %.2f× | | CPU %.2f× | | | | | | |\n",
						conc, safeDiv(tk.OKRPS, fl.OKRPS), safeDiv(tk.P99ms, fl.P99ms), safeDiv(tk.CPUusPerReq, fl.CPUusPerReq))
				}
			}
			fmt.Fprintln(out)
		}
		if o.Repeat > 1 {
			writePeerSummary(out, sc.Name, name, o.Conc, targets, results)
		}
	}
	return results, nil
}

// roundOrder is the order the targets run in a round: as given in odd rounds, reversed in
// even ones, so a drift of the machine's load over a round does not favour one target.
func roundOrder(targets []target, round int) []target {
	if round%2 == 1 {
		return targets
	}
	r := slices.Clone(targets)
	slices.Reverse(r)
	return r
}

// betterPeer is the MCP peer (go-sdk or mcp-go) with more OK answers per second in row.
func betterPeer(row map[string]Result) (Result, bool) {
	g, gok := row[peerGoSDK]
	m, mok := row[peerMCPGo]
	switch {
	case gok && mok && m.OKRPS > g.OKRPS, mok && !gok:
		return m, true
	case gok:
		return g, true
	}
	return Result{}, false
}

// startFloor asks talkd each scenario's answer once, writes the bytes into the floor's
// directory and starts the floor answering them (test/peers/floor): the floor then sends
// the very bytes talkd sends.
func startFloor(ctx context.Context, bin, cpus string, talkd target, scens []string) (*proc, error) {
	dir, err := os.MkdirTemp("", "talkd-load-floor-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	// The floor reads its answers before it listens, and startPeerArgs waits for that.
	defer os.RemoveAll(dir)
	c, err := newPoster(clientNetHTTP, talkd.URL)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var args []string
	all := scenarios()
	for i, name := range scens {
		var buf bytes.Buffer
		status, err := c.post(ctx, "/mcp", []byte(all[name].Body), mcpHeaders, &buf)
		if err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("the floor's answer for %s: talkd answered %d: %v", name, status, err)
		}
		file := filepath.Join(dir, "answer-"+strconv.Itoa(i)+".json")
		if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
			return nil, fmt.Errorf("the floor's answer for %s: %w", name, err)
		}
		args = append(args, "-answer", all[name].Method+"="+file)
	}
	return startPeerArgs(ctx, peerFloor, bin, cpus, args...)
}

// writePeerSummary prints, per concurrency, the median over rounds of each target's ok/s
// and p99, talkd's ratios to the better MCP peer, and to the floor: the median and the
// range of the per-round ratios (each round's talkd and floor ran next to each other).
func writePeerSummary(out io.Writer, title, scen string, concs []int, targets []target, results []Result) {
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Name
	}
	hasFloor := slices.Contains(names, peerFloor)
	fmt.Fprintf(out, "### %s, median of the rounds\n\n", title)
	head := "| conc |"
	for _, n := range names {
		head += " " + n + " ok/s |"
	}
	head += " talkd / better peer | p99 ratio | CPU µs/answer " + strings.Join(names, ", ") + " | client CPU µs/answer against " + strings.Join(names, ", ") + " |"
	if hasFloor {
		head += " talkd ÷ floor, median (rounds) | p99 talkd ÷ floor, median (rounds) | CPU per answer floor ÷ talkd, median (rounds) |"
	}
	fmt.Fprintln(out, head)
	fmt.Fprintln(out, "|---:|"+strings.Repeat("---:|", len(names))+"---:|---:|---|---|"+map[bool]string{true: "---|---|---|"}[hasFloor])
	for _, conc := range concs {
		rps := map[string][]float64{}
		p99 := map[string][]float64{}
		cpu := map[string][]float64{}
		client := map[string][]float64{}
		byRound := map[int]map[string]Result{}
		for _, r := range results {
			if r.Scenario == scen && r.Conc == conc {
				rps[r.Target] = append(rps[r.Target], r.OKRPS)
				p99[r.Target] = append(p99[r.Target], r.P99ms)
				cpu[r.Target] = append(cpu[r.Target], r.CPUusPerReq)
				client[r.Target] = append(client[r.Target], r.ClientCPUusPerReq)
				if byRound[r.Round] == nil {
					byRound[r.Round] = map[string]Result{}
				}
				byRound[r.Round][r.Target] = r
			}
		}
		line := fmt.Sprintf("| %d |", conc)
		for _, n := range names {
			line += fmt.Sprintf(" %.0f |", median(rps[n]))
		}
		best := ""
		for _, n := range []string{peerGoSDK, peerMCPGo} {
			if len(rps[n]) > 0 && (best == "" || median(rps[n]) > median(rps[best])) {
				best = n
			}
		}
		if best != "" {
			line += fmt.Sprintf(" %.2f× (%s) | %.2f× |", safeDiv(median(rps["talkd"]), median(rps[best])), best, safeDiv(median(p99["talkd"]), median(p99[best])))
		} else {
			line += " – | – |"
		}
		var cpus, clients []string
		for _, n := range names {
			cpus = append(cpus, fmt.Sprintf("%.0f", median(cpu[n])))
			clients = append(clients, fmt.Sprintf("%.0f", median(client[n])))
		}
		line += " " + strings.Join(cpus, ", ") + " | " + strings.Join(clients, ", ") + " |"
		if hasFloor {
			// The CPU ratio does not depend on how much of the shared machine each run got:
			// it is the share of the floor's rate talkd would reach where the server's
			// CPU is the bound.
			var ratio, p99ratio, cpuRatio []float64
			for _, row := range byRound {
				if t, f := row["talkd"], row[peerFloor]; t.OKRPS > 0 && f.OKRPS > 0 {
					ratio = append(ratio, t.OKRPS/f.OKRPS)
					p99ratio = append(p99ratio, safeDiv(t.P99ms, f.P99ms))
					cpuRatio = append(cpuRatio, safeDiv(f.CPUusPerReq, t.CPUusPerReq))
				}
			}
			line += " " + medianRange(ratio) + " | " + medianRange(p99ratio) + " | " + medianRange(cpuRatio) + " |"
		}
		fmt.Fprintln(out, line)
	}
	fmt.Fprintln(out)
}

// medianRange formats xs as "median (min–max)".
func medianRange(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", median(xs), slices.Min(xs), slices.Max(xs))
}

// median of xs (0 when empty).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func writeHeader(out io.Writer) {
	fmt.Fprintln(out, "| target | conc | ok/s | answers/s | p50 ms | p99 ms | max ms | server CPU µs/answer | client CPU µs/answer | outcomes | peak RSS MB | HWM MB | /healthz worst ms (probes, failed) | load |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|")
}

func writeRow(out io.Writer, r Result) {
	kinds := make([]string, 0, len(r.Kinds))
	for k, n := range r.Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	health := "–"
	if r.HealthzProbes > 0 {
		health = fmt.Sprintf("%.1f (%d, %d)", r.HealthzWorstms, r.HealthzProbes, r.HealthzFailures)
	}
	fmt.Fprintf(out, "| %s | %d | %.0f | %.0f | %.2f | %.2f | %.1f | %.0f | %.0f | %s | %.1f | %.1f | %s | %s |\n",
		r.Target, r.Conc, r.OKRPS, r.RPS, r.P50ms, r.P99ms, r.Maxms, r.CPUusPerReq, r.ClientCPUusPerReq, strings.Join(kinds, ", "),
		float64(r.RSSPeakKB)/1024, float64(r.HWMKB)/1024, health, r.Load)
}

// startupResult is what the startup mode measured.
type startupResult struct {
	Variants []startupVariant `json:"variants"`
	Idle     []idleRSS        `json:"idle"`
}

type startupVariant struct {
	Name     string    `json:"name"`
	Starts   []float64 `json:"starts_ms"`
	MedianMs float64   `json:"median_ms"`
	MinMs    float64   `json:"min_ms"`
	MaxMs    float64   `json:"max_ms"`
	Load     string    `json:"load"`
}

type idleRSS struct {
	Name   string `json:"name"`
	RSSKB  int64  `json:"rss_kb"`
	AnonKB int64  `json:"anon_kb"` // RssAnon: heap, stacks, runtime (private)
	FileKB int64  `json:"file_kb"` // RssFile: pages of the binary that were touched (shared, reclaimable)
	HWMKB  int64  `json:"hwm_kb"`
	Load   string `json:"load"`
}

func runStartupMode(ctx context.Context, o options, out io.Writer) (*startupResult, error) {
	res := &startupResult{}
	fmt.Fprintf(out, "## start-up: exec of talkd to the first 200 on /healthz (%d starts each, fresh HOME)\n\n", o.Starts)
	fmt.Fprintln(out, "| variant | median ms | min ms | max ms | load |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---|")
	for _, s := range []talkdSetup{
		{Name: "embedded defaults, no config file", Env: o.TalkdEnv},
		{Name: "one plan configured (the Werkbaum example)", Config: "version = 1\n", Plan: true, Env: o.TalkdEnv},
	} {
		v := startupVariant{Name: s.Name}
		for range o.Starts {
			d, err := timeStart(ctx, o.Talkd, o.Plan, s)
			if err != nil {
				return res, err
			}
			v.Starts = append(v.Starts, ms(d))
		}
		sorted := slices.Clone(v.Starts)
		slices.Sort(sorted)
		v.MinMs, v.MaxMs = sorted[0], sorted[len(sorted)-1]
		v.MedianMs = median(sorted)
		v.Load = loadavg()
		res.Variants = append(res.Variants, v)
		fmt.Fprintf(out, "| %s | %.1f | %.1f | %.1f | %s |\n", v.Name, v.MedianMs, v.MinMs, v.MaxMs, v.Load)
	}
	fmt.Fprintf(out, "\n## idle memory (VmRSS after %s idle; VmHWM = peak so far)\n\n", o.IdleWait)
	fmt.Fprintln(out, "| state | VmRSS MB | of it RssAnon MB | of it RssFile MB (binary) | VmHWM MB | load |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---|")
	for _, warm := range []bool{false, true} {
		s := talkdSetup{Config: "version = 1\n", Plan: warm, Env: o.TalkdEnv}
		name := "embedded defaults, nothing done"
		if warm {
			name = "engine warm: plan configured, one tools/list and one werkbaum_inspect done"
		}
		r, err := measureIdle(ctx, o, s, warm)
		if err != nil {
			return res, err
		}
		r.Name = name
		res.Idle = append(res.Idle, r)
		fmt.Fprintf(out, "| %s | %.1f | %.1f | %.1f | %.1f | %s |\n", r.Name, float64(r.RSSKB)/1024,
			float64(r.AnonKB)/1024, float64(r.FileKB)/1024, float64(r.HWMKB)/1024, r.Load)
	}
	fmt.Fprintln(out)
	return res, nil
}

// timeStart execs talkd on a known free port and returns the time until /healthz answers 200.
func timeStart(ctx context.Context, bin, planSrc string, s talkdSetup) (time.Duration, error) {
	addr, err := freePort()
	if err != nil {
		return 0, err
	}
	s.Listen = addr
	cmd, home, err := prepareTalkd(bin, planSrc, s)
	if err != nil {
		return 0, err
	}
	p := &proc{Name: "talkd", cmd: cmd, home: home, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(home)
		return 0, fmt.Errorf("start talkd: %w", err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	defer p.stop()
	deadline := t0.Add(20 * time.Second)
	for {
		resp, err := c.Get("http://" + addr + "/healthz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(t0), nil
			}
		}
		select {
		case <-p.done:
			return 0, errors.New("talkd exited during start-up")
		case <-ctx.Done():
			return 0, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return 0, errors.New("talkd did not answer /healthz within 20 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// measureIdle starts talkd, optionally warms the engine, waits, and reads its memory.
func measureIdle(ctx context.Context, o options, s talkdSetup, warm bool) (idleRSS, error) {
	p, err := startTalkd(ctx, o.Talkd, o.Plan, s)
	if err != nil {
		return idleRSS{}, err
	}
	defer p.stop()
	if warm {
		t := p.target(false)
		c, err := newPoster(clientNetHTTP, t.URL)
		if err != nil {
			return idleRSS{}, err
		}
		for _, sc := range []scenario{scenarios()["tools/list"], scenarios()["inspect"]} {
			if out := sc.NewWorker(t, 0)(ctx, c); !out.OK {
				return idleRSS{}, fmt.Errorf("warm-up %s: %s", sc.Name, out.Kind)
			}
		}
		c.close()
	}
	select {
	case <-time.After(o.IdleWait):
	case <-ctx.Done():
		return idleRSS{}, ctx.Err()
	}
	m, err := procStatusKB(p.pid())
	if err != nil {
		return idleRSS{}, err
	}
	return idleRSS{RSSKB: m["VmRSS"], AnonKB: m["RssAnon"], FileKB: m["RssFile"], HWMKB: m["VmHWM"], Load: loadavg()}, nil
}
