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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxSendText is what `talk say` sends of a longer text from stdin: its last 60 KiB, which
// fit the daemon's 64 KiB body limit with room for the JSON around it. The daemon cuts
// further, to its last lines within voice.cleanup.max_chars, and says what it left out.
const maxSendText = 60 << 10

// speakResult is the daemon's answer to POST /speak (api.SpeakResult).
type speakResult struct {
	Status        string     `json:"status"`
	ID            string     `json:"id"`
	Position      int        `json:"position"`
	Reason        string     `json:"reason"`
	Until         *time.Time `json:"until"`
	RetryAfterMs  int64      `json:"retry_after_ms"`
	Window        string     `json:"window"`
	ShortenedFrom int        `json:"shortened_from"`
	LeftOut       string     `json:"left_out"`
	Warning       string     `json:"warning"`
	Message       string     `json:"message"`
}

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

// muteState is the daemon's answer to /mute and /unmute, and the mute part of /status.
type muteState struct {
	Muted   bool       `json:"muted"`
	Until   *time.Time `json:"until"`
	Message string     `json:"message"`
}

func (m muteState) human(now time.Time) string {
	switch {
	case !m.Muted:
		return "not muted"
	case m.Until == nil:
		return "muted until unmuted (talk unmute)"
	}
	left := m.Until.Sub(now).Round(time.Second)
	if left < 0 {
		left = 0
	}
	return fmt.Sprintf("muted until %s (%s left)", clock(*m.Until, now), left)
}

// clock shows a time as 15:04:05, with the date when it is not today.
func clock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

var clockRE = regexp.MustCompile(`^([01]?[0-9]|2[0-3]):[0-5][0-9]$`)

func muteCommand() command {
	return command{
		name: "mute", usage: "mute [30m | 14:00 | --until T]", summary: "silence the daemon: now, for a while, or until a time",
		data: true,
		detail: `Without an argument talkd stays muted until "talk unmute". DURATION is a Go duration
like 30m, 1h or 1h30m; CLOCK a local time like 14:00 (tomorrow when it has passed today).
Muting also stops what is speaking and drops what waits; while muted, every announcement
(also --now) is dropped. Mute survives a restart of the daemon.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var until string
			fs.StringVar(&until, "until", "", "stay muted until this local clock time (`HH:MM`) or RFC 3339 time")
			return func(ctx context.Context, args []string) int {
				cmd, _ := findCommand("mute")
				req := map[string]string{}
				switch {
				case len(args) > 1:
					return a.usage(cmd, "give one duration or clock time, not %d arguments", len(args))
				case len(args) == 1 && until != "":
					return a.usage(cmd, "give either a duration or --until, not both")
				case len(args) == 1 && clockRE.MatchString(args[0]):
					req["until"] = args[0]
				case len(args) == 1:
					d, err := time.ParseDuration(args[0])
					if err != nil || d <= 0 {
						return a.usage(cmd, "%q is neither a positive duration like 30m nor a clock time like 14:00", args[0])
					}
					req["for"] = args[0]
				case until != "":
					if _, err := time.Parse(time.RFC3339, until); err != nil && !clockRE.MatchString(until) {
						return a.usage(cmd, "--until %q is not a clock time like 14:00 (or an RFC 3339 time)", until)
					}
					req["until"] = until
				}
				var body any
				if len(req) > 0 {
					body = req
				}
				return a.muteCall(ctx, "/mute", body)
			}
		},
	}
}

func unmuteCommand() command {
	return command{
		name: "unmute", usage: "unmute", summary: "end a mute", data: true,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("unmute")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				return a.muteCall(ctx, "/unmute", nil)
			}
		},
	}
}

func (a *app) muteCall(ctx context.Context, path string, body any) int {
	ans, err := a.client().do(ctx, http.MethodPost, path, body, nil)
	if err != nil {
		return a.fail(err)
	}
	var m muteState
	if err := decode(ans, "POST "+path, &m); err != nil {
		return a.fail(err)
	}
	if a.opts.json {
		a.printJSON(ans.body)
		return exitOK
	}
	fmt.Fprintln(a.stdout, m.human(time.Now()))
	return exitOK
}

func stopCommand() command {
	return command{
		name: "stop", usage: "stop", summary: "end the utterance being spoken (what waits goes on)", data: true,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("stop")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				ans, err := a.client().do(ctx, http.MethodPost, "/stop", nil, nil)
				if err != nil {
					return a.fail(err)
				}
				var res struct {
					Stopped bool   `json:"stopped"`
					ID      string `json:"id"`
				}
				if err := decode(ans, "POST /stop", &res); err != nil {
					return a.fail(err)
				}
				switch {
				case a.opts.json:
					a.printJSON(ans.body)
				case res.Stopped:
					fmt.Fprintf(a.stdout, "stopped %s\n", res.ID)
				default:
					fmt.Fprintln(a.stdout, "nothing was speaking")
				}
				return exitOK
			}
		},
	}
}

// entry is one announcement in /history and /status (queue.Entry).
type entry struct {
	ID       string     `json:"id"`
	Text     string     `json:"text"`
	Lang     string     `json:"lang"`
	Priority string     `json:"priority"`
	Provider string     `json:"provider"`
	Caller   string     `json:"caller"`
	Agent    string     `json:"agent"`
	Origin   string     `json:"origin"`
	Outcome  string     `json:"outcome"`
	Reason   string     `json:"reason"`
	Received time.Time  `json:"received"`
	Started  *time.Time `json:"started"`
	Ended    *time.Time `json:"ended"`
}

func historyCommand() command {
	return command{
		name: "history", usage: "history [-n N] [-f]", summary: "show recent announcements with outcome and caller (-f: follow)", data: true,
		detail: `Human output lists the oldest first, the newest last (next to your prompt); --json prints
the daemon's answer {"entries":[…]} unchanged, newest first. With -f talk keeps
running and prints each new announcement once it has ended (with --json: one entry per
line), until interrupted. Browser calls show their page's origin after the caller.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			var n int
			var follow bool
			fs.IntVar(&n, "n", 20, "show the last `N` announcements")
			fs.BoolVar(&follow, "f", false, "follow: keep printing announcements as they end, until interrupted")
			return func(ctx context.Context, args []string) int {
				cmd, _ := findCommand("history")
				if len(args) > 0 {
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				if n < 1 {
					return a.usage(cmd, "-n must be at least 1, not %d", n)
				}
				ans, res, err := a.fetchHistory(ctx, n)
				if err != nil {
					return a.fail(err)
				}
				if follow {
					return a.followHistory(ctx, res)
				}
				if a.opts.json {
					a.printJSON(ans.body)
					return exitOK
				}
				if len(res) == 0 {
					fmt.Fprintln(a.stdout, "no announcements yet")
					return exitOK
				}
				now := time.Now()
				for i := len(res) - 1; i >= 0; i-- {
					fmt.Fprintln(a.stdout, historyLine(res[i], now))
				}
				return exitOK
			}
		},
	}
}

// fetchHistory reads the newest n entries of GET /history, newest first.
func (a *app) fetchHistory(ctx context.Context, n int) (*answer, []entry, error) {
	ans, err := a.client().do(ctx, http.MethodGet, "/history?limit="+strconv.Itoa(n), nil, nil)
	if err != nil {
		return nil, nil, err
	}
	var res struct {
		Entries []entry `json:"entries"`
	}
	if err := decode(ans, "GET /history", &res); err != nil {
		return nil, nil, err
	}
	return ans, res.Entries, nil
}

// historyPoll is how often talk history -f asks for what is new.
const historyPoll = 500 * time.Millisecond

// followHistory prints the entries already there (oldest first) and then each further one
// when it reaches its final outcome, until ctx ends (Ctrl-C: exit 0). An entry is printed
// once; one still waiting or speaking is held back until it has ended. The polls read a
// wider window than -n: what is older than the first answer's newest entry was left out
// by -n, not new, and is never printed.
func (a *app) followHistory(ctx context.Context, first []entry) int {
	printed := map[string]bool{}
	var pending []string // ids seen but not ended, oldest first
	var floor uint64     // announcement number of the first answer's newest entry
	show := func(list []entry) {
		byID := map[string]entry{}
		var newest uint64
		for _, e := range list {
			byID[e.ID] = e
			newest = max(newest, entrySeq(e.ID))
		}
		if newest < floor {
			floor = 0 // the daemon's numbering started again (a fresh state): all is new
		}
		var ready []entry
		keep := pending[:0]
		for _, id := range pending {
			e, ok := byID[id]
			switch {
			case !ok: // fell out of the window: it ended meanwhile, unseen
			case e.Outcome == "queued" || e.Outcome == "speaking":
				keep = append(keep, id)
			default:
				ready = append(ready, e)
			}
		}
		pending = keep
		for i := len(list) - 1; i >= 0; i-- {
			e := list[i]
			if printed[e.ID] || entrySeq(e.ID) <= floor || slices.Contains(pending, e.ID) || slices.ContainsFunc(ready, func(r entry) bool { return r.ID == e.ID }) {
				continue
			}
			if e.Outcome == "queued" || e.Outcome == "speaking" {
				pending = append(pending, e.ID)
				continue
			}
			ready = append(ready, e)
		}
		now := time.Now()
		for _, e := range ready {
			printed[e.ID] = true
			if a.opts.json {
				raw, _ := json.Marshal(e)
				a.printJSON(raw)
			} else {
				fmt.Fprintln(a.stdout, historyLine(e, now))
			}
		}
		// An id that left the window never comes back into it.
		for id := range printed {
			if _, ok := byID[id]; !ok {
				delete(printed, id)
			}
		}
	}
	show(first)
	for _, e := range first {
		floor = max(floor, entrySeq(e.ID))
	}
	t := time.NewTicker(historyPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case <-t.C:
		}
		_, list, err := a.fetchHistory(ctx, 200)
		if err != nil {
			if ctx.Err() != nil {
				return exitOK
			}
			return a.fail(err)
		}
		show(list)
	}
}

// entrySeq is the number in an announcement id ("a12" → 12); 0 for any other shape.
func entrySeq(id string) uint64 {
	n, err := strconv.ParseUint(strings.TrimPrefix(id, "a"), 10, 64)
	if err != nil || !strings.HasPrefix(id, "a") {
		return 0
	}
	return n
}

// historyLine is one announcement on one line: time, id, priority, outcome, who, text.
// The outcome column fits every outcome with its reason code ("synthesized (no_player)",
// "discarded (quiet_hours)"); a reason that is a sentence (an engine's error) goes after
// the text, so the columns stay aligned.
func historyLine(e entry, now time.Time) string {
	outcome := e.Outcome
	tail := ""
	if e.Reason != "" {
		if isReasonCode(e.Reason) {
			outcome += " (" + e.Reason + ")"
		} else {
			tail = "  — " + shortenPlain(e.Reason, 120)
		}
	}
	who := e.Caller
	if e.Agent != "" {
		who += "/" + e.Agent
	}
	if e.Origin != "" {
		who += " " + e.Origin
	}
	return fmt.Sprintf("%-8s  %-6s  %-6s  %-24s  %-12s  %s%s",
		clock(e.Received, now), e.ID, e.Priority, outcome, who, shorten(e.Text, 60), tail)
}

// isReasonCode reports a short machine reason (quiet_hours, no_player, muted) as opposed
// to a message.
func isReasonCode(r string) bool {
	return len(r) <= 12 && !strings.ContainsAny(r, " :")
}

// shortenPlain is shorten without the quotes.
func shortenPlain(text string, max int) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return text
}

// shorten puts text on one line and cuts it to max characters.
func shorten(text string, max int) string {
	text = strings.Join(strings.Fields(text), " ")
	r := []rune(text)
	if len(r) <= max {
		return strconv.Quote(text)
	}
	return strconv.Quote(string(r[:max-1]) + "…")
}

// voiceInfo is what /status says about the speech engine (voice.Info).
type voiceInfo struct {
	Provider       string   `json:"provider"`
	ProviderReason string   `json:"provider_reason"`
	Sink           string   `json:"sink"`
	SinkReason     string   `json:"sink_reason"`
	Providers      []string `json:"providers"`
	Audible        *bool    `json:"audible"`
	Silent         string   `json:"silent"`
}

func (v voiceInfo) lines() []string {
	var out []string
	withReason := func(label, value, reason string) {
		if value == "" {
			return
		}
		if reason != "" {
			value += " (" + reason + ")"
		}
		out = append(out, fmt.Sprintf("%-12s %s", label, value))
	}
	withReason("provider", v.Provider, v.ProviderReason)
	withReason("sink", v.Sink, v.SinkReason)
	if len(v.Providers) > 0 {
		out = append(out, fmt.Sprintf("%-12s %s", "usable", strings.Join(v.Providers, ", ")+"   (talk say --provider NAME)"))
	}
	return out
}

// statusDoc is the daemon's GET /status answer, as far as talk shows it.
type statusDoc struct {
	Version string    `json:"version"`
	Mode    string    `json:"mode"`
	Config  string    `json:"config"`
	Mute    muteState `json:"mute"`
	Quiet   struct {
		Active  bool     `json:"active"`
		Window  string   `json:"window"`
		Windows []string `json:"windows"`
	} `json:"quiet_hours"`
	Queue struct {
		Waiting  int    `json:"waiting"`
		Capacity int    `json:"capacity"`
		Speaking *entry `json:"speaking"`
	} `json:"queue"`
	Rules struct {
		RateLimit map[string]string `json:"rate_limit"`
		MaxWait   string            `json:"max_wait"`
	} `json:"rules"`
	Voice  json.RawMessage   `json:"voice"`
	CORS   []string          `json:"cors"`
	MCP    bool              `json:"mcp"`
	Plans  []json.RawMessage `json:"plans"`
	Caller string            `json:"caller"`
}

func (a *app) fetchStatus(ctx context.Context) (*answer, *statusDoc, error) {
	ans, err := a.client().do(ctx, http.MethodGet, "/status", nil, nil)
	if err != nil {
		return nil, nil, err
	}
	var st statusDoc
	if err := decode(ans, "GET /status", &st); err != nil {
		return nil, nil, err
	}
	return ans, &st, nil
}

func statusCommand() command {
	return command{
		name: "status", usage: "status", summary: "show the daemon's state: mute, quiet hours, queue, voice, plans", data: true,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("status")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				ans, st, err := a.fetchStatus(ctx)
				if err != nil {
					return a.fail(err)
				}
				if a.opts.json {
					a.printJSON(ans.body)
					return exitOK
				}
				a.printStatus(st, time.Now())
				return exitOK
			}
		},
	}
}

func (a *app) printStatus(st *statusDoc, now time.Time) {
	w := a.stdout
	c := a.client()
	fmt.Fprintf(w, "talkd %s at %s (%s mode, you are %q)\n", st.Version, c.base, st.Mode, st.Caller)
	row := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-12s %s\n", label, fmt.Sprintf(format, args...))
	}
	var vi voiceInfo
	haveVoice := len(st.Voice) > 0 && json.Unmarshal(st.Voice, &vi) == nil
	if haveVoice && vi.Audible != nil && !*vi.Audible {
		// First, before everything else: a voice nobody hears is the one state a user
		// must not miss.
		row("WARNING", "NOTHING IS HEARD: %s (talk doctor says what to fix)", vi.Silent)
	}
	row("config", "%s", st.Config)
	row("mute", "%s", st.Mute.human(now))
	switch {
	case st.Quiet.Active:
		row("quiet hours", "ACTIVE now (%s): announcements are discarded unless --now", st.Quiet.Window)
	case len(st.Quiet.Windows) == 0:
		row("quiet hours", "none configured")
	default:
		row("quiet hours", "not now (%s)", strings.Join(st.Quiet.Windows, ", "))
	}
	speaking := "nothing speaking"
	if sp := st.Queue.Speaking; sp != nil {
		speaking = fmt.Sprintf("speaking %s [%s] %s", sp.ID, sp.Priority, shorten(sp.Text, 50))
	}
	row("queue", "%d waiting (capacity %d), %s", st.Queue.Waiting, st.Queue.Capacity, speaking)
	if haveVoice {
		for _, l := range vi.lines() {
			fmt.Fprintln(w, l)
		}
	}
	var limits []string
	for _, p := range []string{"low", "normal", "high"} {
		if v, ok := st.Rules.RateLimit[p]; ok {
			limits = append(limits, p+" "+v)
		}
	}
	row("rate limit", "%s; stale after %s", strings.Join(limits, ", "), st.Rules.MaxWait)
	if len(st.CORS) == 0 {
		row("cors", "closed (no browser origin may call /speak)")
	} else {
		row("cors", "%s", strings.Join(st.CORS, ", "))
	}
	if len(st.Plans) == 0 {
		row("plans", "none")
	} else {
		for i, p := range st.Plans {
			label := ""
			if i == 0 {
				label = "plans"
			}
			row(label, "%s", planSummary(p))
		}
	}
}

// planSummary shows one entry of /status plans: key, access, revision, counts.
func planSummary(raw json.RawMessage) string {
	var p struct {
		Key      string `json:"key"`
		Access   string `json:"access"`
		Revision *int64 `json:"revision"`
		Nodes    *int   `json:"nodes"`
		Warnings *int   `json:"warnings"`
		Lang     string `json:"lang"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Key == "" {
		return string(raw)
	}
	s := p.Key
	var parts []string
	if p.Access != "" {
		parts = append(parts, p.Access)
	}
	if p.Revision != nil {
		parts = append(parts, fmt.Sprintf("revision %d", *p.Revision))
	}
	if p.Nodes != nil {
		parts = append(parts, fmt.Sprintf("%d nodes", *p.Nodes))
	}
	if p.Warnings != nil {
		parts = append(parts, count(*p.Warnings, "warning"))
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func voicesCommand() command {
	return command{
		name: "voices", usage: "voices", summary: "show the speech provider and sink, and the voices the engine offers", data: true,
		detail: `Uses the daemon's GET /voices when it has one; otherwise what GET /status reports about
the voice (provider, sink and why auto picked them, the providers "say --provider" may
name). With --json the daemon's JSON is printed unchanged (of /status: the "voice" object).`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("voices")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				return a.voices(ctx)
			}
		},
	}
}

func (a *app) voices(ctx context.Context) int {
	c := a.client()
	ans, err := c.do(ctx, http.MethodGet, "/voices", nil, nil)
	var re *refusedError
	if errors.As(err, &re) && re.status == http.StatusNotFound && re.code == "not_found" {
		// This daemon has no voice list endpoint: show what /status says.
		_, st, serr := a.fetchStatus(ctx)
		if serr != nil {
			return a.fail(serr)
		}
		if a.opts.json {
			a.printJSON(st.Voice)
			return exitOK
		}
		var vi voiceInfo
		if err := json.Unmarshal(st.Voice, &vi); err != nil {
			return a.fail(fmt.Errorf("the voice part of GET /status is not the expected JSON: %w", err))
		}
		for _, l := range vi.lines() {
			fmt.Fprintln(a.stdout, l)
		}
		return exitOK
	}
	if err != nil {
		return a.fail(err)
	}
	if a.opts.json {
		a.printJSON(ans.body)
		return exitOK
	}
	var doc struct {
		voiceInfo
		Voices []struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Lang   string `json:"lang"`
			Gender string `json:"gender"`
		} `json:"voices"`
		Error string `json:"error"`
	}
	if err := decode(ans, "GET /voices", &doc); err != nil {
		return a.fail(err)
	}
	for _, l := range doc.lines() {
		fmt.Fprintln(a.stdout, l)
	}
	if doc.Error != "" {
		fmt.Fprintf(a.stdout, "%-12s %s\n", "voices", doc.Error)
	}
	for _, v := range doc.Voices {
		fmt.Fprintf(a.stdout, "  %-24s %-8s %-8s %s\n", v.ID, v.Lang, v.Gender, v.Name)
	}
	return exitOK
}

func versionCommand() command {
	return command{
		name: "version", usage: "version", summary: "print the version of talk and, when reachable, of the daemon", data: true,
		detail: `Always exits 0: an unreachable daemon is reported, not an error. The daemon gets 2s to
answer unless --timeout says otherwise. --json prints {"talk":"…","talkd":"…" or null,"url":"…"}.`,
		define: func(fs *flag.FlagSet, a *app) func(context.Context, []string) int {
			return func(ctx context.Context, args []string) int {
				if len(args) > 0 {
					cmd, _ := findCommand("version")
					return a.usage(cmd, "unexpected argument %q", args[0])
				}
				if a.opts.timeout == defaultTimeout {
					// A version check should not hang a prompt or a script for long.
					a.opts.timeout = 2 * time.Second
				}
				c := a.client()
				_, st, err := a.fetchStatus(ctx)
				if a.opts.json {
					doc := map[string]any{"talk": version, "talkd": nil, "url": c.base}
					if err == nil {
						doc["talkd"] = st.Version
					}
					raw, _ := json.Marshal(doc)
					a.printJSON(raw)
					return exitOK
				}
				fmt.Fprintf(a.stdout, "talk %s\n", version)
				if err != nil {
					fmt.Fprintf(a.stdout, "talkd: no answer from %s (%v)\n", c.base, shortErr(err))
					return exitOK
				}
				fmt.Fprintf(a.stdout, "talkd %s at %s\n", st.Version, c.base)
				return exitOK
			}
		},
	}
}

func shortErr(err error) string {
	var ue *unreachableError
	if errors.As(err, &ue) {
		if ue.timeout > 0 {
			return "no answer within " + ue.timeout.String()
		}
		return rootCause(ue.err).Error()
	}
	return err.Error()
}
