package config

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"talkd/internal/werkbaum/plans/docs"
)

// A plan may live on a Werkbaum document server instead of in a file ([[plans]] url =
// "https://host/api/v1/documents/<uuid>"): talkd reads it with GET and writes it with
// PATCH …/content (DOCUMENTS.md). The fields of such a plan are Plan.URL, Plan.TokenEnv
// and Plan.DisplayName; this file holds their rules, so config.go only lists them.

// Remote reports whether the plan lives on a document server (url) rather than in a file.
func (p Plan) Remote() bool { return p.URL != "" }

// BearerToken is the token for the plan's document server, read from TokenEnv at the
// time of the request ("" without token_env). The value is never kept in the Config, so
// no printed or logged form of it can carry the token; Load has checked that the variable
// is set.
func (p Plan) BearerToken() string {
	if p.TokenEnv == "" {
		return ""
	}
	return os.Getenv(p.TokenEnv)
}

// NormalizeDocumentURL turns a shared document link into the document URL talkd uses:
// an editor link carrying ?live=<document URL> is unwrapped, query, fragment and trailing
// slashes are dropped, scheme and host are lower-cased, and the UUID after /documents/ is
// lower-cased. Only http and https are accepted, and no user info (a token belongs in
// token_env, never in the file).
func NormalizeDocumentURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("is not a URL: %v", err)
	}
	if live := u.Query().Get("live"); live != "" {
		if u, err = url.Parse(live); err != nil {
			return "", fmt.Errorf("carries a ?live= link that is not a URL: %v", err)
		}
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("must be an http or https URL of a document, e.g. https://plans.example.org/api/v1/documents/<uuid>")
	}
	if u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("has no host; write https://host/api/v1/documents/<uuid>")
	}
	if u.User != nil {
		return "", fmt.Errorf("must not carry user info; give the server's token by token_env")
	}
	path := strings.TrimRight(u.Path, "/")
	i := strings.LastIndex(path, "/documents/")
	if i < 0 {
		return "", fmt.Errorf("does not name a document: the path must end in /documents/<uuid>")
	}
	id := path[i+len("/documents/"):]
	// A URL's id may be written in any case; its canonical form is lower case.
	if !docs.ValidDocumentID(strings.ToLower(id)) {
		return "", fmt.Errorf("does not name a document: %q after /documents/ is not a UUID (36 characters, like 3f2c9a1e-0b7d-4c55-9e61-2a8f4d0c7b13)", id)
	}
	out := url.URL{Scheme: scheme, Host: strings.ToLower(u.Host), Path: path[:i] + "/documents/" + strings.ToLower(id)}
	return out.String(), nil
}

// validateRemotePlan checks the fields of a url plan (key names the entry, e.g.
// "plans[2]"). It is called for every plan that sets one of them; a file plan gets a
// clear error for them instead.
func (l *loader) validateRemotePlan(key string, p *Plan) {
	if p.URL == "" {
		for _, f := range []struct{ name, val string }{{"token_env", p.TokenEnv}, {"display_name", p.DisplayName}} {
			if f.val != "" {
				l.fail(key+"."+f.name, "is set, but only a plan on a document server (url = …) takes it")
			}
		}
		return
	}
	if p.Path != "" {
		l.fail(key, "has both path and url; a plan is either a file (path) or a document on a server (url), give one of them")
	}
	norm, err := NormalizeDocumentURL(p.URL)
	if err != nil {
		l.fail(key+".url", "%q %v", p.URL, err)
	} else {
		p.URL = norm
	}
	if p.Mirror {
		l.fail(key+".mirror", "a plan on a document server has no git repository to mirror into; the server keeps its history (remove mirror, or use a file plan)")
	}
	if p.TokenEnv != "" {
		// Messages name the variable and never quote the token.
		tok := l.getenv(p.TokenEnv)
		switch {
		case tok == "":
			l.fail(key+".token_env", "environment variable %s is not set or empty; it must hold the bearer token for the document server of %s", p.TokenEnv, hostOf(p.URL))
		case strings.IndexFunc(tok, unicode.IsSpace) >= 0:
			l.fail(key+".token_env", "the token in %s contains white space (a trailing newline?); it is sent byte for byte", p.TokenEnv)
		}
	}
	if p.DisplayName != "" {
		switch {
		case utf8.RuneCountInString(p.DisplayName) > docs.MaxDisplayName:
			l.fail(key+".display_name", "%q is longer than %d characters", p.DisplayName, docs.MaxDisplayName)
		case strings.TrimSpace(p.DisplayName) != p.DisplayName || strings.IndexFunc(p.DisplayName, unicode.IsControl) >= 0:
			l.fail(key+".display_name", "%q has leading or trailing blanks or control characters", p.DisplayName)
		}
	}
}

// hostOf is the host of a URL for messages (the URL itself when it does not parse).
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// RemoteSummary describes the plans on document servers for talkd -check-config, one
// line each: key, document URL, where the token comes from and the display name.
func (c *Config) RemoteSummary() []string {
	var lines []string
	for _, p := range c.Plans {
		if !p.Remote() {
			continue
		}
		tok := "no token"
		if p.TokenEnv != "" {
			tok = "token from $" + p.TokenEnv
		}
		name := "the MCP host's clientInfo.name (fallback Agent)"
		if p.DisplayName != "" {
			name = fmt.Sprintf("%q", p.DisplayName)
		}
		lines = append(lines, fmt.Sprintf("plan %s: document %s, %s, writes shown as %s", p.Key, p.URL, tok, name))
	}
	return lines
}
