package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"talkd/internal/config"
)

func sharedClient(id, token string) config.Client {
	return config.Client{ID: id, Token: token, Speak: true, Control: true}
}

// do sends method path with a bearer token and extra headers and returns the status and
// the decoded JSON body.
func (f *mcpFixture) do(method, path, token, body string, headers map[string]string) (int, map[string]any) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// A reload swaps tokens, grants, hosts, origins and the speak defaults at once: the next
// request is admitted under the new settings only.
func TestServerReconfigure(t *testing.T) {
	oldTok, newTok := strings.Repeat("o", 40), strings.Repeat("n", 40)
	f := newMCPFixture(t, func(c *config.Config) {
		c.Clients = []config.Client{sharedClient("ops", oldTok)}
	})
	if st, _ := f.do("GET", "/status", oldTok, "", nil); st != 200 {
		t.Fatalf("old token before the reload: %d", st)
	}
	if st, _ := f.do("GET", "/status", "", "", map[string]string{"Origin": "https://editor.example"}); st != 403 {
		t.Fatalf("unlisted origin before the reload: %d, want 403", st)
	}

	next := &config.Config{Version: 1, Source: "/etc/talk/new.toml"}
	next.Voice.Lang = "de"
	next.Voice.Cleanup.MaxChars = 20
	next.Server.AllowedOrigins = []string{"https://editor.example"}
	next.Server.AllowedHosts = []string{"talk.example"}
	listen := sharedClient("ops2", newTok)
	listen.Control = false
	next.Clients = []config.Client{listen}
	if err := f.srv.Reconfigure(next); err != nil {
		t.Fatal(err)
	}

	if st, body := f.do("GET", "/status", oldTok, "", nil); st != 401 {
		t.Errorf("old token after the reload: %d %v, want 401", st, body)
	}
	st, body := f.do("GET", "/status", newTok, "", map[string]string{"Origin": "https://editor.example"})
	if st != 200 || body["caller"] != "ops2" || body["config"] != "/etc/talk/new.toml" {
		t.Errorf("new token from the newly listed origin: %d %v", st, body)
	}
	if st, _ := f.do("POST", "/mute", newTok, "", nil); st != 403 {
		t.Errorf("the new client has no control grant, /mute answered %d", st)
	}
	req, _ := http.NewRequest("GET", f.http.URL+"/status", nil)
	req.Host = "talk.example"
	req.Header.Set("Authorization", "Bearer "+newTok)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("the newly allowed host: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if st, body := f.do("POST", "/speak", newTok, `{"text":"Ein langer Satz für @jörg. Und noch einer."}`, nil); st != 202 && st != 200 {
		t.Fatalf("speak after the reload: %d %v", st, body)
	}
	got := f.voice.submitted()
	if len(got) != 1 || got[0].Lang != "de" || len([]rune(got[0].Text)) > 20 {
		t.Errorf("announcement after the reload: %+v, want lang de and the text cut at 20 characters", got)
	}
	if f.srv.Reconfigure(nil) == nil {
		t.Error("Reconfigure(nil) was accepted")
	}
}

// POST /reload runs the reloader behind the control grant: 200 with the report, 422
// naming the problem when the configuration is refused.
func TestReloadDoor(t *testing.T) {
	tok, speakOnly := strings.Repeat("c", 40), strings.Repeat("s", 40)
	f := newMCPFixture(t, func(c *config.Config) {
		sp := sharedClient("speaker", speakOnly)
		sp.Control = false
		c.Clients = []config.Client{sharedClient("ops", tok), sp}
	})
	if st, _ := f.do("POST", "/reload", tok, "", nil); st != http.StatusNotImplemented {
		t.Errorf("without a reloader: %d, want 501", st)
	}
	fail := true
	f.srv.SetReloader(func(context.Context) (ReloadReport, error) {
		if fail {
			return ReloadReport{}, errors.New("/etc/talk/config.toml: line 3: rules.queue_size must be positive")
		}
		return ReloadReport{Config: "/etc/talk/config.toml", RestartNeeded: []string{"server.listen"}, Message: "reloaded"}, nil
	})
	if st, _ := f.do("POST", "/reload", speakOnly, "", nil); st != 403 {
		t.Errorf("without the control grant: %d, want 403", st)
	}
	st, body := f.do("POST", "/reload", tok, "{}", nil)
	e, _ := body["error"].(map[string]any)
	if st != 422 || e["code"] != CodeInvalidConfig || !strings.Contains(e["message"].(string), "queue_size must be positive") {
		t.Errorf("refused reload: %d %v", st, body)
	}
	fail = false
	st, body = f.do("POST", "/reload", tok, "", nil)
	if st != 200 || body["config"] != "/etc/talk/config.toml" || len(body["restart_needed"].([]any)) != 1 {
		t.Errorf("reload: %d %v", st, body)
	}
	if st, _ := f.do("POST", "/reload", tok, `{"force":true}`, nil); st != 400 {
		t.Errorf("reload with an unknown field: %d, want 400", st)
	}
}

// Requests racing reloads are admitted under one settings value each: a token is either
// valid (200) or not (401), never anything else (run with -race).
func TestServerReconfigureConcurrent(t *testing.T) {
	tokA, tokB := strings.Repeat("a", 40), strings.Repeat("b", 40)
	cfgA := &config.Config{Version: 1, Clients: []config.Client{sharedClient("a", tokA)}}
	cfgB := &config.Config{Version: 1, Clients: []config.Client{sharedClient("b", tokB)}}
	f := newMCPFixture(t, func(c *config.Config) { *c = *cfgA; c.Server.MaxBodyBytes = 64 << 10 })
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			next := cfgA
			if i%2 == 0 {
				next = cfgB
			}
			_ = f.srv.Reconfigure(next)
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		default:
		}
		tok := tokA
		if i%2 == 0 {
			tok = tokB
		}
		if st, body := f.do("GET", "/status", tok, "", nil); st != 200 && st != 401 {
			t.Fatalf("status %d %v during reloads", st, body)
		}
	}
}
