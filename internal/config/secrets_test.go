package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// Token values never appear in an error, however the client entry is wrong.
func TestTokensNeverInErrors(t *testing.T) {
	dir, e := home(t)
	short := "short-secret-value-1234"
	spaced := "spaced-secret-value-0123456789abcdef\n"
	dup := "duplicate-secret-value-0123456789abcdef"
	good := "good-secret-value-0123456789abcdefghij"
	e = e.with("T_SHORT", short, "T_SPACED", spaced, "T_DUP1", dup, "T_DUP2", dup, "T_GOOD", good)
	tests := []struct {
		name, body string
		want       []string
	}{
		{"short", "[[clients]]\nid = \"a\"\ntoken_env = \"T_SHORT\"\n", []string{"T_SHORT", "23 characters", "at least 32"}},
		{"white space", "[[clients]]\nid = \"a\"\ntoken_env = \"T_SPACED\"\n", []string{"T_SPACED", "white space"}},
		{"shared by two clients", "[[clients]]\nid = \"a\"\ntoken_env = \"T_DUP1\"\n[[clients]]\nid = \"b\"\ntoken_env = \"T_DUP2\"\n",
			[]string{"clients[1].token_env", "T_DUP2", `client "a"`}},
		{"other problems", "[voice]\nlang = \"f r\"\n[[clients]]\nid = \"a\"\ntoken_env = \"T_GOOD\"\nread = [\"nope\"]\n", []string{"voice.lang", "clients[0].read[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n"+tt.body)
			msg := loadErr(t, e.with("TALK_CONFIG", f))
			for _, tok := range []string{short, strings.TrimSpace(spaced), dup, good} {
				if strings.Contains(msg, tok) {
					t.Fatalf("error text contains a token value: %q", msg)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// A loaded token survives in memory but not in any printed form of the config.
func TestTokensNeverPrinted(t *testing.T) {
	dir, e := home(t)
	tok := "printed-secret-value-0123456789abcdef"
	f := writeFile(t, filepath.Join(dir, "c.toml"), "version = 1\n[server]\nlisten = \"0.0.0.0:0\"\n[[clients]]\nid = \"a\"\ntoken_env = \"T\"\nspeak = true\n")
	c := mustLoad(t, e.with("TALK_CONFIG", f, "T", tok))
	if c.Clients[0].Token != tok {
		t.Fatalf("token not loaded")
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "%v %+v %#v %+v %v", c, *c, c, c.Clients[0], c.Clients)
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(js)
	if err := toml.NewEncoder(&out).Encode(c); err != nil {
		t.Fatal(err)
	}
	slog.New(slog.NewJSONHandler(&out, nil)).Info("client", "client", c.Clients[0], "clients", c.Clients)
	if strings.Contains(out.String(), tok) {
		t.Fatalf("a printed form of the config contains the token:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "token_env") || !strings.Contains(out.String(), `"a"`) {
		t.Errorf("printed forms lost the client's identity:\n%s", out.String())
	}
}
