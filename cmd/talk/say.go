package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// maxSendText is what `talk say` sends of a longer text from stdin: its last 60 KiB, which
// fit the daemon's 64 KiB body limit with room for the JSON around it. The daemon cuts
// further, to its last lines within voice.cleanup.max_chars, and says what it left out.
const maxSendText = 60 << 10

func sayCommand() command {
	return command{
		name: "say", usage: "say [flags] [TEXT…]", summary: "ask the daemon to speak TEXT (or stdin when no TEXT is given)",
		data: true,
		detail: `The words of TEXT are joined by single spaces; without TEXT, talk reads the text from
stdin (a pipe or file). Flags may stand before or after the words; "--" ends the flags,
so text whose words start with "-" goes after it: talk say -p high -- -5 degrees.
Prints "queued: ID (position N)" on stdout. A muted or discarded announcement (quiet
hours, rate limit) is reported on stderr and exits 0: it is the daemon's law, not a
failure. A text longer than the daemon's voice.cleanup.max_chars (default 400) is cut:
from arguments at a sentence boundary (its start is spoken); from stdin its end is
spoken (the last lines, where a build's error is), and talk says on stderr what was left
out. When the daemon has no audio player or no speech engine, or its last play reached no
audio device, talk warns on stderr that the announcement will not be heard (talk doctor
says what to fix).

With --wait, talk blocks until the announcement has ended and prints its outcome; it
exits 0 only when the announcement was heard: 6 muted, 7 discarded, 8 failed, 9 stale,
10 no audio (no player, no reachable device, no engine), 5 not spoken otherwise (stopped,
dropped, cancelled). With --json the daemon's answer is printed unchanged, e.g.
  {"status":"queued","id":"a12","position":1,"message":"queued as a12 at position 1"}
and with --wait also the final history entry, on a second line.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var prio, lang, provider, voiceName string
			var rate, pitch, volume int
			var now, wait bool
			fs.StringVar(&voiceName, "voice", "", "engine voice `NAME` (see talk voices); default: your agent's from [voice.agents], else the language's")
			fs.IntVar(&rate, "rate", 0, "speaking rate in words per minute, 80-450 (default: the daemon's)")
			fs.IntVar(&pitch, "pitch", 0, "pitch 1-99, 50 = the voice's normal (not every engine takes it)")
			fs.IntVar(&volume, "volume", 0, "volume in percent, 1-200, 100 = normal")
			fs.BoolVar(&wait, "wait", false, "block until the announcement has ended; exit 0 only when it was heard (else 5-10, see talk --help)")
			fs.StringVar(&prio, "p", "", "priority: low, normal or high (default: normal)")
			fs.StringVar(&prio, "priority", "", "same as -p")
			fs.StringVar(&lang, "l", "", "language: a BCP-47 tag the engine speaks, e.g. de, en, fr, pt-BR (default: the daemon's voice.lang)")
			fs.StringVar(&lang, "lang", "", "same as -l")
			fs.BoolVar(&now, "now", false, "pass quiet hours and the rate limit (never mute)")
			fs.StringVar(&provider, "provider", "", "speech provider `NAME` configured in the daemon (see talk voices)")
			return func(ctx context.Context, args []string) int {
				cmd, _ := findCommand("say")
				switch prio {
				case "", "low", "normal", "high":
				default:
					return a.usage(cmd, "-p must be low, normal or high, not %q", prio)
				}
				text, skipped, err := a.sayText(args)
				if err != nil {
					return a.usage(cmd, "%v", err)
				}
				req := map[string]any{"text": text}
				if len(args) == 0 {
					// Piped output (make 2>&1 | talk say): its end is where the error is.
					req["keep"] = "end"
				}
				if prio != "" {
					req["priority"] = prio
				}
				if lang != "" {
					req["lang"] = lang
				}
				if provider != "" {
					req["provider"] = provider
				}
				if voiceName != "" {
					req["voice"] = voiceName
				}
				for k, n := range map[string]int{"rate": rate, "pitch": pitch, "volume": volume} {
					if n != 0 {
						req[k] = n
					}
				}
				if now {
					req["now"] = true
				}
				ans, err := a.client().do(ctx, http.MethodPost, "/speak", req, nil)
				if err != nil {
					return a.fail(err)
				}
				var res speakResult
				if err := decode(ans, "POST /speak", &res); err != nil {
					return a.fail(err)
				}
				if a.opts.json {
					a.printJSON(ans.body)
				}
				switch res.Status {
				case "queued":
					if !a.opts.json {
						fmt.Fprintf(a.stdout, "queued: %s (position %d)\n", res.ID, res.Position)
					}
					switch {
					case res.ShortenedFrom > 0 && len(args) == 0:
						a.warnf("the text had %d characters; the daemon speaks its end (voice.cleanup.max_chars) and left out %s%s", res.ShortenedFrom, res.LeftOut, skippedNote(skipped))
					case res.ShortenedFrom > 0:
						a.warnf("the text had %d characters; the daemon cut it at a sentence boundary to its voice.cleanup.max_chars", res.ShortenedFrom)
					}
					if res.Warning != "" {
						a.warnf("warning: %s (talk doctor says what to fix)", res.Warning)
					}
					if wait {
						return a.waitFor(ctx, res.ID)
					}
				case "muted", "discarded":
					// Not a failure: the daemon's laws decided. Scripts go on; people are told.
					msg := res.Message
					if msg == "" {
						msg = strings.TrimSpace(res.Status + ": " + res.Reason)
					}
					if wait {
						a.warnf("%s", msg)
						return waitExit(res.Status, res.Reason)
					}
					a.warnf("%s (not an error)", msg)
				default:
					a.warnf("the daemon answered with unknown status %q: %s", res.Status, res.Message)
					return exitFailure
				}
				return exitOK
			}
		},
	}
}

// sayText is the announcement: the arguments joined, or stdin when there are none. Of a
// long stdin only the last maxSendText bytes are kept (skipped counts the bytes before),
// however long the input: the end of a build's output is what matters.
func (a *app) sayText(args []string) (text string, skipped int64, err error) {
	if len(args) > 0 {
		text := strings.Join(args, " ")
		if strings.TrimSpace(text) == "" {
			return "", 0, errors.New("TEXT is empty")
		}
		return text, 0, nil
	}
	if f, ok := a.stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && !isDevNull(st) {
			return "", 0, errors.New("no TEXT given and stdin is a terminal: give the text as arguments or pipe it in")
		}
	}
	raw, skipped, err := readTail(a.stdin, maxSendText)
	if err != nil {
		return "", 0, fmt.Errorf("reading the text from stdin: %w", err)
	}
	text = strings.TrimSpace(string(raw))
	if text == "" {
		return "", 0, errors.New("no TEXT given and stdin is empty")
	}
	return text, skipped, nil
}

// readTail reads r to its end and returns its last limit bytes at most, starting at a
// UTF-8 character, and how many bytes came before them. Memory stays bounded by 2*limit.
func readTail(r io.Reader, limit int) ([]byte, int64, error) {
	var buf []byte
	var skipped int64
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if over := len(buf) - limit; over > limit {
			skipped += int64(over)
			buf = append(buf[:0:0], buf[over:]...)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	if over := len(buf) - limit; over > 0 {
		skipped += int64(over)
		buf = buf[over:]
	}
	for len(buf) > 0 && !utf8.RuneStart(buf[0]) {
		buf, skipped = buf[1:], skipped+1
	}
	return buf, skipped, nil
}

// skippedNote says that talk itself left out the beginning of a very long input.
func skippedNote(skipped int64) string {
	if skipped == 0 {
		return ""
	}
	return fmt.Sprintf(" (talk had already left out the first %d KiB of the input)", (skipped+1023)>>10)
}

// waitFor polls GET /wait until announcement id has ended, prints the outcome and returns
// the exit code: 0 for spoken, else the code of its end (waitExit). Each poll is shorter
// than the request time limit, so a long queue never looks like an unreachable daemon.
func (a *app) waitFor(ctx context.Context, id string) int {
	poll := max(a.opts.timeout-2*time.Second, time.Second)
	poll = min(poll, 50*time.Second)
	a.client().http.Timeout = poll + 5*time.Second
	for {
		ans, err := a.client().do(ctx, http.MethodGet, "/wait?id="+url.QueryEscape(id)+"&timeout="+poll.String(), nil, nil)
		if err != nil {
			return a.fail(err)
		}
		var res struct {
			Done  bool  `json:"done"`
			Entry entry `json:"entry"`
		}
		if err := decode(ans, "GET /wait", &res); err != nil {
			return a.fail(err)
		}
		if !res.Done {
			continue
		}
		e := res.Entry
		if a.opts.json {
			raw, _ := json.Marshal(e)
			a.printJSON(raw)
		}
		if e.Outcome == "spoken" {
			if !a.opts.json {
				fmt.Fprintf(a.stdout, "spoken: %s\n", e.ID)
			}
			return exitOK
		}
		what := e.Outcome
		if e.Reason != "" {
			what += " (" + e.Reason + ")"
		}
		a.warnf("%s was not spoken: %s", e.ID, what)
		return waitExit(e.Outcome, e.Reason)
	}
}

// isDevNull reports whether st is the null device (a character device, but not a terminal:
// `talk say </dev/null` has empty input, it does not wait for typing).
func isDevNull(st os.FileInfo) bool {
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(st, null)
}
