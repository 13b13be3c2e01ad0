// Package plans serves the configured Werkbaum plan files to agents: reads with a base
// (revision + checksum), and writes that are checked against that base, run through the
// notation engine and its guards, written atomically, and journalled by request id so a
// retried request is answered from the journal instead of being applied twice.
//
// Durability: a write is recorded as pending in the journal before the file is renamed
// into place and settled after; on start, pending entries are settled by comparing the
// file with the checksum the write would have produced. A crash therefore leaves the old
// or the new file, and the journal says which.
package plans

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"talkd/internal/config"
	"talkd/internal/werkbaum"
)

// Serializer runs fn alone among the calls with the same key (queue.Lanes).
type Serializer interface {
	Do(ctx context.Context, key string, fn func() error) error
}

// Options wire a Service.
type Options struct {
	Plans  []config.Plan
	Engine *werkbaum.Engine
	DB     Database
	Lanes  Serializer
	Log    *slog.Logger
	Now    func() time.Time
	// JournalLimit bounds the journal per plan; default 10,000 entries.
	JournalLimit int
	// AfterWrite, if set, runs after every write that changed a plan, still inside the
	// plan's lane (so mirror commits stay in write order). Its answer is reported in the
	// write's result as "mirror"; it must never undo the write.
	AfterWrite func(ctx context.Context, ev WriteEvent) string
	// MirrorState, if set, reports a plan's git mirror (last commit and its state) for
	// plans_list and /status; nil answers are left out.
	MirrorState func(key string) any
}

// WriteEvent describes an applied write for AfterWrite (git mirror, announcements).
type WriteEvent struct {
	Plan      string
	Path      string
	Lang      string
	Tool      string
	RequestID string
	Author    Author
	Revision  uint64
	OldText   string
	NewText   string
}

// Service is the plan store: files, revisions and the request journal.
type Service struct {
	engine *werkbaum.Engine
	journal
	lanes  Serializer
	log    *slog.Logger
	now    func() time.Time
	limit  int
	after  func(ctx context.Context, ev WriteEvent) string
	mirror func(key string) any
	plans  map[string]config.Plan
	keys   []string
}

// Errors of the service.
var (
	ErrUnknownPlan   = errors.New("unknown plan")
	ErrRequestReused = errors.New("request_id was already used with other arguments")
)

// New opens the service and settles journal entries a crash left pending.
func New(opts Options) (*Service, error) {
	s := &Service{
		engine: opts.Engine, lanes: opts.Lanes, log: opts.Log, now: opts.Now,
		limit: opts.JournalLimit, after: opts.AfterWrite, mirror: opts.MirrorState, plans: make(map[string]config.Plan),
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
	for _, p := range opts.Plans {
		s.plans[p.Key] = p
		s.keys = append(s.keys, p.Key)
	}
	if err := s.openJournal(opts.DB); err != nil {
		return nil, err
	}
	return s, nil
}

// Keys lists the configured plan keys in config order.
func (s *Service) Keys() []string { return s.keys }

// Plan returns the configuration of a plan.
func (s *Service) Plan(key string) (config.Plan, bool) {
	p, ok := s.plans[key]
	return p, ok
}

// Base identifies the content a client saw: the daemon's revision number and the SHA-256
// of the file's bytes. Writes are applied only on the current checksum.
type Base struct {
	Revision uint64 `json:"revision"`
	Checksum string `json:"checksum"`
}

// Author is who asked for a write: the authenticated client and the agent name it claims.
type Author struct {
	Client string `json:"client"`
	Agent  string `json:"agent,omitempty"`
}

// Snapshot is a plan's text as read now, with its base.
type Snapshot struct {
	Text  string `json:"text"`
	Base  Base   `json:"base"`
	Lines int    `json:"lines"`
}

// Read returns the plan's text and base; a change made outside the daemon is noticed by
// its checksum and gets a new revision.
func (s *Service) Read(ctx context.Context, key string) (*Snapshot, error) {
	p, ok := s.plans[key]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownPlan, key)
	}
	var data []byte
	var sum string
	var rev uint64
	for attempt := 0; ; attempt++ {
		var err error
		if data, err = readPlanFile(key, p.Path); err != nil {
			s.log.Warn("plan file unreadable", "plan", key, "path", p.Path, "err", err)
			return nil, err
		}
		sum = werkbaum.Checksum(data)
		rev, err = s.revisionFor(key, p.Path, sum)
		if err == nil {
			break
		}
		// A write landed between the read and the revision: read the new text. A file
		// that keeps changing under us (an editor saving in a loop) gives up eventually.
		if !errors.Is(err, errFileMoved) || attempt == 9 || ctx.Err() != nil {
			return nil, fmt.Errorf("plan %s: %w", key, err)
		}
	}
	text := string(data)
	return &Snapshot{Text: text, Base: Base{Revision: rev, Checksum: sum}, Lines: countLines(text)}, nil
}

// readPlanFile reads a plan's file. Its errors name the plan, not the path: they reach
// clients (in shared mode over the network), and the folders of the daemon's host are none
// of their business; the caller logs the path for the daemon's owner.
func readPlanFile(key, path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("the file of plan %q is missing (moved or deleted?); the daemon's log names its path", key)
		}
		return nil, fmt.Errorf("the file of plan %q cannot be read: %w", key, unpath(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the file of plan %q is not a regular file any more", key)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the file of plan %q cannot be read: %w", key, unpath(err))
	}
	return data, nil
}

// unpath drops the path from an *fs.PathError, keeping the operation and the cause.
func unpath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
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
	// JSON is the engine's inspect object ({nodes, warnings, path}).
	JSON json.RawMessage
}

// Inspect runs the engine's inspect view on the current text (cached by checksum in the
// engine, so an unchanged plan costs a file read and a hash).
func (s *Service) Inspect(ctx context.Context, key string, opts werkbaum.InspectOptions) (*Inspected, error) {
	snap, err := s.Read(ctx, key)
	if err != nil {
		return nil, err
	}
	raw, err := s.engine.InspectJSON(ctx, snap.Text, opts)
	if err != nil {
		return nil, err
	}
	return &Inspected{Base: snap.Base, JSON: raw}, nil
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
	// Mirror is the plan's git mirror state (MirrorState), absent when not mirrored.
	Mirror any `json:"mirror,omitempty"`
}

// Summarize counts a plan's nodes and warnings.
func (s *Service) Summarize(ctx context.Context, key string) Summary {
	p := s.plans[key]
	sum := Summary{Key: key, Lang: p.Lang}
	if s.mirror != nil {
		sum.Mirror = s.mirror(key)
	}
	snap, err := s.Read(ctx, key)
	if err != nil {
		sum.Error = err.Error()
		return sum
	}
	sum.Revision, sum.Checksum, sum.Lines = snap.Base.Revision, snap.Base.Checksum, snap.Lines
	in, err := s.engine.Inspect(ctx, snap.Text, werkbaum.InspectOptions{})
	if err != nil {
		sum.Error = err.Error()
		return sum
	}
	sum.Nodes, sum.Warnings = len(in.Nodes), len(in.Warnings)
	return sum
}

// writeAtomic replaces path with data so that a crash leaves the old or the new file:
// temp file in the same folder, fsync, rename, fsync of the folder. The mode is kept.
//
// expect is the checksum the file had when the write read it; right before the rename
// the file is hashed again, and if someone saved it meanwhile (the engine may have worked
// for a while) nothing is renamed and the answer is errFileMoved, so a person's edit is
// never replaced by a text computed from the version before it.
func writeAtomic(path string, data []byte, mode fs.FileMode, expect string) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write temp file: %w", err)
	}
	if err = f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("keep file mode: %w", err)
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync temp file: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close temp file: %w", err)
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read plan file before the rename: %w", err)
	}
	if werkbaum.Checksum(cur) != expect {
		err = errFileMoved
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	if d, derr := os.Open(dir); derr == nil {
		serr := d.Sync()
		d.Close()
		if serr != nil {
			return fmt.Errorf("sync folder: %w", serr)
		}
	}
	return nil
}

// tempPrefix names temp files so that recovery can find and remove ones a crash left.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".talkd-tmp-" }

// removeStaleTemps deletes temp files of earlier, interrupted writes.
func removeStaleTemps(path string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), tempPrefix(path)+"*"))
	for _, m := range matches {
		os.Remove(m)
	}
}
