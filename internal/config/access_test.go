package config

import "testing"

func TestOriginAllowed(t *testing.T) {
	listed := Server{AllowedOrigins: []string{"https://a.example", "http://localhost:5173"}}
	any := Server{AllowedOrigins: []string{"*"}}
	closed := Server{AllowedOrigins: []string{}}
	tests := []struct {
		s      Server
		origin string
		want   bool
	}{
		{listed, "https://a.example", true},
		{listed, "http://localhost:5173", true},
		{listed, "https://b.example", false},
		{listed, "https://a.example.evil.org", false},
		{listed, "", false},
		{any, "https://anything.example", true},
		{any, "", false},
		{closed, "https://a.example", false},
	}
	for _, tt := range tests {
		if got := tt.s.OriginAllowed(tt.origin); got != tt.want {
			t.Errorf("%v.OriginAllowed(%q) = %v, want %v", tt.s.AllowedOrigins, tt.origin, got, tt.want)
		}
	}
	if !any.CORSAny() || listed.CORSAny() || closed.CORSAny() {
		t.Errorf("CORSAny: any %v listed %v closed %v", any.CORSAny(), listed.CORSAny(), closed.CORSAny())
	}
}

func TestLocalClientHasEveryGrant(t *testing.T) {
	c := LocalClient()
	if c.ID != "local" || !c.Speak || !c.Control || !c.CanRead("any-plan") || !c.CanWrite("any-plan") || c.Token != "" {
		t.Errorf("LocalClient = %+v", c)
	}
	none := Client{ID: "x"}
	if none.CanRead("p") || none.CanWrite("p") {
		t.Errorf("a client without grants may read or write")
	}
	writer := Client{Write: []string{"p"}}
	if !writer.CanRead("p") || writer.CanRead("q") {
		t.Errorf("write must imply read of the same plan only")
	}
}

func TestListenParts(t *testing.T) {
	tests := []struct {
		listen string
		host   string
		port   int
	}{
		{"127.0.0.1:7077", "127.0.0.1", 7077},
		{"[::1]:0", "::1", 0},
		{":8080", "", 8080},
		{"garbage", "", 0},
		{"host:http", "host", 0},
	}
	for _, tt := range tests {
		s := Server{Listen: tt.listen}
		if s.Host() != tt.host || s.Port() != tt.port {
			t.Errorf("%q: Host %q Port %d, want %q %d", tt.listen, s.Host(), s.Port(), tt.host, tt.port)
		}
	}
}

func TestFriendlyType(t *testing.T) {
	tests := []struct{ in, want string }{
		{"incompatible types: TOML value has type int64; destination has type string", "wrong type: the value is an integer, the key takes a string (in quotes)"},
		{"incompatible types: TOML value has type string; destination has type boolean", "wrong type: the value is a string (in quotes), the key takes a boolean (true or false)"},
		{"incompatible types: TOML value has type []any; destination has type integer", "wrong type: the value is an array, the key takes an integer"},
		{"incompatible types: TOML value has type float64; destination has type slice", "wrong type: the value is a float, the key takes an array"},
		{"incompatible types: TOML value has type map[string]any; destination has type primitive (string-like)", "wrong type: the value is a table, the key takes a string (in quotes)"},
		{"type mismatch for config.Cleanup: expected table but found int64", "wrong type: the value is an integer, the key takes a table"},
		{"something else", "something else"},
	}
	for _, tt := range tests {
		if got := friendlyType(tt.in); got != tt.want {
			t.Errorf("friendlyType(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
