package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"net"
	"strings"
	"testing"
)

// The launchd agent is well-formed XML that runs the given talkd (escaped) at login, and
// a path with spaces is quoted in the systemd unit.
func TestServiceDefinitions(t *testing.T) {
	plist := launchdPlist("/Users/jörg/bin/talk&d", "/Users/jörg")
	if err := xml.Unmarshal([]byte(plist), new(struct{})); err != nil {
		t.Fatalf("plist is not XML: %v\n%s", err, plist)
	}
	for _, want := range []string{"<string>io.github.talkd</string>", "<string>/Users/jörg/bin/talk&amp;d</string>", "<key>RunAtLoad</key><true/>", "/Users/jörg/Library/Logs/talkd.log"} {
		if !strings.Contains(plist, want) {
			t.Errorf("plist lacks %q", want)
		}
	}
	if u := systemdUnit("/home/a b/talkd", "/home/a b/.config/talk/talkd.env"); !strings.Contains(u, `ExecStart="/home/a b/talkd"`) {
		t.Errorf("unit: %s", u)
	}
	if u := systemdUnit("/opt/100%h/talkd", "/e"); !strings.Contains(u, "ExecStart=/opt/100%%h/talkd\n") {
		t.Errorf("a %% in the path must be doubled (systemd expands %%h): %s", u)
	}
	var out bytes.Buffer
	s := service{a: &app{stdout: &out, stderr: &out, getenv: func(string) string { return "" }}, goos: "windows"}
	if code := s.install(context.Background(), `C:\Tools\talkd.exe`); code != exitOK || !strings.Contains(out.String(), `schtasks /Create /TN talkd /SC ONLOGON`) {
		t.Errorf("windows: %d %s", code, out.String())
	}
}

// An address that does not resolve is reported as such, not with the hint to start talkd.
func TestUnresolvableURLHint(t *testing.T) {
	var out bytes.Buffer
	a := &app{stdout: &out, stderr: &out, getenv: func(string) string { return "" }}
	err := &unreachableError{url: "http://notaurl", source: "--url", err: &net.OpError{Op: "dial", Err: &net.DNSError{Name: "notaurl", Err: "no such host"}}}
	if code := a.fail(err); code != exitUnreachable || !strings.Contains(out.String(), `the host "notaurl" does not resolve`) || strings.Contains(out.String(), "start it with") {
		t.Fatalf("%d %s", code, out.String())
	}
}
