package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// cliDaemon answers like talkd and records the requests it got.
type cliDaemon struct {
	srv  *httptest.Server
	reqs []cliRequest
}

type cliRequest struct {
	method, path, auth string
	body               map[string]any
}

func newCLIDaemon(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *cliDaemon {
	t.Helper()
	f := &cliDaemon{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := cliRequest{method: r.Method, path: r.URL.RequestURI(), auth: r.Header.Get("Authorization")}
		raw, _ := io.ReadAll(r.Body)
		if len(raw) > 0 {
			_ = json.Unmarshal(raw, &rec.body)
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		f.reqs = append(f.reqs, rec)
		answer(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, envOf(env), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestSplitFlags(t *testing.T) {
	tests := []struct {
		args        []string
		taken, rest []string
	}{
		{[]string{"--url", "http://x", "--agent", "a"}, []string{"--url", "http://x"}, []string{"--agent", "a"}},
		{[]string{"-timeout=2s", "pos", "--url=u"}, []string{"-timeout=2s", "--url=u"}, []string{"pos"}},
		{[]string{"--", "--url", "u"}, nil, []string{"--", "--url", "u"}},
		{[]string{"-", "--urlx", "v"}, nil, []string{"-", "--urlx", "v"}},
	}
	for _, tc := range tests {
		taken, rest := splitFlags(tc.args, "url", "timeout")
		if !slices.Equal(taken, tc.taken) || !slices.Equal(rest, tc.rest) {
			t.Errorf("splitFlags(%q) = %q, %q; want %q, %q", tc.args, taken, rest, tc.taken, tc.rest)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	j := fs.Bool("json", false, "")
	n := fs.Int("n", 0, "")
	pos, err := parseInterspersed(fs, []string{"30m", "--json", "-n", "3", "extra", "--", "--json"})
	if err != nil {
		t.Fatal(err)
	}
	if !*j || *n != 3 || !slices.Equal(pos, []string{"30m", "extra", "--json"}) {
		t.Fatalf("json=%v n=%d pos=%q", *j, *n, pos)
	}
}

// TestURLPrecedence: --url beats TALK_URL beats the config's listen address (with its
// environment overrides); an all-interfaces listen address is reached over loopback.
func TestURLPrecedence(t *testing.T) {
	// Shared mode may listen on all interfaces; without its token the config is invalid.
	shared := filepath.Join(t.TempDir(), "config.toml")
	cfg := "version = 1\n[server]\nlisten = \"0.0.0.0:7078\"\n[[clients]]\nid = \"a\"\ntoken_env = \"TOK\"\nspeak = true\n"
	if err := os.WriteFile(shared, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.toml")
	if err := os.WriteFile(broken, []byte("version = 1\n[server\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		url  string
		want string
	}{
		{"flag", map[string]string{"TALK_URL": "http://b:2"}, "a:1/", "http://a:1"},
		{"env", map[string]string{"TALK_URL": " http://b:2/ "}, "", "http://b:2"},
		{"config env", map[string]string{"TALK_LISTEN": "127.0.0.1:9999", "HOME": t.TempDir()}, "", "http://127.0.0.1:9999"},
		{"all interfaces", map[string]string{"TALK_CONFIG": shared, "TOK": strings.Repeat("t", 40), "HOME": t.TempDir()}, "", "http://127.0.0.1:7078"},
		{"token not in this shell", map[string]string{"TALK_CONFIG": shared, "HOME": t.TempDir()}, "", "http://127.0.0.1:7078"},
		{"broken config", map[string]string{"TALK_CONFIG": broken, "HOME": t.TempDir()}, "", "http://127.0.0.1:7077"},
		{"defaults", map[string]string{"HOME": t.TempDir()}, "", "http://127.0.0.1:7077"},
	}
	for _, tc := range tests {
		a := &app{getenv: envOf(tc.env), stderr: io.Discard, opts: options{url: tc.url}}
		if got := a.client().base; got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestSayRequestAndToken(t *testing.T) {
	f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"queued","id":"a7","position":2,"message":"queued as a7 at position 2"}`+"\n")
	})
	out, errOut, code := runCLI(t, map[string]string{"TALK_URL": f.srv.URL, "TALK_TOKEN": "tok"}, "",
		"say", "-p", "high", "-l", "de", "--now", "--provider", "espeak", "Build", "kaputt")
	if code != exitOK || out != "queued: a7 (position 2)\n" || errOut != "" {
		t.Fatalf("code %d out %q err %q", code, out, errOut)
	}
	got := f.reqs[0]
	want := map[string]any{"text": "Build kaputt", "priority": "high", "lang": "de", "now": true, "provider": "espeak"}
	if got.method != http.MethodPost || got.path != "/speak" || got.auth != "Bearer tok" || !mapsEqual(got.body, want) {
		t.Fatalf("request %+v", got)
	}
	// Flags may follow the words; after "--" everything is text.
	runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "say", "Build kaputt", "-p", "high", "--", "-p", "low")
	if got := f.reqs[1].body; !mapsEqual(got, map[string]any{"text": "Build kaputt -p low", "priority": "high"}) {
		t.Fatalf("interspersed request %v", got)
	}
	f.reqs = f.reqs[:1]
	// Defaults are left to the daemon: no priority, lang, now or provider sent.
	runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "say", "plain")
	if got := f.reqs[1]; !mapsEqual(got.body, map[string]any{"text": "plain"}) || got.auth != "" {
		t.Fatalf("plain request %+v", got)
	}
}

func mapsEqual(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestRefusals: the daemon's error body becomes exit 4 with code, field and message; a
// non-talkd answer is named as such; 503 shows Retry-After.
func TestRefusals(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   []string
	}{
		{"field", 400, nil, `{"error":{"code":"invalid_field","message":"field \"text\" has 1001 characters; the limit is 1000","field":"text"}}`,
			[]string{"HTTP 400", "invalid_field", "field text", "limit is 1000"}},
		{"full", 503, map[string]string{"Retry-After": "5"}, `{"error":{"code":"queue_full","message":"the announcement queue is full"}}`,
			[]string{"queue_full", "retry after 5s"}},
		{"unauthorized", 401, nil, `{"error":{"code":"unauthorized","message":"a bearer token is required"}}`,
			[]string{"unauthorized", "set TALK_TOKEN"}},
		{"not talkd", 404, nil, `<html>nope</html>`, []string{"HTTP 404", "is this talkd?", "<html>nope</html>"}},
	}
	for _, tc := range tests {
		f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tc.header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		})
		out, errOut, code := runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "say", "x")
		if code != exitRefused || out != "" {
			t.Errorf("%s: code %d out %q", tc.name, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr %q lacks %q", tc.name, errOut, w)
			}
		}
	}
}

func TestSayStdinLimits(t *testing.T) {
	f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"queued","id":"a1","position":1,"message":""}`)
	})
	env := map[string]string{"TALK_URL": f.srv.URL}
	if _, _, code := runCLI(t, env, " \n\t ", "say"); code != exitUsage {
		t.Fatalf("blank stdin: %d", code)
	}
	if len(f.reqs) != 0 {
		t.Fatalf("usage errors sent requests: %+v", f.reqs)
	}
}

// TestReadTail: a long input keeps its last bytes, starting at a whole UTF-8 character,
// whatever its length.
func TestReadTail(t *testing.T) {
	in := strings.Repeat("kompiliere Müller.c\n", 20000) + "make: *** Fehler 1"
	got, skipped, err := readTail(strings.NewReader(in), 1000)
	if err != nil || len(got) > 1000 || !strings.HasSuffix(string(got), "make: *** Fehler 1") || !utf8.Valid(got) {
		t.Fatalf("readTail: %d bytes, %v, valid %v", len(got), err, utf8.Valid(got))
	}
	if int(skipped)+len(got) != len(in) {
		t.Errorf("skipped %d + kept %d != %d", skipped, len(got), len(in))
	}
}

func TestMuteRequests(t *testing.T) {
	f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"muted":true,"message":"muted until unmuted"}`)
	})
	env := map[string]string{"TALK_URL": f.srv.URL}
	for _, tc := range []struct {
		args []string
		body map[string]any
	}{
		{[]string{"mute"}, nil},
		{[]string{"mute", "1h30m"}, map[string]any{"for": "1h30m"}},
		{[]string{"mute", "9:30"}, map[string]any{"until": "9:30"}},
		{[]string{"mute", "--until", "14:00"}, map[string]any{"until": "14:00"}},
	} {
		f.reqs = nil
		if _, errOut, code := runCLI(t, env, "", tc.args...); code != exitOK {
			t.Fatalf("%v: %d %s", tc.args, code, errOut)
		}
		if got := f.reqs[0]; got.path != "/mute" || !mapsEqual(got.body, tc.body) {
			t.Errorf("%v sent %+v, want body %v", tc.args, got, tc.body)
		}
	}
}

// TestVoicesFallsBackToStatus: without a /voices endpoint, voices shows /status's voice.
func TestVoicesFallsBackToStatus(t *testing.T) {
	f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/voices" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":"not_found","message":"no such endpoint: /voices"}}`)
			return
		}
		io.WriteString(w, `{"version":"1","voice":{"provider":"espeak","provider_reason":"auto: espeak-ng found","sink":"null","providers":["espeak","fake"]}}`)
	})
	out, _, code := runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "voices")
	if code != exitOK || !strings.Contains(out, "espeak (auto: espeak-ng found)") || !strings.Contains(out, "espeak, fake") {
		t.Fatalf("voices: %d %q", code, out)
	}
	out, _, _ = runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "voices", "--json")
	if !strings.HasPrefix(out, `{"provider":"espeak"`) {
		t.Fatalf("voices --json: %q", out)
	}
}

// TestSetStatusRetriesOnConflict: a conflict answer carries the current base; set-status
// applies its verb again on that base with a new request id, and reports the result.
func TestSetStatusRetriesOnConflict(t *testing.T) {
	oldSum, newSum := strings.Repeat("a", 64), strings.Repeat("b", 64)
	var calls []map[string]any
	f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("MCP-Protocol-Version") != mcpProtocolVersion {
			t.Errorf("MCP-Protocol-Version %q", r.Header.Get("MCP-Protocol-Version"))
		}
		var req struct {
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &req)
		var result string
		switch req.Params.Name {
		case "werkbaum_read":
			result = `{"content":[{"type":"text","text":"x"}],"structuredContent":{"text":"x","base":{"revision":1,"checksum":"` + oldSum + `"},"lines":1}}`
		case "werkbaum_set_status":
			calls = append(calls, req.Params.Arguments)
			if len(calls) == 1 {
				result = `{"isError":true,"content":[{"type":"text","text":"conflict"}],"structuredContent":{"conflict":true,"base":{"revision":2,"checksum":"` + newSum + `"},"text":"y"}}`
			} else {
				result = `{"content":[{"type":"text","text":"applied"}],"structuredContent":{"base":{"revision":3,"checksum":"` + newSum + `"},"revision":3,"changed":true,"warningCount":0,"added":[{"type":"unknownStatus","line":4,"text":"odd"}],"removed":[]}}`
			}
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":`+result+`}`)
	})
	out, errOut, code := runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "plan", "set-status", "p", "#n1", "done")
	if code != exitOK || !strings.Contains(out, "#n1 set to done, now revision 3") || !strings.Contains(out, "line 4") || !strings.Contains(errOut, "changed meanwhile") {
		t.Fatalf("code %d\nout %s\nerr %s", code, out, errOut)
	}
	if len(calls) != 2 {
		t.Fatalf("%d set_status calls, want 2", len(calls))
	}
	first, second := calls[0], calls[1]
	if first["base"].(map[string]any)["checksum"] != oldSum || second["base"].(map[string]any)["checksum"] != newSum {
		t.Errorf("bases %v then %v", first["base"], second["base"])
	}
	if first["request_id"] == second["request_id"] || first["id"] != "n1" || second["status"] != "done" {
		t.Errorf("calls %v, %v", first, second)
	}
}

// TestPlanToolsOfADaemonWithoutPlans: an unknown-tool refusal is explained as "no plan is
// configured" only when /status lists no plan; a daemon whose /status lists plans keeps
// its own refusal (a plan tool it lacks is its error to report).
func TestPlanToolsOfADaemonWithoutPlans(t *testing.T) {
	for _, tc := range []struct {
		name, plans string
		wantNone    bool
	}{
		{"no plans", `[]`, true},
		{"plans listed", `[{"key":"werkbaum"}]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/status" {
					io.WriteString(w, `{"version":"x","plans":`+tc.plans+`}`)
					return
				}
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: unknown tool \"werkbaum_read\""}}`)
			})
			_, errOut, code := runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "plan", "show", "werkbaum")
			if code != exitRefused {
				t.Fatalf("exit %d, want %d (stderr %q)", code, exitRefused, errOut)
			}
			if none := strings.Contains(errOut, "none is configured"); none != tc.wantNone || none == strings.Contains(errOut, "unknown tool") {
				t.Errorf("stderr %q: want the no-plans explanation %v", errOut, tc.wantNone)
			}
		})
	}
}

// TestMCPErrorsAreRefusals: a JSON-RPC error answer of /mcp exits 4 with its code.
func TestMCPErrorsAreRefusals(t *testing.T) {
	f := newCLIDaemon(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool plans_list"}}`)
	})
	_, errOut, code := runCLI(t, map[string]string{"TALK_URL": f.srv.URL}, "", "plans")
	if code != exitRefused || !strings.Contains(errOut, "-32602") || !strings.Contains(errOut, "unknown tool") {
		t.Fatalf("code %d err %q", code, errOut)
	}
}
