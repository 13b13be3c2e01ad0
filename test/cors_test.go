package test

import (
	"net/http"
	"strings"
	"testing"
)

// TestCORSDoor covers every case of ARCHITECTURE §3.6.
func TestCORSDoor(t *testing.T) {
	t.Parallel()
	listed := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_ALLOWED_ORIGINS": " https://dash.example , http://localhost:5173"}})
	star := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_ALLOWED_ORIGINS": "*"}})
	closed := startDaemon(t, daemonOptions{})

	preflight := map[string]string{
		"Origin":                         "https://dash.example",
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "content-type",
	}
	cases := []struct {
		name        string
		d           *daemon
		method      string
		path        string
		headers     map[string]string
		wantStatus  int
		wantOrigin  string // "" = no Access-Control-Allow-Origin
		wantPrivate bool
		wantVary    bool
	}{
		{"preflight listed", listed, "OPTIONS", "/speak", preflight, 204, "https://dash.example", false, true},
		{"preflight listed private network", listed, "OPTIONS", "/speak",
			merge(preflight, map[string]string{"Access-Control-Request-Private-Network": "true"}), 204, "https://dash.example", true, true},
		{"preflight unlisted", listed, "OPTIONS", "/speak", merge(preflight, map[string]string{"Origin": "https://evil.example"}), 204, "", false, true},
		{"preflight star", star, "OPTIONS", "/speak", preflight, 204, "*", false, true},
		{"preflight closed", closed, "OPTIONS", "/speak", preflight, 204, "", false, true},
		{"post listed", listed, "POST", "/speak", map[string]string{"Origin": "http://localhost:5173"}, 202, "http://localhost:5173", false, true},
		{"post unlisted", listed, "POST", "/speak", map[string]string{"Origin": "https://evil.example"}, 403, "", false, true},
		{"post star", star, "POST", "/speak", map[string]string{"Origin": "https://any.example"}, 202, "*", false, true},
		{"post closed", closed, "POST", "/speak", map[string]string{"Origin": "https://dash.example"}, 403, "", false, true},
		{"post without origin", listed, "POST", "/speak", nil, 202, "", false, true},
		{"options elsewhere", listed, "OPTIONS", "/status", preflight, 405, "", false, false},
		{"options on mcp", star, "OPTIONS", "/mcp", preflight, 405, "", false, false},
		{"status from listed origin", listed, "GET", "/status", map[string]string{"Origin": "https://dash.example"}, 200, "", false, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := ""
			if tc.method == "POST" {
				body = `{"text":"cors ` + string(rune('a'+i)) + `","now":true}`
			}
			status, hdr, raw := tc.d.request(t, tc.method, tc.path, body, tc.headers)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", status, tc.wantStatus, raw)
			}
			if got := hdr.Get("Access-Control-Allow-Origin"); got != tc.wantOrigin {
				t.Errorf("Allow-Origin %q, want %q", got, tc.wantOrigin)
			}
			if tc.wantOrigin != "" && tc.method == "OPTIONS" {
				if hdr.Get("Access-Control-Allow-Methods") != "POST, OPTIONS" ||
					hdr.Get("Access-Control-Allow-Headers") != "Content-Type, Authorization" ||
					hdr.Get("Access-Control-Max-Age") != "600" {
					t.Errorf("preflight headers %v", hdr)
				}
			}
			if tc.wantOrigin == "" {
				for k := range hdr {
					if len(k) > 14 && k[:14] == "Access-Control" {
						t.Errorf("unexpected CORS header %s", k)
					}
				}
			}
			if got := hdr.Get("Access-Control-Allow-Private-Network") == "true"; got != tc.wantPrivate {
				t.Errorf("private network header %v, want %v", got, tc.wantPrivate)
			}
			if got := hdr.Get("Vary") == "Origin"; got != tc.wantVary {
				t.Errorf("Vary: Origin %v, want %v (%v)", got, tc.wantVary, hdr)
			}
			if status == http.StatusMethodNotAllowed && hdr.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
	_, st := listed.getJSON(t, "/status")
	if cors, _ := st["cors"].([]any); len(cors) != 2 {
		t.Errorf("status cors %v", st["cors"])
	}
	_, st = closed.getJSON(t, "/status")
	if cors, ok := st["cors"].([]any); !ok || len(cors) != 0 {
		t.Errorf("closed status cors %v, want []", st["cors"])
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// TestForeignOriginCannotControl: a page on an unlisted origin can send a simple POST
// without a preflight; the control doors refuse it instead of muting or stopping.
func TestForeignOriginCannotControl(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemonOptions{Env: map[string]string{"TALK_ALLOWED_ORIGINS": "https://dash.example"}})
	for _, path := range []string{"/mute", "/unmute", "/stop"} {
		status, _, raw := d.request(t, http.MethodPost, path, "", map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"})
		if status != http.StatusForbidden || !strings.Contains(string(raw), "origin_not_allowed") {
			t.Errorf("%s from a foreign origin: %d %s", path, status, raw)
		}
	}
	_, st := d.getJSON(t, "/status")
	if m, _ := st["mute"].(map[string]any); m["muted"] != false {
		t.Fatalf("a foreign page muted talkd: %v", st["mute"])
	}
	// The daemon's own origin and listed pages still may.
	if status, _, raw := d.request(t, http.MethodPost, "/mute", `{"for":"1m"}`, map[string]string{"Origin": d.URL}); status != http.StatusOK {
		t.Errorf("own origin: %d %s", status, raw)
	}
	if status, _, raw := d.request(t, http.MethodPost, "/unmute", "", map[string]string{"Origin": "https://dash.example"}); status != http.StatusOK {
		t.Errorf("listed origin: %d %s", status, raw)
	}
}
