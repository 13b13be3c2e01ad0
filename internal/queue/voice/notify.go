package voice

import (
	"context"
	"strings"
	"time"
)

// notifyTimeout bounds one desktop notification; notifiers return at once normally.
const notifyTimeout = 5 * time.Second

// setupNotifier picks the desktop notifier of the platform: notify-send on Linux and the
// BSDs, osascript on macOS, none on Windows (a log line is written instead).
func (v *Voice) setupNotifier(p platform) {
	switch p.goos {
	case "windows":
	case "darwin":
		if bin, ok := p.firstFound("osascript"); ok {
			v.notifier = []string{bin}
		}
	default:
		if bin, ok := p.firstFound("notify-send"); ok {
			v.notifier = []string{bin}
		}
	}
}

// notifyArgv builds the notifier command. Title and text are always separate argv
// elements, never part of a script: osascript gets them as "on run" arguments, and
// notify-send gets them after "--".
func notifyArgv(bin, title, text string) []string {
	if strings.HasSuffix(bin, "osascript") {
		// osascript takes options until its first plain argument; the title leads, so it
		// must not start with "-".
		if strings.HasPrefix(title, "-") {
			title = " " + title
		}
		return []string{bin,
			"-e", "on run argv",
			"-e", "display notification (item 2 of argv) with title (item 1 of argv)",
			"-e", "end run",
			title, text}
	}
	return []string{bin, "--app-name=talkd", "--", title, text}
}

// Notify shows a desktop notification (for an announcement discarded in quiet hours). It
// never blocks the caller: the notifier runs in the background, at most four at a time;
// beyond that, and without a notifier, the notice goes to the log.
func (v *Voice) Notify(title, text string) {
	v.notifyMu.Lock()
	defer v.notifyMu.Unlock()
	if v.closed || v.notifier == nil {
		v.log.Info("notification", "title", title, "text", text)
		return
	}
	select {
	case v.sem <- struct{}{}:
	default:
		v.log.Info("notification (notifier busy)", "title", title, "text", text)
		return
	}
	v.notifyWG.Add(1)
	go func() {
		defer v.notifyWG.Done()
		defer func() { <-v.sem }()
		argv := notifyArgv(v.notifier[0], title, text)
		if _, err := runProc(context.Background(), procSpec{argv: argv, timeout: notifyTimeout}); err != nil {
			v.log.Warn("desktop notification failed", "title", title, "text", text, "err", err)
		}
	}()
}
