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

	mu     sync.Mutex // guards states and queues; held while a state is saved
	states map[string]*planState
	queues map[string]*planQueue
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
	// Sum is the checksum of the text the write left: a commit covers the pending writes
	// up to the one whose text the file holds when the commit runs.
	Sum string `json:"sum,omitempty"`
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
		states: make(map[string]*planState), queues: make(map[string]*planQueue)}
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

// saveLocked replaces a plan's state in memory and in the database. Caller holds m.mu,
// so that states reach the database in the order they were made (the enqueueing write
// lane and the plan's commit worker both change it).
func (m *Mirror) saveLocked(key string, st planState) {
	cp := st
	cp.Pending = append([]pendingWrite(nil), st.Pending...)
	m.states[key] = &cp
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

// reportWait is how long a write's answer waits for its commit when the plan's commit
// worker was idle: long enough that a normal commit (tens of ms) is reported as
// "committed …", short enough that a slow or hanging hook costs that one answer a
// second, never the plan's write lane. While the worker is still busy with earlier
// commits, answers do not wait at all.
const reportWait = time.Second

// commitJob is one write waiting for its mirror commit.
type commitJob struct {
	ev plans.WriteEvent
	// fresh: nothing was pending when the write was queued, so whether it started from
	// the committed text is decided against HEAD when its commit runs.
	fresh  bool
	done   chan struct{}
	report string // set before done is closed
}

// planQueue is a plan's commit queue; one worker goroutine drains it while it is not
// empty.
type planQueue struct {
	jobs    []*commitJob
	running bool
}

// Commit records one applied agent write and waits for its commit; see Enqueue. The
// answer is "committed …", "unchanged …" or "failed …".
func (m *Mirror) Commit(ctx context.Context, ev plans.WriteEvent, what string) string {
	return m.Enqueue(ctx, ev, what)(ctx, -1)
}

// Enqueue records one applied agent write (what says what it did, e.g. "set #a to done")
// as pending — in the state database, so it survives a restart as a failed commit's
// pending writes do — and queues the commit of the plan file for the plan's commit
// worker. It runs in the plan's write lane (so writes are queued in their order) and does
// no git work there: a slow or hanging hook never delays the next write.
//
// The worker commits the file with every write still pending, in revision order; writes
// that queued up behind a slow commit go into one commit that lists them all. The
// returned report waits for this write's commit for at most wait (negative: until done,
// 0: reportWait if the worker was idle, else not at all) and answers the write result's
// "mirror" field. A failure never undoes the write.
func (m *Mirror) Enqueue(ctx context.Context, ev plans.WriteEvent, what string) func(ctx context.Context, wait time.Duration) string {
	oldSum := werkbaum.Checksum([]byte(ev.OldText))
	m.mu.Lock()
	st := *m.stateLocked(ev.Plan)
	st.Pending = append([]pendingWrite(nil), st.Pending...)
	w := pendingWrite{Revision: ev.Revision, Who: writer(ev.Author), What: what, Sum: werkbaum.Checksum([]byte(ev.NewText))}
	fresh := len(st.Pending) == 0
	if !fresh {
		// Since the last commit the file should hold what the last agent write left.
		w.Outside = st.LastWritten != "" && st.LastWritten != oldSum
	}
	st.Pending = append(st.Pending, w)
	st.LastWritten = w.Sum
	m.saveLocked(ev.Plan, st)
	q := m.queues[ev.Plan]
	if q == nil {
		q = &planQueue{}
		m.queues[ev.Plan] = q
	}
	idle := !q.running
	job := &commitJob{ev: ev, fresh: fresh, done: make(chan struct{})}
	q.jobs = append(q.jobs, job)
	if !q.running {
		q.running = true
		go m.work(ev.Plan, q)
	}
	backlog := len(q.jobs) - 1
	m.mu.Unlock()

	return func(ctx context.Context, wait time.Duration) string {
		if wait == 0 {
			if !idle {
				return fmt.Sprintf("queued: the mirror is still committing earlier writes; this one goes into the next commit (%d write(s) queued); plans_list shows the mirror's state", backlog+1)
			}
			wait = reportWait
		}
		if wait < 0 {
			<-job.done
			return job.report
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-job.done:
			return job.report
		case <-t.C:
		case <-ctx.Done():
		}
		return "queued: the commit is still running (a slow git hook?); plans_list shows the mirror's state"
	}
}

// Wait waits until every plan's commit queue is drained, or ctx ends (at shutdown: the
// commits that are still running when the daemon stops have their writes recorded as
// pending, so the next write after the restart commits them).
func (m *Mirror) Wait(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		busy := 0
		m.mu.Lock()
		for _, q := range m.queues {
			if q.running {
				busy++
			}
		}
		m.mu.Unlock()
		if busy == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d plan(s) still committing: their writes stay pending for the next commit: %w", busy, ctx.Err())
		case <-tick.C:
		}
	}
}

// work drains a plan's commit queue, one commit per round.
func (m *Mirror) work(key string, q *planQueue) {
	for {
		m.mu.Lock()
		if len(q.jobs) == 0 {
			q.running = false
			m.mu.Unlock()
			return
		}
		path := q.jobs[len(q.jobs)-1].ev.Path
		m.mu.Unlock()
		m.round(context.Background(), key, path, q)
	}
}

// settleWait bounds how long a round waits for the write whose text the file holds to be
// queued (it is renamed into place a moment before it is queued); after that the file's
// content counts as changed outside talkd and rides along.
const settleWait = time.Second

// round makes one mirror commit: the plan file as it is now, listing every pending write
// up to the one whose text the file holds (git commits the file from the work tree, so a
// commit started for an earlier write carries the later ones that are already written;
// they are listed, not left for a commit that would find nothing to commit). The queued
// writes it covers get its report.
func (m *Mirror) round(ctx context.Context, key, path string, q *planQueue) {
	g := git{bin: m.gitBin, dir: filepath.Dir(path), timeout: m.timeout}
	name := filepath.Base(path)
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

	var cur []byte
	var readErr error
	var batch []*commitJob
	var st planState
	var upto uint64
	deadline := time.Now().Add(settleWait)
	for {
		cur, readErr = os.ReadFile(path)
		sum := werkbaum.Checksum(cur)
		m.mu.Lock()
		st = *m.stateLocked(key)
		st.Pending = append([]pendingWrite(nil), st.Pending...)
		found := false
		for i := len(st.Pending) - 1; i >= 0; i-- {
			if st.Pending[i].Sum == sum {
				upto, found = st.Pending[i].Revision, true
				break
			}
		}
		if !found && readErr == nil && time.Now().Before(deadline) {
			m.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if !found {
			upto = 0
			for _, p := range st.Pending {
				upto = max(upto, p.Revision)
			}
			for _, j := range q.jobs {
				upto = max(upto, j.ev.Revision)
			}
		}
		n := 0
		for n < len(q.jobs) && q.jobs[n].ev.Revision <= upto {
			n++
		}
		if n == 0 {
			n = len(q.jobs) // nothing queued is in the file: commit for them all
		}
		batch = append([]*commitJob(nil), q.jobs[:n]...)
		q.jobs = append([]*commitJob(nil), q.jobs[n:]...)
		upto = max(upto, batch[len(batch)-1].ev.Revision)
		break
	}
	first, ev := batch[0], batch[len(batch)-1].ev
	if inHead {
		for i, p := range st.Pending {
			if p.Revision != first.ev.Revision {
				continue
			}
			if first.fresh {
				// Everything was committed: the write should start from the committed text.
				st.Pending[i].Outside = !bytes.Equal(head, []byte(first.ev.OldText))
			} else if i > 0 && bytes.Equal(head, []byte(first.ev.OldText)) {
				// Someone committed the pending writes by hand; they are in the history.
				st.Pending = st.Pending[i:]
			}
			break
		}
	}
	n := 0
	for n < len(st.Pending) && st.Pending[n].Revision <= upto {
		n++
	}
	covered := append([]pendingWrite(nil), st.Pending[:n]...)
	m.saveLocked(key, st)
	m.mu.Unlock()

	report := m.commit(ctx, g, name, ev, upto, covered, head, inHead, repoErr, cur, readErr)
	for _, j := range batch {
		j.report = report
		close(j.done)
	}
}

// commit makes the commit of a round and records its outcome; on success the covered
// writes (revisions up to upto) leave the pending list.
func (m *Mirror) commit(ctx context.Context, g git, name string, ev plans.WriteEvent, upto uint64, covered []pendingWrite,
	head []byte, inHead bool, repoErr error, cur []byte, readErr error) string {
	at := m.now().UTC()
	finish := func(status Status, committed bool) int {
		m.mu.Lock()
		defer m.mu.Unlock()
		st := *m.stateLocked(ev.Plan)
		if committed {
			rest := []pendingWrite{}
			for _, p := range st.Pending {
				if p.Revision > upto {
					rest = append(rest, p)
				}
			}
			st.Pending = rest
		}
		if status.State != "committed" {
			status.Commit, status.Revision = st.Status.Commit, st.Status.Revision
		}
		st.Status = status
		m.saveLocked(ev.Plan, st)
		return len(st.Pending)
	}
	fail := func(err error) string {
		pending := finish(Status{State: "failed", Error: err.Error(), At: &at}, false)
		m.log.Warn("mirror commit failed; the write stands and the commit is retried on the next write",
			"plan", ev.Plan, "revision", ev.Revision, "pending", pending, "err", err)
		return fmt.Sprintf("failed: %v (the write is applied; %d write(s) pending for the next commit)", err, pending)
	}
	if repoErr != nil {
		return fail(fmt.Errorf("the plan file is not in a git work tree: %w", repoErr))
	}
	if readErr != nil {
		return fail(fmt.Errorf("read the plan file: %w", readErr))
	}
	if inHead && bytes.Equal(cur, head) {
		finish(Status{State: "unchanged", At: &at}, true)
		return "unchanged: the file equals its last commit, nothing to commit"
	}
	if !inHead {
		// A file git does not know yet cannot be committed with --only; adding it touches
		// the index entry of the plan file and nothing else.
		if _, err := g.run(ctx, nil, "add", "--", name); err != nil {
			return fail(err)
		}
	}
	last := ev
	last.Revision = upto
	subject, msg := message(last, covered)
	if _, err := g.run(ctx, []byte(msg), "commit", "--only", "--quiet", "--cleanup=whitespace", "-F", "-", "--", name); err != nil {
		return fail(err)
	}
	out, err := g.run(ctx, nil, "rev-parse", "HEAD")
	if err != nil {
		return fail(err)
	}
	hash := strings.TrimSpace(string(out))
	finish(Status{State: "committed", Commit: hash, Revision: upto, At: &at}, true)
	m.log.Info("mirror commit", "plan", ev.Plan, "revision", upto, "commit", hash, "writes", len(covered))
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
