package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"talkd/internal/config"
)

// talk plan open KEY: the way a person gets from a plan to the Werkbaum editor editing it
// live beside the agents. It prints the editor's link for the plan's live document
// (<editor>?live=<document URL>) and, with --browser, opens it. The document URL comes
// from the daemon (plans_list), the editor from --editor, else [editor] url of the talkd
// config, else the published editor.

// openFlags are plan open's own flags, registered on plan's FlagSet.
type openFlags struct {
	browser bool
	editor  string
}

func defineOpenFlags(fs *flag.FlagSet) *openFlags {
	o := &openFlags{}
	fs.BoolVar(&o.browser, "browser", false, "open: open the link in the browser (xdg-open; open on macOS)")
	fs.StringVar(&o.editor, "editor", "", "open: the editor's `URL` (default [editor] url of the config, else "+config.DefaultEditorURL+")")
	return o
}

// used reports whether a flag of plan open was given.
func (o *openFlags) used() bool { return o.browser || o.editor != "" }

// openTimeout bounds the browser opener: xdg-open hands the link over and returns.
const openTimeout = 30 * time.Second

func (a *app) planOpen(ctx context.Context, key string, o *openFlags) int {
	res, err := a.callTool(ctx, "plans_list", map[string]any{})
	if err != nil {
		return a.failPlan(err)
	}
	var list struct {
		Plans []planInfo `json:"plans"`
	}
	if err := json.Unmarshal(res.StructuredContent, &list); err != nil {
		return a.fail(fmt.Errorf("plans_list answered unexpected JSON: %w", err))
	}
	var doc string
	found := false
	for _, p := range list.Plans {
		if p.Key == key {
			doc, found = p.Document, true
		}
	}
	switch {
	case !found:
		a.warnf("talkd lists no plan %q for you (talk plans shows the keys)", key)
		return exitRefused
	case doc == "":
		a.warnf("plan %q has no document URL; the daemon's log says why", key)
		return exitRefused
	}
	cfg, cfgErr := a.config()
	editor := config.Editor{URL: config.DefaultEditorURL}
	switch {
	case o.editor != "":
		editor.URL = o.editor
	case cfgErr == nil:
		editor.URL = cfg.Editor.URL
	default:
		a.warnf("the talkd config cannot be read, using the editor %s: %v", config.DefaultEditorURL, cfgErr)
	}
	link, err := editor.Link(doc)
	if err != nil {
		a.warnf("%v", err)
		return exitUsage
	}
	if a.opts.json {
		raw, _ := json.Marshal(map[string]string{"key": key, "document": doc, "editor": editor.URL, "url": link})
		a.printJSON(raw)
	} else {
		fmt.Fprintln(a.stdout, link)
	}
	if cfgErr == nil && a.servedHere(doc) {
		a.hintOrigin(cfg, link)
	}
	if !o.browser {
		return exitOK
	}
	return a.openBrowser(ctx, link)
}

// servedHere reports whether the document is talkd's own, not a plan on a document
// server (whose CORS is that server's business): its address is the daemon's, where
// two loopback names with the same port count as one.
func (a *app) servedHere(doc string) bool {
	d, err1 := url.Parse(doc)
	b, err2 := url.Parse(a.client().base)
	if err1 != nil || err2 != nil {
		return false
	}
	if strings.EqualFold(b.Host, d.Host) {
		return true
	}
	return d.Port() == b.Port() && isLoopbackName(d.Hostname()) && isLoopbackName(b.Hostname())
}

func isLoopbackName(h string) bool {
	ip := net.ParseIP(h)
	return strings.EqualFold(h, "localhost") || ip != nil && ip.IsLoopback()
}

// hintOrigin says on stderr when the config does not let the editor's pages in: the
// editor would then show the document as unreachable, with no word on why.
func (a *app) hintOrigin(cfg *config.Config, link string) {
	u, err := url.Parse(link)
	if err != nil || u.Host == "" {
		return
	}
	origin := u.Scheme + "://" + strings.ToLower(u.Host)
	if cfg.Editor.OriginAllowed(origin) || cfg.Server.OriginAllowed(origin) {
		return
	}
	a.warnf("the talkd config (%s) does not let pages of %s use the document doors, so the editor cannot load the plan; add\n"+
		"  [editor]\n  origins = [%q]\nto it and run talk reload", cfg.Source, origin, origin)
}

// openBrowser hands link to the desktop's opener.
func (a *app) openBrowser(ctx context.Context, link string) int {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		a.warnf("cannot open a browser: %s is not installed; open the link above yourself", opener)
		return exitFailure
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, link).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			msg = fmt.Sprintf("no answer within %s", openTimeout)
		}
		a.warnf("%s failed (%v): %s; open the link above yourself", opener, err, msg)
		return exitFailure
	}
	return exitOK
}
