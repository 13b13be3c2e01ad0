package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans"
)

// Mirror commits agent writes of plan files in the git repositories that hold them. Each
// commit contains the plan file only (git commit --only), so whatever else the user has
// staged or changed stays exactly as it was. Writes whose commit failed stay pending and
// go into the next commit; the pending list survives a restart in the state database.
type Mirror struct {
	db      Database
	log     *slog.Logger
	now     func() time.Time
	gitBin  string
	timeout time.Duration

	mu     sync.Mutex
	states map[string]*planState
}

// Database runs the mirror's transactions: a *bbolt.DB, or the daemon's state.DB, which
// reopens its file after a failed mapping.
type Database interface {
	View(fn func(*bbolt.Tx) error) error
	Update(fn func(*bbolt.Tx) error) error
}

// MirrorOptions wire a Mirror.
type MirrorOptions struct {
	// DB keeps each plan's pending writes and last commit across restarts (bucket
	// "mirror"); nil keeps them in memory only.
	DB  Database
	Log *slog.Logger
	Now func() time.Time
	// Git is the git command; default "git" from PATH.
	Git string
	// Timeout bounds every git call (hooks and signing included); default 30 s.
	Timeout time.Duration
}

var bucketMirror = []byte("mirror")

// Status is a plan's mirror as plans_list and /status show it.
type Status struct {
	// State of the last attempt: "committed", "failed" or "unchanged" (the file equalled
	// the last commit); empty before the first agent write.
	State string `json:"state"`
	// Commit is the last mirror commit (full hash) and Revision the plan revision it holds.
	Commit   string     `json:"commit,omitempty"`
	Revision uint64     `json:"revision,omitempty"`
	At       *time.Time `json:"at,omitempty"` // time of the last attempt
	Error    string     `json:"error,omitempty"`
	// Pending counts agent writes waiting for the next successful commit.
	Pending int `json:"pending"`
}

// pendingWrite is one agent write not yet in a mirror commit.
type pendingWrite struct {
	Revision uint64 `json:"revision"`
	Who      string `json:"who"`
	What     string `json:"what"`
	// Outside: the file held changes made outside the daemon when this write started.
	Outside bool `json:"outside,omitempty"`
}

type planState struct {
	Pending []pendingWrite `json:"pending,omitempty"`
	// LastWritten is the checksum of the text the last agent write left; a write that
	// starts from other content found changes made outside the daemon.
	LastWritten string `json:"lastWritten,omitempty"`
	Status      Status `json:"status"`
}

// NewMirror prepares a mirror; it touches no repository until the first write.
func NewMirror(opts MirrorOptions) (*Mirror, error) {
	m := &Mirror{db: opts.DB, log: opts.Log, now: opts.Now, gitBin: opts.Git, timeout: opts.Timeout,
		states: make(map[string]*planState)}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.gitBin == "" {
		m.gitBin = "git"
	}
	if m.timeout <= 0 {
		m.timeout = 30 * time.Second
	}
	if m.db != nil {
		err := m.db.Update(func(tx *bbolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists(bucketMirror)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("prepare mirror state: %w", err)
		}
	}
	return m, nil
}

// State reports the mirror of one plan.
func (m *Mirror) State(key string) Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.stateLocked(key)
	s := st.Status
	s.Pending = len(st.Pending)
	return s
}

// stateLocked returns the cached state of a plan, loading it on first use. Caller holds m.mu.
func (m *Mirror) stateLocked(key string) *planState {
	if st, ok := m.states[key]; ok {
		return st
	}
	st := &planState{}
	if m.db != nil {
		err := m.db.View(func(tx *bbolt.Tx) error {
			raw := tx.Bucket(bucketMirror).Get([]byte(key))
			if raw == nil {
				return nil
			}
			return json.Unmarshal(raw, st)
		})
		if err != nil {
			m.log.Error("mirror: read state", "plan", key, "err", err)
			st = &planState{}
		}
	}
	m.states[key] = st
	return st
}

// save replaces a plan's state in memory and in the database.
func (m *Mirror) save(key string, st planState) {
	m.mu.Lock()
	cp := st
	cp.Pending = append([]pendingWrite(nil), st.Pending...)
	m.states[key] = &cp
	m.mu.Unlock()
	if m.db == nil {
		return
	}
	raw, err := json.Marshal(cp)
	if err == nil {
		err = m.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMirror).Put([]byte(key), raw) })
	}
	if err != nil {
		m.log.Error("mirror: save state", "plan", key, "err", err)
	}
}

// Commit records one applied agent write (what says what it did, e.g. "set #a to done")
// and commits the plan file with every write still pending. It runs in the plan's write
// lane, so calls for one plan never overlap. The answer is the write result's "mirror"
// field: "committed …", "unchanged …" or "failed …". A failure never undoes the write.
func (m *Mirror) Commit(ctx context.Context, ev plans.WriteEvent, what string) string {
	// The write has happened; a client that hangs up must not cut its commit short.
	ctx = context.WithoutCancel(ctx)
	m.mu.Lock()
	st := *m.stateLocked(ev.Plan)
	st.Pending = append([]pendingWrite(nil), st.Pending...)
	m.mu.Unlock()

	g := git{bin: m.gitBin, dir: filepath.Dir(ev.Path), timeout: m.timeout}
	name := filepath.Base(ev.Path)
	// HEAD:./name is the committed plan. Reading it fails on an unborn branch, for a file
	// git does not track yet and outside a repository; only then is it worth a second
	// call to tell these apart.
	var head []byte
	var repoErr error
	inHead := false
	if out, err := g.run(ctx, nil, "cat-file", "blob", "HEAD:./"+name); err == nil {
		head, inHead = out, true
	} else {
		_, repoErr = g.run(ctx, nil, "rev-parse", "--is-inside-work-tree")
	}

	w := pendingWrite{Revision: ev.Revision, Who: writer(ev.Author), What: what}
	oldSum := werkbaum.Checksum([]byte(ev.OldText))
	if len(st.Pending) > 0 && inHead && bytes.Equal(head, []byte(ev.OldText)) {
		// Someone committed the pending writes by hand; they are in the history already.
		st.Pending = nil
	}
	switch {
	case len(st.Pending) > 0:
		// Since the failed commit the file should hold what the last agent write left.
		w.Outside = st.LastWritten != "" && st.LastWritten != oldSum
	case inHead:
		// Everything was committed: the write should start from the committed text.
		w.Outside = !bytes.Equal(head, []byte(ev.OldText))
	}
	st.Pending = append(st.Pending, w)
	st.LastWritten = werkbaum.Checksum([]byte(ev.NewText))
	at := m.now().UTC()
	st.Status.At = &at

	fail := func(err error) string {
		st.Status.State, st.Status.Error = "failed", err.Error()
		m.save(ev.Plan, st)
		m.log.Warn("mirror commit failed; the write stands and the commit is retried on the next write",
			"plan", ev.Plan, "revision", ev.Revision, "pending", len(st.Pending), "err", err)
		return fmt.Sprintf("failed: %v (the write is applied; %d write(s) pending for the next commit)", err, len(st.Pending))
	}
	if repoErr != nil {
		return fail(fmt.Errorf("the plan file is not in a git work tree: %w", repoErr))
	}
	cur, err := os.ReadFile(ev.Path)
	if err != nil {
		return fail(fmt.Errorf("read the plan file: %w", err))
	}
	if inHead && bytes.Equal(cur, head) {
		st.Pending = nil
		st.Status.State, st.Status.Error = "unchanged", ""
		m.save(ev.Plan, st)
		return "unchanged: the file equals its last commit, nothing to commit"
	}
	if !inHead {
		// A file git does not know yet cannot be committed with --only; adding it touches
		// the index entry of the plan file and nothing else.
		if _, err := g.run(ctx, nil, "add", "--", name); err != nil {
			return fail(err)
		}
	}
	subject, msg := message(ev, st.Pending)
	if _, err := g.run(ctx, []byte(msg), "commit", "--only", "--quiet", "--cleanup=whitespace", "-F", "-", "--", name); err != nil {
		return fail(err)
	}
	out, err := g.run(ctx, nil, "rev-parse", "HEAD")
	if err != nil {
		return fail(err)
	}
	hash := strings.TrimSpace(string(out))
	n := len(st.Pending)
	st.Pending = nil
	st.Status = Status{State: "committed", Commit: hash, Revision: ev.Revision, At: &at}
	m.save(ev.Plan, st)
	m.log.Info("mirror commit", "plan", ev.Plan, "revision", ev.Revision, "commit", hash, "writes", n)
	return fmt.Sprintf("committed %s: %s", short(hash), subject)
}

// message builds the commit message: subject, one body line per pending write, and the
// trailers (one Werkbaum-Changed-By per distinct writer, then Werkbaum-Version).
func message(ev plans.WriteEvent, pending []pendingWrite) (subject, msg string) {
	agent := ev.Author.Agent
	if agent == "" {
		agent = ev.Author.Client
	}
	subject = fmt.Sprintf("%s: revision %d via %s", ev.Plan, ev.Revision, clip(agent, 80))
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	var writers []string
	seen := map[string]bool{}
	for _, p := range pending {
		if p.Outside {
			fmt.Fprintf(&b, "Also in this commit: changes made to the file outside talkd before r%d.\n", p.Revision)
		}
		fmt.Fprintf(&b, "r%d %s %s\n", p.Revision, p.Who, p.What)
		if !seen[p.Who] {
			seen[p.Who] = true
			writers = append(writers, p.Who)
		}
	}
	b.WriteString("\n")
	for _, w := range writers {
		fmt.Fprintf(&b, "Werkbaum-Changed-By: %s\n", w)
	}
	fmt.Fprintf(&b, "Werkbaum-Version: %d\n", ev.Revision)
	return subject, b.String()
}

// writer names who wrote: the client id, and the agent name it claims in parentheses.
func writer(a plans.Author) string {
	c, g := clip(a.Client, 80), clip(a.Agent, 80)
	switch {
	case c == "":
		return g
	case g == "" || g == c:
		return c
	}
	return c + " (" + g + ")"
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
