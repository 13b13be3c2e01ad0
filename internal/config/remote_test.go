package config

import (
	"path/filepath"
	"strings"
	"testing"
)

const testDocID = "3F2C9A1E-0B7D-4C55-9E61-2A8F4D0C7B13"

func TestNormalizeDocumentURL(t *testing.T) {
	want := "https://plans.example.org/api/v1/documents/3f2c9a1e-0b7d-4c55-9e61-2a8f4d0c7b13"
	good := []struct{ name, in, want string }{
		{"plain", "https://plans.example.org/api/v1/documents/" + testDocID, want},
		{"trailing slashes, query, fragment", "https://plans.example.org/api/v1/documents/" + testDocID + "//?x=1#top", want},
		{"upper-case scheme and host", "HTTPS://Plans.Example.ORG/api/v1/documents/" + testDocID, want},
		{"editor link with ?live=", "https://editor.example.org/app/?live=https%3A%2F%2Fplans.example.org%2Fapi%2Fv1%2Fdocuments%2F" + testDocID + "&x=y", want},
		{"http with port", "http://127.0.0.1:8080/api/v1/documents/" + testDocID, "http://127.0.0.1:8080/api/v1/documents/3f2c9a1e-0b7d-4c55-9e61-2a8f4d0c7b13"},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeDocumentURL(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeDocumentURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	bad := []struct{ name, in, msg string }{
		{"ftp", "ftp://plans.example.org/api/v1/documents/" + testDocID, "http or https"},
		{"no host", "https:///api/v1/documents/" + testDocID, "no host"},
		{"user info", "https://me:secret@plans.example.org/api/v1/documents/" + testDocID, "user info"},
		{"no documents path", "https://plans.example.org/api/v1/plans/" + testDocID, "/documents/<uuid>"},
		{"not a uuid", "https://plans.example.org/api/v1/documents/1234", "not a UUID"},
		{"changes endpoint", "https://plans.example.org/api/v1/documents/" + testDocID + "/changes", "not a UUID"},
		{"relative", "plans.example.org/api/v1/documents/" + testDocID, "http or https"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeDocumentURL(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("NormalizeDocumentURL(%q) = %q, %v; want an error containing %q", tt.in, got, err, tt.msg)
			}
		})
	}
}

func TestRemotePlanLoads(t *testing.T) {
	dir, e := home(t)
	f := writeFile(t, filepath.Join(dir, "c.toml"), `version = 1
[[plans]]
key = "shared"
url = "https://editor.example.org/?live=https://Plans.example.org/api/v1/documents/`+testDocID+`/"
token_env = "PLAN_TOKEN"
display_name = "Build bot"
announce = true
`)
	c := mustLoad(t, e.with("TALK_CONFIG", f, "PLAN_TOKEN", "secret-token-value"))
	p, ok := c.Plan("shared")
	if !ok {
		t.Fatal("plan shared missing")
	}
	if p.URL != "https://plans.example.org/api/v1/documents/3f2c9a1e-0b7d-4c55-9e61-2a8f4d0c7b13" || p.Path != "" || !p.Remote() {
		t.Fatalf("plan = %+v", p)
	}
	if p.TokenEnv != "PLAN_TOKEN" || p.DisplayName != "Build bot" || p.Lang != "en" {
		t.Fatalf("plan = %+v", p)
	}
	sum := strings.Join(c.RemoteSummary(), "\n")
	for _, w := range []string{"plan shared", p.URL, "$PLAN_TOKEN", `"Build bot"`} {
		if !strings.Contains(sum, w) {
			t.Errorf("summary %q lacks %q", sum, w)
		}
	}
	if strings.Contains(sum, "secret-token-value") {
		t.Errorf("summary shows the token: %q", sum)
	}
}

func TestRemotePlanErrors(t *testing.T) {
	dir, e := home(t)
	planFile := writeFile(t, filepath.Join(dir, "p.werkbaum"), "- A\n")
	doc := "https://plans.example.org/api/v1/documents/" + testDocID
	tests := []struct {
		name, body string
		want       []string
	}{
		{"path and url", "path = \"" + planFile + "\"\nurl = \"" + doc + "\"", []string{"plans[0]", "both path and url"}},
		{"bad url", "url = \"https://plans.example.org/x\"", []string{"plans[0].url", "/documents/<uuid>"}},
		{"token env unset", "url = \"" + doc + "\"\ntoken_env = \"NOPE_TOKEN\"", []string{"plans[0].token_env", "NOPE_TOKEN", "not set", "plans.example.org"}},
		{"token with newline", "url = \"" + doc + "\"\ntoken_env = \"SPACED\"", []string{"plans[0].token_env", "SPACED", "white space"}},
		{"token_env on a file plan", "path = \"" + planFile + "\"\ntoken_env = \"SPACED\"", []string{"plans[0].token_env", "only a plan on a document server"}},
		{"display_name on a file plan", "path = \"" + planFile + "\"\ndisplay_name = \"x\"", []string{"plans[0].display_name", "only a plan on a document server"}},
		{"display name too long", "url = \"" + doc + "\"\ndisplay_name = \"" + strings.Repeat("ü", 65) + "\"", []string{"plans[0].display_name", "longer than 64"}},
		{"mirror", "url = \"" + doc + "\"\nmirror = true", []string{"plans[0].mirror", "no git repository"}},
		{"neither", "lang = \"en\"", []string{"plans[0].path", "is empty", "url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n[[plans]]\nkey = \"p\"\n"+tt.body+"\n")
			msg := loadErr(t, e.with("TALK_CONFIG", f, "SPACED", "token-with-newline\n"))
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "token-with-newline") {
				t.Errorf("error shows a token: %q", msg)
			}
		})
	}
}

// A url plan's token never sits in the Config, so no printed form can show it.
func TestRemoteTokenNotInConfig(t *testing.T) {
	dir, e := home(t)
	tok := "remote-secret-value-0123456789"
	f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n[[plans]]\nkey = \"p\"\nurl = \"https://h.example/api/v1/documents/"+testDocID+"\"\ntoken_env = \"RT\"\n")
	c := mustLoad(t, e.with("TALK_CONFIG", f, "RT", tok))
	t.Setenv("RT", tok)
	if got := c.Plans[0].BearerToken(); got != tok {
		t.Fatalf("BearerToken = %q", got)
	}
	if s := strings.Join([]string{c.Plans[0].URL, c.Plans[0].TokenEnv}, " "); strings.Contains(s, tok) {
		t.Fatal("token in the config")
	}
}
