// Package werkbaum runs the Werkbaum notation — plain-text work-breakdown plans — for talkd.
//
// The notation's rules live in engine-neutral JavaScript (js/*.js, embedded in the binary)
// so that exactly the same code runs here in goja, under Node for the unit tests and in a
// browser. This package is the Go host: an Engine compiles the scripts once, keeps a small
// pool of goja runtimes, passes strings in and JSON out, bounds every call by a deadline
// and an input size limit, and offers a typed API (Analyze, Inspect, Warnings, Apply,
// Guard) for the plan store to build on. A runaway plan costs one error, never the daemon.
package werkbaum

import (
	"cmp"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// scripts holds the notation: every js/*.js file, and js/order.json, the order in which
// they run in one scope (js/00_ns.js declares the Werkbaum namespace; js/90_api.js the single
// entry point). The order is an explicit list, not the files' names, and the same list
// drives the Node tests' loader (js/test/load.js), so both hosts load one program.
//
//go:embed js/*.js js/order.json
var scripts embed.FS

// scriptOrder reads js/order.json and checks it against the embedded scripts: every
// js/*.js file listed exactly once, nothing listed that is not there. A mismatch is a
// build mistake (a new file not added to the list) and fails NewEngine with its name.
func scriptOrder() ([]string, error) {
	raw, err := scripts.ReadFile("js/order.json")
	if err != nil {
		return nil, fmt.Errorf("werkbaum: read js/order.json: %w", err)
	}
	var list struct {
		Order []string `json:"order"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("werkbaum: js/order.json: %w", err)
	}
	embedded, err := fs.Glob(scripts, "js/*.js")
	if err != nil {
		return nil, fmt.Errorf("werkbaum: list embedded scripts: %w", err)
	}
	unlisted := make(map[string]bool, len(embedded))
	for _, name := range embedded {
		unlisted[name] = true
	}
	names := make([]string, 0, len(list.Order))
	for _, f := range list.Order {
		name := "js/" + f
		if !unlisted[name] {
			return nil, fmt.Errorf("werkbaum: js/order.json lists %q, which is not an embedded script or is listed twice", f)
		}
		delete(unlisted, name)
		names = append(names, name)
	}
	if len(unlisted) > 0 {
		missing := make([]string, 0, len(unlisted))
		for name := range unlisted {
			missing = append(missing, name)
		}
		sort.Strings(missing)
		return nil, fmt.Errorf("werkbaum: %v not listed in js/order.json; add each where it must run", missing)
	}
	return names, nil
}

// Default limits. They are generous for hand-written plans (the largest real plan has about
// 1,400 lines and 80 KB) and small enough that a hostile input cannot stall the daemon.
const (
	DefaultRuntimes      = 2
	DefaultTimeout       = 2 * time.Second
	DefaultTimeoutPerMiB = 10 * time.Second
	DefaultMaxInputBytes = 2 << 20
	DefaultCacheEntries  = 64
	// DefaultCacheBytes bounds the answers the result cache holds (its newest always
	// stays): a few inspects of large plans, not 64 of them.
	DefaultCacheBytes = 32 << 20
)

// JSONBodyLimit is the largest JSON message that carries a text of textBytes bytes: the
// /mcp body (a werkbaum_write of a whole plan) and a document server's answer. In JSON one
// byte of text takes at most 6 bytes (a control character or, from encoders that escape
// HTML like Go's, <, > and & as \u00XX; a 4-byte UTF-8 character as two \uXXXX escapes is
// 12 for 4), so 6 × the text plus 64 KiB for the envelope (arguments, _meta, the rest of
// the document) surely fits any text the engine accepts; a larger body could only fail
// there.
func JSONBodyLimit(textBytes int64) int64 { return 6*textBytes + 64<<10 }

// memoIdle is how long a runtime must sit unused before the engine trims the scripts' memo
// in it (js/05_text.js _trimMemo) to the current text of each plan it worked on last: the
// memo is for the calls of one write, which follow each other within milliseconds, and a
// plan's current text is what an agent's next write on it, seconds later, starts from (its
// analysis is what that write would otherwise make again, most of a write's time on a large
// plan). The host empties the memos once it is idle as a whole (DropMemos).
const memoIdle = 2 * time.Second

// maxCallStack bounds JavaScript recursion so that a deeply nested plan fails with an
// error instead of growing the goja stack without limit.
const maxCallStack = 100000

// Options configure an Engine. Zero values select the defaults.
type Options struct {
	// Runtimes bounds the pool of goja runtimes (default 2). Runtimes are created lazily
	// and reused; a call waits for a free one (honouring its context).
	Runtimes int
	// Timeout is the deadline of one call (default 2s); a context deadline that is
	// earlier wins. A call that runs past it is interrupted and fails with ErrTimeout.
	Timeout time.Duration
	// TimeoutPerMiB extends the deadline of a call by this much per MiB of its largest
	// plan text (default 10s; see Engine.timeoutFor). Negative: no extension.
	TimeoutPerMiB time.Duration
	// MaxInputBytes bounds every plan text passed in (default 2 MiB). Larger input fails
	// with ErrTooLarge before any JavaScript runs.
	MaxInputBytes int
	// CacheEntries is the size of the LRU cache of read results (inspect, analyze,
	// warnings) keyed by the text's checksum and the options (default 64). Negative
	// disables it and also the scripts' own memo of the last few parsed and analysed
	// texts per runtime (js/05_text.js Memo), so that every call does the full work.
	CacheEntries int
	// Logger receives debug and warning records (default slog.Default()).
	Logger *slog.Logger
	// Persist, when set, keeps the read results of the result cache across restarts
	// (persist.go). It needs the result cache (CacheEntries >= 0). The caller owns it
	// and closes it after the engine's last call.
	Persist *Persist
}

func (o Options) withDefaults() Options {
	if o.Runtimes <= 0 {
		o.Runtimes = DefaultRuntimes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.TimeoutPerMiB == 0 {
		o.TimeoutPerMiB = DefaultTimeoutPerMiB
	}
	if o.MaxInputBytes <= 0 {
		o.MaxInputBytes = DefaultMaxInputBytes
	}
	if o.CacheEntries == 0 {
		o.CacheEntries = DefaultCacheEntries
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Engine runs the embedded notation scripts in a bounded pool of goja runtimes. It is safe
// for concurrent use; create one per process and share it.
type Engine struct {
	opts     Options
	programs []*goja.Program
	names    []string // file name per program, for load errors
	log      *slog.Logger
	cache    *lru     // nil when disabled
	flights  flights  // cached calls being produced (cachedCall)
	sums     textSums // the hashes of the texts asked about last (cachedCall)
	// scriptID is the SHA-256 of the scripts run (names and sources, in order): part of
	// the disk cache's key, so changed scripts never find an old answer.
	scriptID [32]byte

	created  atomic.Int64  // runtimes built so far (tests and debugging)
	memoIdle time.Duration // memoIdle, shortened by tests

	slots    chan struct{} // one token per runtime that may exist (borrowed or idle)
	mu       sync.Mutex
	idle     []*jsRuntime // warm runtimes, reused last-in first-out (ordered by released)
	releases uint64       // releases so far, under mu: the runtimes' released stamps

	vocab Vocabulary // Werkbaum.vocabulary(), read from the first runtime

	// lines matches the parser's common lines for all runtimes (linegroups.go), compiled
	// from the first runtime's pattern.
	linesOnce sync.Once
	lines     *lineMatcher
	linesErr  error
}

// jsRuntime is one goja VM with the notation loaded and its entry point resolved.
type jsRuntime struct {
	vm *goja.Runtime
	// callPieces is Werkbaum.callPieces: call whose answer is a list of JSON pieces, which
	// the host joins while it watches the deadline (goja's JSON.stringify of a large answer
	// runs in Go, out of the interrupt's reach).
	callPieces goja.Callable
	// stopped is the reason of the interrupt once the call's deadline or context fired,
	// for the Go code a call runs after its script (see joinPieces).
	stopped atomic.Pointer[error]
	// callParts is Werkbaum.callParts: an inspect whose node records Go writes (view.go).
	callParts goja.Callable
	// callValue is Werkbaum.callValue: call returning the answer, not its JSON (apply).
	callValue goja.Callable
	// clearMemo empties the scripts' memo, trimMemo keeps only the plans' current texts; both
	// nil when the memo is off.
	clearMemo, trimMemo goja.Callable
	// released orders the idle runtimes: the stamp of its last release (Engine.releases).
	released uint64
	// trim fires memoIdle after the runtime's last release and trims its memo if it is
	// still idle. One timer per runtime, reset by every release (a timer per call would
	// pile up hundreds of thousands of goroutines at high call rates).
	trim *time.Timer
}

// NewEngine compiles the embedded scripts once and returns an Engine whose runtimes are
// created on first use.
func NewEngine(opts Options) (*Engine, error) {
	return newEngine(opts)
}

// newEngine is NewEngine with extra script sources run after the embedded ones. Only tests
// pass extra sources (e.g. a deliberately looping method to exercise the deadline); there
// is no way to reach this from outside the package.
func newEngine(opts Options, extra ...string) (*Engine, error) {
	opts = opts.withDefaults()
	names, err := scriptOrder()
	if err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, log: opts.Logger, slots: make(chan struct{}, opts.Runtimes), memoIdle: memoIdle}
	id := sha256.New()
	for _, name := range names {
		src, err := scripts.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("werkbaum: read %s: %w", name, err)
		}
		writeScriptID(id, name, string(src))
		p, err := goja.Compile(name, string(src), false)
		if err != nil {
			return nil, fmt.Errorf("werkbaum: compile %s: %w", name, err)
		}
		e.programs = append(e.programs, p)
		e.names = append(e.names, name)
	}
	for i, src := range extra {
		writeScriptID(id, fmt.Sprintf("extra-%d.js", i), src)
		p, err := goja.Compile(fmt.Sprintf("extra-%d.js", i), src, false)
		if err != nil {
			return nil, fmt.Errorf("werkbaum: compile extra script %d: %w", i, err)
		}
		e.programs = append(e.programs, p)
		e.names = append(e.names, fmt.Sprintf("extra-%d.js", i))
	}
	e.scriptID = [32]byte(id.Sum(nil))
	if opts.CacheEntries > 0 {
		e.cache = newLRU(opts.CacheEntries, DefaultCacheBytes)
	}
	// Build one runtime now so that a broken script fails NewEngine, not the first call.
	rt, err := e.newRuntime()
	if err != nil {
		return nil, err
	}
	if e.vocab, err = readVocabulary(rt); err != nil {
		return nil, err
	}
	e.idle = append(e.idle, rt)
	return e, nil
}

// writeScriptID adds one script to the scripts' identity, its name and source each
// preceded by its length so that no two lists of scripts hash alike.
func writeScriptID(h hash.Hash, name, src string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(name)))
	h.Write(n[:])
	io.WriteString(h, name)
	binary.BigEndian.PutUint64(n[:], uint64(len(src)))
	h.Write(n[:])
	io.WriteString(h, src)
}

// newRuntime makes a fresh VM and runs every compiled program in it.
func (e *Engine) newRuntime() (*jsRuntime, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStack)
	for i, p := range e.programs {
		if _, err := vm.RunProgram(p); err != nil {
			return nil, fmt.Errorf("%w: load %s: %v", ErrEngine, e.names[i], err)
		}
	}
	ns := vm.Get("Werkbaum")
	if ns == nil || goja.IsUndefined(ns) {
		return nil, fmt.Errorf("%w: the scripts define no Werkbaum namespace", ErrEngine)
	}
	fn, ok := goja.AssertFunction(ns.ToObject(vm).Get("callPieces"))
	if !ok {
		return nil, fmt.Errorf("%w: Werkbaum.callPieces is not a function", ErrEngine)
	}
	parts, ok := goja.AssertFunction(ns.ToObject(vm).Get("callParts"))
	if !ok {
		return nil, fmt.Errorf("%w: Werkbaum.callParts is not a function", ErrEngine)
	}
	value, ok := goja.AssertFunction(ns.ToObject(vm).Get("callValue"))
	if !ok {
		return nil, fmt.Errorf("%w: Werkbaum.callValue is not a function", ErrEngine)
	}
	e.linesOnce.Do(func() {
		re, ok := ns.ToObject(vm).Get("_fastLineRE").(*goja.Object)
		if !ok {
			e.linesErr = fmt.Errorf("%w: the scripts define no Werkbaum._fastLineRE", ErrEngine)
			return
		}
		if e.lines, e.linesErr = newLineMatcher(re.Get("source").String(), re.Get("flags").String()); e.linesErr != nil {
			e.linesErr = fmt.Errorf("%w: %v", ErrEngine, e.linesErr)
		}
	})
	if e.linesErr != nil {
		return nil, e.linesErr
	}
	rt := &jsRuntime{vm: vm, callPieces: fn, callParts: parts, callValue: value}
	if err := e.lines.install(rt, ns.ToObject(vm)); err != nil {
		return nil, err
	}
	if e.opts.CacheEntries < 0 {
		setMemo, ok := goja.AssertFunction(ns.ToObject(vm).Get("_setMemoSize"))
		if !ok {
			return nil, fmt.Errorf("%w: Werkbaum._setMemoSize is not a function", ErrEngine)
		}
		if _, err := setMemo(goja.Undefined(), vm.ToValue(0)); err != nil {
			return nil, fmt.Errorf("%w: turn the memo off: %v", ErrEngine, err)
		}
	} else {
		rt.clearMemo, ok = goja.AssertFunction(ns.ToObject(vm).Get("_clearMemo"))
		if !ok {
			return nil, fmt.Errorf("%w: Werkbaum._clearMemo is not a function", ErrEngine)
		}
		rt.trimMemo, ok = goja.AssertFunction(ns.ToObject(vm).Get("_trimMemo"))
		if !ok {
			return nil, fmt.Errorf("%w: Werkbaum._trimMemo is not a function", ErrEngine)
		}
	}
	e.created.Add(1)
	return rt, nil
}

// borrow waits for a runtime slot (or ctx) and returns a warm runtime, creating one if no
// idle runtime is left.
func (e *Engine) borrow(ctx context.Context) (*jsRuntime, error) {
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("werkbaum: waiting for a runtime: %w", ctx.Err())
	}
	e.mu.Lock()
	var rt *jsRuntime
	if n := len(e.idle); n > 0 {
		rt = e.idle[n-1]
		e.idle[n-1] = nil
		e.idle = e.idle[:n-1]
	}
	e.mu.Unlock()
	if rt != nil {
		return rt, nil
	}
	rt, err := e.newRuntime()
	if err != nil {
		<-e.slots
		return nil, err
	}
	return rt, nil
}

// release gives a runtime back; a nil runtime (discarded after an interrupt) frees its
// slot so that a fresh one is made on demand.
func (e *Engine) release(rt *jsRuntime) {
	if rt != nil {
		if rt.clearMemo != nil { // still ours: only the holder of a runtime touches rt.trim
			if rt.trim == nil {
				rt.trim = time.AfterFunc(e.memoIdle, func() { e.trimMemo(rt) })
			} else {
				rt.trim.Reset(e.memoIdle)
			}
		}
		e.mu.Lock()
		e.releases++
		rt.released = e.releases
		e.idle = append(e.idle, rt)
		e.mu.Unlock()
	}
	<-e.slots
}

// trimMemo trims the memo of rt to the plans' current texts if rt is idle (its timer fires
// memoIdle after its last release).
func (e *Engine) trimMemo(rt *jsRuntime) { e.whileIdle(rt, "trim", rt.trimMemo) }

// DropMemos empties the memo of every idle runtime, and reports how many it emptied: the
// host's call once nothing has asked for a plan for a while (cmd/talkd idle.go), so that an
// idle daemon holds no parsed plan. Runtimes that are borrowed are not touched.
func (e *Engine) DropMemos() int {
	e.mu.Lock()
	idle := slices.Clone(e.idle)
	e.mu.Unlock()
	n := 0
	for _, rt := range idle {
		if rt.clearMemo != nil && e.whileIdle(rt, "clear", rt.clearMemo) {
			n++
		}
	}
	return n
}

// whileIdle calls fn in rt if rt is idle and reports whether it did. It takes a pool slot
// like a call, so nobody borrows rt meanwhile; when every slot is taken, or rt is borrowed,
// it does nothing (the timer of rt's next release tries again). rt keeps its place in the
// pool's order: it is no less recently used for having been trimmed, and the runtime the
// next call borrows should be the one whose memo holds the last text.
func (e *Engine) whileIdle(rt *jsRuntime, what string, fn goja.Callable) bool {
	select {
	case e.slots <- struct{}{}:
	default:
		return false
	}
	defer func() { <-e.slots }()
	e.mu.Lock()
	k := slices.Index(e.idle, rt)
	if k < 0 {
		e.mu.Unlock()
		return false
	}
	e.idle = slices.Delete(e.idle, k, k+1)
	e.mu.Unlock()
	if _, err := fn(goja.Undefined()); err != nil {
		// The runtime is in an unknown state: drop it (a fresh one is built on demand).
		e.log.Warn("werkbaum: "+what+" of a runtime's memo failed; runtime dropped", "err", err)
		return false
	}
	e.mu.Lock()
	at, _ := slices.BinarySearchFunc(e.idle, rt.released, func(r *jsRuntime, released uint64) int {
		return cmp.Compare(r.released, released)
	})
	e.idle = slices.Insert(e.idle, at, rt)
	e.mu.Unlock()
	return true
}

// ShedIdle drops what an idle daemon need not keep and a later call rebuilds cheaply, and
// reports how much it dropped. The daemon calls it once it has answered no request for a
// while (cmd/talkd idle.go), before it hands the freed memory back:
//
//   - the cached answers the disk cache holds (Options.Persist): a whole 10,000-node
//     plan's view is 3.5 MB here and comes back from the disk in about 45 ms; an answer not
//     written there yet stays, since producing it again costs the whole analysis;
//   - the outlines kept beside the cached whole-plan views that stay (about half a view's
//     size again, in many small objects; the engine is their only holder, so they are
//     freed): the first reader that needs one decodes it from the view once (Outline);
//   - the texts whose hash the cache's keys remember (superseded ones the plan store no
//     longer holds among them);
//   - the idle runtimes beyond one (2–3 MB each after a large plan's calls, which leave a
//     runtime's heap grown): one call at a time, the common case after an idle spell,
//     finds the one kept; calls that run at once build the others again (newRuntime).
//
// It never waits for a call; a runtime that is borrowed is not touched.
func (e *Engine) ShedIdle() (outlines, answers, runtimes int) {
	if e.cache != nil {
		p := e.opts.Persist
		outlines, answers = e.cache.shed(func(k diskKey) bool { return p != nil && p.holds(k) })
	}
	e.sums.forget()
	e.mu.Lock()
	// Keep the most recently released runtime (the top of the LIFO stack).
	var dropped []*jsRuntime
	if n := len(e.idle); n > 1 {
		dropped = append(dropped, e.idle[:n-1]...)
		e.idle = append(e.idle[:0], e.idle[n-1])
		clear(e.idle[1:n])
	}
	e.mu.Unlock()
	for _, rt := range dropped {
		// Taken out of the pool above, so no trim of its memo can be under way on it
		// (trimMemo takes it out of the pool first) or start (it finds it missing).
		if rt.trim != nil {
			rt.trim.Stop()
		}
	}
	return outlines, answers, len(dropped)
}

// errorEnvelope is the one failure shape Werkbaum.call returns.
type errorEnvelope struct {
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// textArg is a plan text handed to the script as a string argument of its own: encoding a
// large text into the JSON arguments and parsing it back in JavaScript cost about 1 ms for
// an 80 KB plan (goja's JSON.parse), a tenth of a whole inspect.
type textArg struct {
	name, value string
}

// call runs Werkbaum.call(method, argsJSON, name1, text1, name2, text2) in a borrowed runtime
// under the deadline and returns the JSON result. texts become properties of the arguments
// object (the args' own JSON must not carry them). JavaScript-side input errors become
// *InputError.
func (e *Engine) call(ctx context.Context, method string, args any, texts ...textArg) (json.RawMessage, error) {
	return e.run(ctx, method, args, texts, func(rt *jsRuntime, callArgs []goja.Value) ([]byte, error) {
		res, err := rt.callPieces(goja.Undefined(), callArgs...)
		if err != nil {
			return nil, err
		}
		return rt.joinPieces(res)
	})
}

// haltedError is a call stopped by its deadline or context in the host's own work after the
// script returned; run treats it as an interrupt with the same cause.
type haltedError struct{ cause error }

func (h *haltedError) Error() string { return "stopped: " + h.cause.Error() }

// joinPieces joins the JSON pieces of Werkbaum.callPieces (or returns its JSON error
// string), stopping between pieces once the call was interrupted: converting and copying
// tens of megabytes is the part of a large answer that the script's interrupt cannot reach.
func (rt *jsRuntime) joinPieces(res goja.Value) ([]byte, error) {
	obj, ok := res.(*goja.Object)
	if !ok { // a failure's JSON error answer, or "null"
		return []byte(res.String()), nil
	}
	n := int(obj.Get("length").ToInteger())
	var out []byte
	for i := 0; i < n; i++ {
		if cause := rt.stopped.Load(); cause != nil {
			return nil, &haltedError{*cause}
		}
		out = append(out, obj.Get(strconv.Itoa(i)).String()...)
	}
	return out, nil
}

// callObject runs Werkbaum.callValue for a method that answers an object: the object, or
// (nil) the JSON error answer of a failure, or the error of the call itself.
func (rt *jsRuntime) callObject(callArgs []goja.Value) (obj *goja.Object, failure []byte, err error) {
	res, err := rt.callValue(goja.Undefined(), callArgs...)
	if err != nil {
		return nil, nil, err
	}
	obj, ok := res.(*goja.Object)
	if !ok {
		return nil, []byte(res.String()), nil
	}
	return obj, nil, nil
}

// callText runs Werkbaum.callValue(method, argsJSON, name1, text1, …) for a method whose
// answer is {text} and returns that text as it is: a plan text sent as JSON would be
// escaped by the script and parsed again here (about 10 ms for a 10,000-node plan).
func (e *Engine) callText(ctx context.Context, method string, args any, texts ...textArg) (string, error) {
	var text string
	_, err := e.run(ctx, method, args, texts, func(rt *jsRuntime, callArgs []goja.Value) ([]byte, error) {
		obj, failure, err := rt.callObject(callArgs)
		if obj == nil {
			return failure, err
		}
		v := obj.Get("text")
		if v == nil || !goja.IsString(v) {
			return nil, fmt.Errorf("%w: %s: the answer has no text", ErrEngine, method)
		}
		text = v.String()
		return []byte("{}"), nil // run reads only failures from the JSON; the text went above
	})
	return text, err
}

// callParts runs Werkbaum.callParts(argsJSON, "text", text), an inspect whose node records
// are written in Go from the script's data (view.go), and returns the view's JSON, with its
// outline when outlined (a whole plan's view) and the call succeeded.
func (e *Engine) callParts(ctx context.Context, args any, text string, outlined bool) (json.RawMessage, *Outline, error) {
	var outline *Outline
	raw, err := e.run(ctx, "inspect", args, []textArg{{"text", text}}, func(rt *jsRuntime, callArgs []goja.Value) ([]byte, error) {
		res, err := rt.callParts(goja.Undefined(), callArgs[1:]...)
		if err != nil {
			return nil, err
		}
		parts, ok := res.(*goja.Object)
		if !ok { // a failure: the JSON error answer
			return []byte(res.String()), nil
		}
		var out []byte
		out, outline, err = writeInspectParts(parts, outlined)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrEngine, err)
		}
		return out, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return raw, outline, nil
}

// run borrows a runtime and runs body under the call's deadline. body gets the arguments of
// the script's entry points (method, argsJSON, then the texts as name/value pairs) and
// returns the answer's JSON; JavaScript-side input errors in it become *InputError. A body
// that fails (interrupted, crashed, or malformed data) drops its runtime.
func (e *Engine) run(ctx context.Context, method string, args any, texts []textArg, body func(*jsRuntime, []goja.Value) ([]byte, error)) (json.RawMessage, error) {
	return e.runWithin(ctx, e.timeoutFor(texts), method, args, texts, body)
}

// runWithin is run with the script's time given (a call that does the work of several).
func (e *Engine) runWithin(ctx context.Context, timeout time.Duration, method string, args any, texts []textArg, body func(*jsRuntime, []goja.Value) ([]byte, error)) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("werkbaum %s: %w", method, err)
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("werkbaum %s: encode arguments: %w", method, err)
	}
	rt, err := e.borrow(ctx)
	if err != nil {
		return nil, fmt.Errorf("werkbaum %s: %w", method, err)
	}
	// The deadline bounds the script, so it starts once a runtime is in hand: the wait for a
	// slot and the build of a fresh runtime (all scripts loaded, tens of milliseconds on a
	// busy machine) are not the call's fault. The wait is bounded by ctx alone.
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}

	// The interrupt may fire from a timer or a context goroutine; the guard makes sure it
	// can never land after the call returned (which would poison the next call).
	var guard sync.Mutex
	finished := false
	interrupt := func(reason error) {
		guard.Lock()
		defer guard.Unlock()
		if !finished {
			rt.stopped.Store(&reason)
			rt.vm.Interrupt(reason)
		}
	}
	timer := time.AfterFunc(time.Until(deadline), func() { interrupt(ErrTimeout) })
	stopCtx := context.AfterFunc(ctx, func() { interrupt(ctx.Err()) })

	start := time.Now()
	var callArgs [6]goja.Value
	callArgs[0] = rt.vm.ToValue(method)
	callArgs[1] = rt.vm.ToValue(string(argsJSON))
	n := 2
	for _, t := range texts[:min(len(texts), 2)] {
		callArgs[n] = rt.vm.ToValue(t.name)
		callArgs[n+1] = rt.vm.ToValue(t.value)
		n += 2
	}
	out, callErr := body(rt, callArgs[:n])

	guard.Lock()
	finished = true
	guard.Unlock()
	timer.Stop()
	stopCtx()
	rt.vm.ClearInterrupt()
	rt.stopped.Store(nil)

	if callErr != nil {
		// Interrupted or crashed: the runtime's global state may be half-updated, so it is
		// dropped and a fresh one is built on demand. The pool stays sound.
		e.release(nil)
		var ie *goja.InterruptedError
		var halted *haltedError
		if errors.As(callErr, &ie) || errors.As(callErr, &halted) {
			var cause any
			if halted != nil {
				cause = halted.cause
			} else {
				cause = ie.Value()
			}
			if cause, ok := cause.(error); ok && !errors.Is(cause, ErrTimeout) {
				return nil, fmt.Errorf("werkbaum %s: interrupted: %w", method, cause)
			}
			e.log.Warn("werkbaum call stopped at its deadline", "method", method,
				"ran", time.Since(start).Round(time.Millisecond), "inputBytes", len(argsJSON)+textBytes(texts))
			return nil, fmt.Errorf("werkbaum %s after %v: %w", method, time.Since(start).Round(time.Millisecond), ErrTimeout)
		}
		if errors.Is(callErr, ErrEngine) {
			return nil, fmt.Errorf("werkbaum %s: %w", method, callErr)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrEngine, method, callErr)
	}
	e.release(rt)

	if len(out) > 10 && string(out[:10]) == `{"error":{` {
		var env errorEnvelope
		if err := json.Unmarshal(out, &env); err == nil && env.Error != nil {
			if env.Error.Code == "internal" {
				return nil, fmt.Errorf("%w: %s: %s", ErrEngine, method, env.Error.Message)
			}
			return nil, &InputError{Code: env.Error.Code, Message: env.Error.Message}
		}
	}
	return json.RawMessage(out), nil
}

func textBytes(texts []textArg) int {
	n := 0
	for _, t := range texts {
		n += len(t.value)
	}
	return n
}

// checkSize rejects a text over the input limit before any JavaScript runs.
func (e *Engine) checkSize(what string, n int) error {
	if n > e.opts.MaxInputBytes {
		return fmt.Errorf("%w: %s has %d bytes, the limit is %d", ErrTooLarge, what, n, e.opts.MaxInputBytes)
	}
	return nil
}
