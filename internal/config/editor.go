package config

import (
	"fmt"
	"net/url"
	"slices"
)

// Editor is the Werkbaum web editor in which people open talkd's plans: `talk plan open`
// builds its link, and the document doors let its pages in from the browser. The
// editor is a page on another origin (usually https on the internet) that calls talkd
// on loopback, so its origin needs CORS and the browser's private-network preflight;
// that is off unless its origins are listed here, and it opens the document doors only
// (a listed editor cannot speak or mute; allowed_origins is for that).
type Editor struct {
	// URL is the editor's address; `talk plan open` adds ?live=<document URL> to it.
	URL string `toml:"url" json:"url"`
	// Origins are the origins (scheme://host[:port]) whose pages may use /api/v1 from the
	// browser. Empty (the default): none.
	Origins []string `toml:"origins" json:"origins"`
}

// DefaultEditorURL is the published Werkbaum editor; the other published one is
// https://mhoennig.github.io/werkbaum/.
const DefaultEditorURL = "https://werkbaum.javagil.de/"

// OriginAllowed reports whether origin is one of the listed editor origins.
func (e Editor) OriginAllowed(origin string) bool {
	return origin != "" && slices.Contains(e.Origins, origin)
}

// Link is the editor's address that opens the live document at documentURL: the editor
// URL with the query parameter live set to it (other parameters of the URL are kept).
func (e Editor) Link(documentURL string) (string, error) {
	u, err := checkEditorURL(e.URL)
	if err != nil {
		return "", fmt.Errorf("editor.url %q %w", e.URL, err)
	}
	q := u.Query()
	q.Set("live", documentURL)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// checkEditorURL accepts an absolute http(s) URL without a fragment; an empty path
// becomes "/" so the link reads https://host/?live=….
func checkEditorURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return nil, fmt.Errorf("is not an editor address: write an http(s) URL such as %s", DefaultEditorURL)
	case u.Fragment != "" || u.User != nil:
		return nil, fmt.Errorf("is not an editor address: it must not carry user info or a fragment")
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

func (l *loader) validateEditor(c *Config) {
	e := &c.Editor
	if _, err := checkEditorURL(e.URL); err != nil {
		l.fail("editor.url", "%q %v", e.URL, err)
	}
	for i, o := range e.Origins {
		key := fmt.Sprintf("editor.origins[%d]", i)
		if o == "*" {
			l.fail(key, `"*" is not allowed here: list the editors' origins, e.g. ["https://werkbaum.javagil.de", "https://mhoennig.github.io"]`)
			continue
		}
		norm, err := normalizeOrigin(o)
		if err != nil {
			l.fail(key, "%q %v", o, err)
			continue
		}
		e.Origins[i] = norm
	}
}
