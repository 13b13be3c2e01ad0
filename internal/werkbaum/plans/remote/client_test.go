package remote

import (
	"net/url"
	"strings"
	"testing"
)

// TestSameOrigin: the origin of the redirect policy is scheme, host and port, with the
// scheme's default port made explicit; anything else is another origin.
func TestSameOrigin(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b/c", true},
		{"https://docs.example/a", "https://docs.example:443/b", true},
		{"HTTP://Docs.Example/a", "http://docs.example:80/b", true},
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:8081/a", false},
		{"http://docs.example/a", "https://docs.example/a", false},
		{"http://docs.example/a", "http://evil.example/a", false},
		{"http://docs.example/a", "http://docs.example.evil.example/a", false},
	}
	for _, tc := range cases {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := sameOrigin(a, b); got != tc.same {
			t.Errorf("sameOrigin(%s, %s) = %t, want %t", tc.a, tc.b, got, tc.same)
		}
	}
}

// TestDisplayName: the plan's display_name, else the agent's name, else "Agent", cut to
// the protocol's 64 characters (not bytes).
func TestDisplayName(t *testing.T) {
	long := strings.Repeat("ü", 70)
	for _, tc := range []struct{ plan, agent, want string }{
		{"talkd B", "Claude Code", "talkd B"},
		{"", "  Jörg Müller ", "Jörg Müller"},
		{"", "", "Agent"},
		{long, "", strings.Repeat("ü", 64)},
	} {
		if got := DisplayName(tc.plan, tc.agent); got != tc.want {
			t.Errorf("DisplayName(%q, %q) = %q, want %q", tc.plan, tc.agent, got, tc.want)
		}
	}
}
