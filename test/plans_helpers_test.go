package test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// This file holds the helpers of the plan tests (plans_*_test.go): a daemon configured
// with plan files, and an MCP tools/call client that speaks the 2025 era over plain HTTP,
// usable from goroutines (it returns errors instead of failing the test).

// planBase is a read's base as the tools answer it.
type planBase struct {
	Revision uint64 `json:"revision"`
	Checksum string `json:"checksum"`
}

// toolAnswer is one tools/call result.
type toolAnswer struct {
	IsError    bool
	Text       string          // the text copy in content[0]; of a failure, its message
	Structured json.RawMessage // structuredContent as sent; of a failure, the JSON of its text
	Map        map[string]any  // structuredContent decoded (nil when absent)
}

// decode unmarshals the structured content into v.
func (a *toolAnswer) decode(v any) error {
	if len(a.Structured) == 0 {
		return fmt.Errorf("the answer has no structuredContent (text %q)", a.Text)
	}
	return json.Unmarshal(a.Structured, v)
}

// planText is the plan text of a werkbaum_read answer (its structured text; the text copy
// opens with the base).
func (a *toolAnswer) planText() string {
	s, _ := a.Map["text"].(string)
	return s
}

// writeAnswer is the structured answer of every write tool.
type writeAnswer struct {
	Base     planBase `json:"base"`
	Revision uint64   `json:"revision"`
	Changed  bool     `json:"changed"`
	Replayed bool     `json:"replayed"`
	// WarningCount counts the plan's warnings; Added and Removed are the delta.
	WarningCount int              `json:"warningCount"`
	Added        []map[string]any `json:"added"`
	Removed      []map[string]any `json:"removed"`
}

// readAnswer is werkbaum_read's structured answer.
type readAnswer struct {
	Text  string   `json:"text"`
	Base  planBase `json:"base"`
	Lines int      `json:"lines"`
}

// opAnswer is operation_get's structured answer.
type opAnswer struct {
	RequestID  string          `json:"request_id"`
	State      string          `json:"state"`
	Tool       string          `json:"tool"`
	Revision   uint64          `json:"revision"`
	Result     json.RawMessage `json:"result"`
	Error      string          `json:"error"`
	InProgress bool            `json:"inProgress"`
	Author     *struct {
		Client string `json:"client"`
		Agent  string `json:"agent"`
	} `json:"author"`
}

// mcpClient calls talkd's MCP tools over HTTP. It is safe for concurrent use.
type mcpClient struct {
	url  string
	http *http.Client
	seq  atomic.Int64
	// headers are added to every request (e.g. X-Talk-Agent).
	headers map[string]string
}

func newMCPClient(d *daemon) *mcpClient {
	return &mcpClient{url: d.URL + "/mcp", http: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 16},
	}}
}

// call runs tools/call name(args) and returns the tool result; a JSON-RPC error or a
// transport failure is an error.
func (c *mcpClient) call(ctx context.Context, name string, args any) (*toolAnswer, error) {
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": c.seq.Add(1), "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args},
	})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: read answer: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %s", name, resp.StatusCode, raw)
	}
	var env struct {
		Error  json.RawMessage `json:"error"`
		Result *struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("%s: answer is not JSON-RPC: %w: %s", name, err, raw)
	}
	if len(env.Error) > 0 || env.Result == nil {
		return nil, fmt.Errorf("%s: JSON-RPC error: %s", name, raw)
	}
	a := &toolAnswer{IsError: env.Result.IsError, Structured: env.Result.StructuredContent}
	if len(env.Result.Content) > 0 {
		a.Text = env.Result.Content[0].Text
	}
	if a.IsError {
		// A failure carries no structuredContent; its one text block is a JSON object
		// {error, message, …} (a conflict adds conflict, base, text).
		if len(a.Structured) > 0 || len(env.Result.Content) != 1 {
			return nil, fmt.Errorf("%s: a failure must be one text block without structuredContent: %s", name, raw)
		}
		var detail struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal([]byte(a.Text), &detail); err != nil || detail.Error == "" || detail.Message == "" {
			return nil, fmt.Errorf("%s: a failure's text must be a JSON object with error and message: %q", name, a.Text)
		}
		a.Structured, a.Text = json.RawMessage(a.Text), detail.Message
	}
	if len(a.Structured) > 0 {
		if err := json.Unmarshal(a.Structured, &a.Map); err != nil {
			return nil, fmt.Errorf("%s: structuredContent is not an object: %w", name, err)
		}
	}
	return a, nil
}

// must is call for the test goroutine: a transport or protocol error fails the test.
func (c *mcpClient) must(t testing.TB, name string, args any) *toolAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := c.call(ctx, name, args)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ok calls a tool that must succeed and decodes its structured answer into v (if not nil).
func (c *mcpClient) ok(t testing.TB, name string, args any, v any) *toolAnswer {
	t.Helper()
	a := c.must(t, name, args)
	if a.IsError {
		t.Fatalf("%s(%v) failed: %s %s", name, args, a.Text, a.Structured)
	}
	if v != nil {
		if err := a.decode(v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return a
}

// read returns werkbaum_read of plan.
func (c *mcpClient) read(t testing.TB, plan string) readAnswer {
	t.Helper()
	var r readAnswer
	c.ok(t, "werkbaum_read", map[string]any{"plan": plan, "to": 1 << 30}, &r) // the whole text
	return r
}

// operation returns operation_get of a request id.
func (c *mcpClient) operation(t testing.TB, plan, id string) opAnswer {
	t.Helper()
	var op opAnswer
	c.ok(t, "operation_get", map[string]any{"plan": plan, "request_id": id}, &op)
	return op
}

// writeArgs builds a write tool's arguments: plan, base, request_id plus extra.
func writeArgs(plan string, base planBase, requestID string, extra map[string]any) map[string]any {
	m := map[string]any{"plan": plan, "base": base, "request_id": requestID}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// planFile is one plan the test daemon serves.
type planFile struct {
	Key, Text string
	Mode      os.FileMode // 0 = 0644
}

// startPlanDaemon writes the plan files into a fresh folder, starts talkd with a
// [[plans]] entry for each and returns the daemon and the files' paths by key.
func startPlanDaemon(t testing.TB, files ...planFile) (*daemon, map[string]string) {
	t.Helper()
	return startPlanDaemonEnv(t, nil, files...)
}

// startPlanDaemonEnv is startPlanDaemon with extra environment variables for the daemon.
func startPlanDaemonEnv(t testing.TB, env map[string]string, files ...planFile) (*daemon, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for _, f := range files {
		p := filepath.Join(dir, f.Key+".werkbaum")
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, []byte(f.Text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		paths[f.Key] = p
	}
	d := startDaemon(t, daemonOptions{Config: plansConfig(paths), Env: env})
	return d, paths
}

// plansConfig is a config file serving the given plan files by key.
func plansConfig(paths map[string]string) string {
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("version = 1\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "[[plans]]\nkey = %q\npath = %q\nlang = \"en\"\n", k, paths[k])
	}
	return b.String()
}

// sha is the plan checksum of ARCHITECTURE §5 (SHA-256 hex of the bytes).
func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// readFile reads a file or fails the test.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// structuralTypes are the warnings that block a write (NOTATION.md §23, RFC 001).
var structuralTypes = map[string]bool{"mixedGate": true, "unknownStatus": true, "descStray": true, "duplicateId": true}

// warningTypes lists the types of a warning list.
func warningTypes(ws []map[string]any) []string {
	var out []string
	for _, w := range ws {
		s, _ := w["type"].(string)
		out = append(out, s)
	}
	return out
}

// waitLogged waits up to 30 s for the daemon's log to hold more than after matches of re
// and returns the submatches of the last one; what names it in the failure.
func waitLogged(t testing.TB, d *daemon, what string, re *regexp.Regexp, after int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindAllStringSubmatch(d.logs(), -1); len(m) > after {
			return m[len(m)-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s logged within 30 s after %d; log:\n%s", what, after, d.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
