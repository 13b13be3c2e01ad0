// Package plans serves the configured Werkbaum plan files to agents: reads with a base
// (revision + checksum), and writes that are checked against that base, run through the
// notation engine and its guards, written atomically, and journalled by request id so a
// retried request is answered from the journal instead of being applied twice.
//
// Durability: a write is recorded as pending in the journal before the file is renamed
// into place and settled after; on start, pending entries are settled by comparing the
// file with the checksum the write would have produced. A crash therefore leaves the old
// or the new file, and the journal says which.
//
// Where things live: commit.go is the one journalled commit every write runs (an agent's
// verb or an editor's PATCH, over a file or a document server: a change over a target);
// errors.go holds every error of the store with its Kind, which internal/api renders once
// for both doors; journal.go the revisions' file check (revisionFor, over
// journal.Revisions), the start-up settle (journal.Recover, which
// calls the registered participants, the document store, instead of their code) and the
// file check of a pending entry whose writer is gone (settleByFile, over
// journal.Revisions.SettleApplied); documents*.go the document doors over
// plans/docstore (feed, history, titles, restore, the version record each kind of write
// gets); roots.go the store's side of the plan set (resolve, Reconfigure); filecache.go
// the summaries; follow.go reading what the follower reports. Below it, and importing
// nothing of it: plans/planfs (the plan set, roots and refs, file identity, the folder
// lock and WriteAtomic, the text cache, the follower's file side), plans/journal (the
// database interface, the bbolt adapter, the group commit, the journal's layout,
// migration, entries and recovery, its memory and saver, the revisions), plans/remote (the
// document-server client), plans/docs (the protocol's bounds, the version log's layout and
// retention rule) and plans/docstore (the document ids, the version log's reads and writes
// in the state database, and each document's memory under the one mutex that feed, history
// and titles share, and its journal participant). The git mirror and the announcements are
// a WriteRecorder told by WriteEvents.
package plans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docstore"
	"talkd/internal/werkbaum/plans/journal"
	"talkd/internal/werkbaum/plans/planfs"
	"talkd/internal/werkbaum/plans/remote"
)

// Serializer runs fn alone among the calls with the same key (queue.Lanes).
type Serializer interface {
	Do(ctx context.Context, key string, fn func() error) error
}

// Options wire a Service.
type Options struct {
	Plans []config.Plan
	// Roots are folders whose *.werkbaum files are plans named <root>:<path> (local
	// mode only; config refuses them with clients).
	Roots  []config.Root
	Engine *werkbaum.Engine
	DB     Database
	Lanes  Serializer
	Log    *slog.Logger
	Now    func() time.Time
	// JournalLimit bounds the journal per plan; default 10,000 entries.
	JournalLimit int
	// Recorder, if set, is told about every write that changed a plan (the git mirror and
	// the announcements) and reports the state of a mirrored plan's mirror.
	Recorder WriteRecorder
	// MaxFileBytes is the largest plan file the store reads; default the engine's input
	// limit (werkbaum.DefaultMaxInputBytes). Larger files are refused before reading.
	MaxFileBytes int64
	// LockTimeout bounds the wait for the plan folder's lock (another talkd writing the
	// same folder); default 10 s.
	LockTimeout time.Duration
	// FollowEvery is how often the plan files are looked at for changes made outside
	// talkd (planfs/follow.go); 0 does not follow them: a change is then noticed by the next
	// request that reads the plan.
	FollowEvery time.Duration
	// FollowWorked, if set, is told when the follower has read or analysed a changed plan
	// (work done without a request).
	FollowWorked func()
	// WarmAfter is how long the agents' writes must pause before the plan written last
	// gets its whole view made from the model the write left in the engine's memo (warm.go);
	// 0 selects the default (250 ms), a negative value turns it off.
	WarmAfter time.Duration
}

// WriteRecorder is what the store knows of the git mirror and the announcements (package
// mirror, which imports plans): it is told about each applied write by a WriteEvent that
// carries everything it needs, the plan's settings included, so it keeps no plan list.
type WriteRecorder interface {
	// AfterWrite runs after every write that changed a plan, still inside the plan's lane
	// (so mirror commits are queued in write order); it must return quickly and never
	// undo the write. The report it returns (if not nil) runs after the lane is released
	// (it may wait for the mirror's commit) and its answer is the write result's "mirror".
	AfterWrite(ctx context.Context, ev WriteEvent) (report func(context.Context) string)
	// State is the git mirror's state of a plan with mirror = true (last commit and its
	// state), for plans_list and /status; nil leaves it out.
	State(key string) any
}

// WriteEvent describes an applied write for the WriteRecorder.
type WriteEvent struct {
	Plan string
	Path string
	Lang string
	// Mirror and Announce are the plan's settings as this write resolved the plan (a
	// reload meanwhile does not change them for it).
	Mirror, Announce bool
	Tool             string
	RequestID        string
	Author           Author
	Revision         uint64
	OldText          string
	NewText          string
}

// Service is the plan store: files, revisions and the request journal.
type Service struct {
	engine *werkbaum.Engine
	journalState
	lanes    Serializer
	log      *slog.Logger
	now      func() time.Time
	limit    int
	recorder WriteRecorder // nil: no mirror, no announcements

	// set is the plan set now served (Reconfigure swaps it); look plans up only
	// through resolve (or Plan), once per request.
	set     atomic.Pointer[planfs.Set]
	reconf  sync.Mutex // one Reconfigure at a time
	ready   sync.Map   // plan key → struct{}: journal bucket made and recovered by this process
	readyMu sync.Mutex // held while a bucket is made and recovered

	maxBytes    int64          // the largest plan file read (the engine's input limit)
	lockTimeout time.Duration  // the longest wait for the plan folder's lock
	folders     planfs.Folders // what writes into one folder share: its lock and its sync
	texts       *planfs.Cache  // the text last read of each plan's file, and its inspect views
	cache       *cache         // the summaries of plans_list and /status
	// warming counts the background warm-ups of summaries (tests wait for them: a warm-up
	// reads the plan, and its first read records the revision).
	warming sync.WaitGroup

	// docs is the document store (package docstore; set when the journal opens);
	// agentClientID is the document client id of this process's agent writes
	// ("mcp-<random>", one per process), used for the plan's own document and for plans
	// on document servers (remote.go).
	docs          *docstore.Store
	agentClientID string
	remote        *remote.Client // HTTP client of plans kept on document servers (remote.go)
	// participants take part in the journal's settles (journal.Recover): the document
	// store.
	participants []journal.Participant
	follow       *planfs.Follower // nil: changes are noticed by requests only (planfs/follow.go)
	afterWrites  *warmer          // the view made once the agents' writes pause (warm.go)
}

// New opens the service and settles journal entries a crash left pending.
func New(opts Options) (*Service, error) {
	s := &Service{
		engine: opts.Engine, lanes: opts.Lanes, log: opts.Log, now: opts.Now,
		limit: opts.JournalLimit, recorder: opts.Recorder,
		maxBytes: opts.MaxFileBytes, lockTimeout: opts.LockTimeout, texts: planfs.NewCache(), cache: newCache(),
		remote: remote.NewClient(),
	}
	s.agentClientID = newAgentClientID()
	if s.maxBytes <= 0 {
		s.maxBytes = werkbaum.DefaultMaxInputBytes
	}
	if s.lockTimeout <= 0 {
		s.lockTimeout = 10 * time.Second
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.limit <= 0 {
		s.limit = 10000
	}
	warmAfter := opts.WarmAfter
	if warmAfter == 0 {
		warmAfter = defaultWarmAfter
	}
	if s.engine == nil {
		warmAfter = -1
	}
	s.afterWrites = newWarmer(warmAfter, s.warmView)
	set, err := planfs.NewSet(opts.Plans, opts.Roots)
	if err != nil {
		return nil, fmt.Errorf("plans: %w", err)
	}
	s.set.Store(set)
	if err := s.openJournal(opts.DB, set); err != nil {
		return nil, err
	}
	if opts.FollowEvery > 0 {
		s.follow = planfs.NewFollower(opts.FollowEvery, planfs.FollowWindow, opts.FollowWorked) // before any lookup
	}
	s.warm(set.Keys())
	if s.follow != nil {
		s.startFollower()
	}
	return s, nil
}

// Plan returns the configuration of a plan: a configured one, or a plan file below a
// root (key "<root>:<path>", Lang the root's), checked as every request checks it.
func (s *Service) Plan(key string) (config.Plan, bool) {
	p, err := s.resolve(key)
	p.Release()
	return p.Plan, err == nil
}

// Lookup says whether key names a plan now: nil, or an error that wraps ErrUnknownPlan
// and, for a key below a root (*AddressError), says what is wrong with it.
func (s *Service) Lookup(key string) error {
	p, err := s.resolve(key)
	p.Release()
	return err
}

// Base identifies the content a client saw: the daemon's revision number and the SHA-256
// of the file's bytes. Writes are applied only on the current checksum.
type Base struct {
	Revision uint64 `json:"revision"`
	Checksum string `json:"checksum"`
}

// Author is who asked for a write: the authenticated client and the agent name it claims
// (kept in the journal's entries).
type Author = journal.Author

// Snapshot is a plan's text as read now, with its base.
type Snapshot struct {
	Text  string `json:"text"`
	Base  Base   `json:"base"`
	Lines int    `json:"lines"`
}

// Read returns the plan's text and base; a change made outside the daemon is noticed by
// the file's identity and checksum and gets a new revision. An unchanged file is neither
// read nor hashed again (load).
func (s *Service) Read(ctx context.Context, key string) (*Snapshot, error) {
	p, err := s.resolve(key)
	return s.readLooked(ctx, key, p, err)
}

// readLooked is Read of a plan looked up by resolve or lookup (err: the lookup's error).
func (s *Service) readLooked(ctx context.Context, key string, p planfs.Ref, err error) (*Snapshot, error) {
	if err == nil {
		defer p.Release()
		var snap *Snapshot
		if snap, err = s.read(ctx, p); err == nil {
			return snap, nil
		}
	}
	if errors.Is(err, ErrPlanMissing) {
		// A configured plan's file or a root's file is gone: its document is deleted.
		s.noteDeleted(key)
	}
	return nil, err
}

// read is Read of a plan already looked up.
func (s *Service) read(ctx context.Context, p planfs.Ref) (*Snapshot, error) {
	key := p.Key
	if p.Remote() {
		return s.readRemote(ctx, key, p.Plan)
	}
	var text, sum string
	var rev uint64
	for attempt := 0; ; attempt++ {
		var err error
		text, sum, err = s.texts.Load(p, s.maxBytes)
		if err == nil {
			rev, err = s.revisionFor(p, sum)
			if err == nil {
				break
			}
		} else if !errors.Is(err, errPlanSwapped) {
			s.log.Warn(readFailure(err), "plan", key, "path", p.Path, "err", err)
			return nil, err
		}
		// A write landed between the read and the revision (or swapped the file between
		// the check and the open): read the new text. A file that keeps changing under us
		// (an editor saving in a loop) gives up eventually.
		if attempt == 9 || ctx.Err() != nil || !(errors.Is(err, errFileMoved) || errors.Is(err, errPlanSwapped)) {
			s.texts.Forget(key)
			return nil, fmt.Errorf("plan %s: %w", key, err)
		}
		s.texts.Forget(key)
	}
	s.docs.Note(key, rev, text, s.now)
	return &Snapshot{Text: text, Base: Base{Revision: rev, Checksum: sum}, Lines: countLines(text)}, nil
}

// readFailure is the log message of a plan read that failed: a user looking for why a
// plan cannot be read must not be told the file was refused when the daemon ran out of
// descriptors or the file is gone.
func readFailure(err error) string {
	switch {
	case errors.Is(err, ErrFileRefused):
		return "plan file refused"
	case errors.Is(err, ErrPlanMissing):
		return "plan file missing"
	default:
		return "plan file unreadable"
	}
}

// countLines counts physical lines as an editor shows them (a final newline does not
// start another line).
func countLines(text string) int {
	if text == "" {
		return 0
	}
	n := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// Inspected is the inspect view with the base it was computed on.
type Inspected struct {
	Base Base
	// JSON is the answer of werkbaum_inspect: {"base", "nodes", "warnings", "path"} (the
	// engine's inspect object with the base spliced in front). It is shared with the
	// store's cache and must not be modified.
	JSON json.RawMessage
}

// Inspect runs the engine's inspect view on the current text. The answer is cached per
// plan by content, revision and options, so inspecting an unchanged plan costs an open,
// a stat and a revision lookup, and hands out the cached bytes without copying them.
func (s *Service) Inspect(ctx context.Context, key string, opts werkbaum.InspectOptions) (*Inspected, error) {
	snap, err := s.readResolved(ctx, key)
	if err != nil {
		return nil, err
	}
	raw, err := s.inspectAnswer(ctx, key, snap, opts)
	if err != nil {
		return nil, err
	}
	return &Inspected{Base: snap.Base, JSON: raw}, nil
}

// readResolved reads the plan the way the engine's readers do (Inspect, Outline).
func (s *Service) readResolved(ctx context.Context, key string) (*Snapshot, error) {
	p, err := s.resolve(key)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	return s.read(ctx, p)
}

// inspectAnswer is the cached inspect answer of snap's content, computed on a miss.
func (s *Service) inspectAnswer(ctx context.Context, key string, snap *Snapshot, opts werkbaum.InspectOptions) (json.RawMessage, error) {
	vk := viewKey(snap.Base.Revision, opts)
	if raw, ok := s.texts.View(key, snap.Base.Checksum, vk); ok {
		return raw, nil
	}
	raw, err := s.engine.InspectView(ctx, snap.Text, opts)
	if err != nil {
		return nil, err
	}
	answer := withBase(snap.Base, raw) // a copy: the engine's view stays the engine's
	s.texts.StoreView(key, snap.Base.Checksum, vk, answer)
	return answer, nil
}

// Summary is one row of plans_list.
type Summary struct {
	Key      string `json:"key"`
	Revision uint64 `json:"revision"`
	Checksum string `json:"checksum"`
	Lines    int    `json:"lines"`
	Nodes    int    `json:"nodes"`
	Warnings int    `json:"warnings"`
	Lang     string `json:"lang"`
	Error    string `json:"error,omitempty"`
	// Analysis is "pending" while the engine still counts this content (nodes and
	// warnings are then 0 and unknown) and "failed" when it could not (Error says why).
	Analysis string `json:"analysis,omitempty"`
	// Mirror is the plan's git mirror state (WriteRecorder.State), absent when not mirrored.
	Mirror any `json:"mirror,omitempty"`
}

// Summarize counts a plan's nodes and warnings. It never runs the engine in the caller's
// request: the counts of each content are computed once, in the background (at start,
// when first asked for, or once the agents' writes pause, warm.go: not on every write,
// which would double the engine's work under a stream of writes), and kept by checksum,
// including a failure such as the engine running out of time, until the plan changes. A
// summary still being computed after summaryWait is answered with Analysis "pending" and
// no counts; one of a plan below a root at once (summaryWaitFor: a listing may hold a
// thousand of them).
func (s *Service) Summarize(ctx context.Context, key string) Summary {
	// A listing summarizes every plan below the roots; that is no use of one (the
	// follower would look at them all), only a sign that the daemon is in use.
	s.follow.Busy()
	p, err := s.lookup(key)
	sum := Summary{Key: key, Lang: p.Lang}
	if err != nil {
		sum.Error = err.Error()
		return sum
	}
	defer p.Release()
	if s.recorder != nil && p.Mirror {
		sum.Mirror = s.recorder.State(key)
	}
	readCtx := ctx
	if p.Remote() {
		// A status must not wait for a slow document server as long as a tool call
		// does: /status and plans_list summarize every plan in turn.
		var cancel context.CancelFunc
		readCtx, cancel = context.WithTimeout(ctx, remoteSummaryWait)
		defer cancel()
	}
	snap, err := s.read(readCtx, p)
	if err != nil {
		sum.Error = err.Error()
		if p.Remote() && ctx.Err() == nil && readCtx.Err() != nil {
			sum.Error = fmt.Sprintf("the document server %s did not answer within %v, as long as a status waits (tool calls wait up to %v)",
				remote.HostOf(p.URL), remoteSummaryWait, s.remote.Timeout())
		}
		return sum
	}
	sum.Revision, sum.Checksum, sum.Lines = snap.Base.Revision, snap.Base.Checksum, snap.Lines
	ent := s.summary(ctx, key, snap, summaryWaitFor(p))
	switch {
	case ent == nil:
		sum.Analysis = "pending"
	case ent.err != "":
		sum.Error = ent.err
		sum.Analysis = "failed"
	default:
		sum.Nodes, sum.Warnings = ent.nodes, ent.warnings
	}
	return sum
}
