package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"

	"talkd/internal/config"
)

// Parked long polls of the document feed (GET …/changes).
//
// An editor keeps one poll open all the time, so a daemon with many editors holds many
// polls that wait for nothing. Held in its handler, a poll costs net/http's serving
// goroutine, its background reader and the connection's buffers (measured: 17.8 KB with a
// handler that only blocks, 27 KB with talkd's; 1,000 editors 27 MB). A poll that has to
// wait is therefore parked instead: after admission and a first look at the feed the
// handler takes the connection over (Hijack) and returns, and the poll waits as a small
// record in its document's group. Each document with parked polls has one goroutine; it
// sleeps on the store's change signal and one timer for the group's earliest deadline, and
// when either fires it asks the store once per distinct `since` (Changes with wait 0),
// renders that answer once, and writes it to every poll that asked for it.
//
// The answer ends the connection (Connection: close): a taken-over connection cannot be
// handed back to net/http. The client then opens a new one for its next poll, which on
// the loopback or a LAN costs a fraction of a millisecond once per change or per wait.
// A client that leaves while parked is noticed at once on Linux (connWatcher: one epoll
// instance for every parked connection, no goroutine per poll), and its descriptor is
// freed; elsewhere when its answer is written (at the latest after the clamped wait).
//
// Every parked poll holds a descriptor, so their number is bounded (server.max_parked_polls
// in all, server.max_parked_polls_per_client per client of shared mode, and three
// quarters of the descriptor limit): a poll beyond a bound is answered at once, 503 or
// 429 with Retry-After and Connection: close, before it takes anything that /healthz, a
// write or /mcp needs. A reload that takes a client's read grant, or the client, ends its
// parked polls (403, 401) before any text written after it could reach them.
//
// Where a connection cannot be taken over (an HTTP/2 server, a test's recorder), the
// handler stays with its request and the group delivers the answer to it instead: the
// waiting rule is the same, only the delivery differs.

// pollParker holds the parked polls of one Server.
type pollParker struct {
	s   *Server
	ctx context.Context // ends at EndPolls: every parked poll then answers 204
	end context.CancelFunc
	// busy counts the group loops and the answers being written, so that shutdown can
	// wait for the last 204 to reach its client (a taken-over connection is not one the
	// http.Server waits for).
	busy sync.WaitGroup

	// watcher notices clients that leave while parked.
	watcher *connWatcher
	// fdBudget bounds the parked polls by the descriptor limit (0 = no bound known).
	fdBudget int

	mu     sync.Mutex
	groups map[string]*pollGroup // by document id
	// total and perClient count the parked polls (each counted from its reservation
	// until it is claimed), for the caps.
	total     int
	perClient map[string]int
}

// pollRetryAfter is what a poll refused for a cap is told: an editor then polls again
// (the bounds are for floods, not for a team's editors).
const pollRetryAfter = 5 * time.Second

// pollGroup is the parked polls of one document.
type pollGroup struct {
	id, key string
	store   documentStore
	polls   []*parkedPoll
	added   chan struct{} // a poll joined: look at the feed for it (cap 1)
}

// parkedPoll is one waiting poll: what its answer needs, and nothing of its request.
type parkedPoll struct {
	since    uint64
	deadline time.Time
	path     string
	origin   string // for the refusal log line
	host     string
	head     []byte   // the header lines admission set (CORS, Vary, Cache-Control)
	conn     net.Conn // the taken-over connection; nil when the handler holds the request
	unwatch  func()   // stops watching conn for its client leaving
	held     chan *pollAnswer
	caller   Caller // who it was admitted for: a reload may revoke that
	// done: claimed (answered, its client left or its handler gave up, revoked, ended);
	// counted: its place under the caps is held. Both under pollParker.mu.
	done, counted bool
}

// pollAnswer is an answer rendered once for every poll that gets it.
type pollAnswer struct {
	status int
	fields http.Header // its own header fields (Content-Type, Content-Length, …)
	header []byte      // the same as header lines, for a taken-over connection
	body   []byte
}

func newPollParker(s *Server) *pollParker {
	ctx, cancel := context.WithCancel(context.Background())
	return &pollParker{s: s, ctx: ctx, end: cancel, groups: map[string]*pollGroup{}, perClient: map[string]int{},
		watcher: newConnWatcher(s.log), fdBudget: pollDescriptorBudget()}
}

// reserveLocked takes a place under the caps for a poll of caller, or says why there is
// none (503 for the total, 429 for the client's own).
func (p *pollParker) reserveLocked(set *settings, caller Caller) *Error {
	limit, why := set.cfg.Server.MaxParkedPolls, "server.max_parked_polls"
	perClient := set.cfg.Server.MaxParkedPollsPerClient
	// A configuration not made by config.Load (tests, embedders) has zeros: the defaults.
	if limit <= 0 {
		limit = config.DefaultMaxParkedPolls
	}
	if perClient <= 0 {
		perClient = config.DefaultMaxParkedPollsPerClient
	}
	if p.fdBudget > 0 && p.fdBudget < limit {
		limit, why = p.fdBudget, "three quarters of talkd's file descriptor limit"
	}
	if p.total >= limit {
		return &Error{Status: http.StatusServiceUnavailable, Code: "too_many_polls", RetryAfter: pollRetryAfter,
			Message: fmt.Sprintf("talkd holds %d waiting polls, its limit (%s); poll again after the Retry-After", p.total, why)}
	}
	if set.auth.shared && p.perClient[caller.ID] >= perClient {
		return &Error{Status: http.StatusTooManyRequests, Code: "too_many_polls", RetryAfter: pollRetryAfter,
			Message: fmt.Sprintf("client %q has %d polls waiting, its limit (server.max_parked_polls_per_client); poll again after the Retry-After", caller.ID, p.perClient[caller.ID])}
	}
	p.total++
	p.perClient[caller.ID]++
	return nil
}

// claimLocked takes poll for the one who ends it: true exactly once per poll, for whoever
// comes first (its answer, its client leaving, a reload revoking it, shutdown). Its place
// under the caps is freed then.
func (p *pollParker) claimLocked(poll *parkedPoll) bool {
	if poll.done {
		return false
	}
	poll.done = true
	if poll.counted {
		poll.counted = false
		p.total--
		if p.perClient[poll.caller.ID]--; p.perClient[poll.caller.ID] <= 0 {
			delete(p.perClient, poll.caller.ID)
		}
	}
	return true
}

func (p *pollParker) claim(poll *parkedPoll) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.claimLocked(poll)
}

// park makes the poll of r wait in its document's group. It takes the connection over
// when it can and then returns at once; otherwise it returns when the poll is answered or
// its request ends.
func (p *pollParker) park(w http.ResponseWriter, r *http.Request, d *door, store documentStore, id, key string, caller Caller, poll *parkedPoll) {
	// From here to add, the connection is neither the server's (Shutdown does not wait
	// for a taken-over one) nor in a group yet: busy holds shutdown up meanwhile. It is
	// taken under mu before the end (endAll), so it always happens before wait's Wait.
	p.mu.Lock()
	if p.ctx.Err() != nil {
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent) // talkd is shutting down: nothing new
		return
	}
	if e := p.reserveLocked(p.s.live.Load(), caller); e != nil {
		p.mu.Unlock()
		// The refused client's connection is not kept either: its descriptor is what the
		// cap protects.
		w.Header().Set("Connection", "close")
		p.s.refuse(w, r, d, e)
		return
	}
	poll.caller, poll.counted = caller, true
	p.busy.Add(1)
	p.mu.Unlock()
	parking := true
	defer func() {
		if parking {
			p.busy.Done()
		}
	}()
	var head bytes.Buffer
	_ = w.Header().Write(&head)
	poll.head = head.Bytes()
	poll.path = r.URL.Path
	poll.origin, poll.host = clipHeader(r.Header.Get("Origin")), clipHeader(r.Host)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// The handler holds the request; its write deadline must outlast the wait (a
		// server WriteTimeout counts from the request's start).
		poll.held = make(chan *pollAnswer, 1)
		_ = http.NewResponseController(w).SetWriteDeadline(poll.deadline.Add(pollSlack))
	} else {
		// Buffered bytes after the request would be a pipelined next request; the answer
		// closes the connection, and a pipelining client resends what was not answered.
		poll.conn = conn
		poll.unwatch = p.watcher.watch(conn, func() { p.abandon(poll) })
	}
	p.add(store, id, key, poll)
	parking = false
	p.busy.Done()
	if poll.held == nil {
		return
	}
	select {
	case a := <-poll.held:
		a.writeTo(w)
	case <-r.Context().Done():
		p.claim(poll)
	}
}

// abandon ends poll whose client left (connWatcher): its descriptor is freed now, not
// when its answer would fail to reach the client.
func (p *pollParker) abandon(poll *parkedPoll) {
	if !p.claim(poll) {
		return // answered meanwhile: the answer's write closes the connection
	}
	// The watcher has forgotten the connection already (and may call this before park
	// has stored poll.unwatch).
	_ = poll.conn.Close()
	p.s.log.Debug("document feed: the client of a parked poll left", "door", poll.path)
}

// revoke ends, after a reload, the parked polls whose client is gone or may no longer
// read the document (auth is the new configuration's): 401 or 403 with the reason. They
// are claimed before revoke returns, so no text recorded after the reload reaches them.
func (p *pollParker) revoke(auth *authenticator) {
	type ended struct {
		poll *parkedPoll
		e    *Error
	}
	var ends []ended
	p.mu.Lock()
	if p.ctx.Err() != nil {
		p.mu.Unlock()
		return // shutting down: every poll gets its 204
	}
	for _, g := range p.groups {
		for _, poll := range g.polls {
			if poll.done {
				continue
			}
			if e := auth.stillReads(poll.caller, g.key); e != nil && p.claimLocked(poll) {
				ends = append(ends, ended{poll, e})
			}
		}
	}
	// busy is taken under mu while the polls have not ended, so before wait's Wait.
	p.busy.Add(len(ends))
	p.mu.Unlock()
	for _, x := range ends {
		a := p.refusalAnswer(x.poll, x.e)
		go func() {
			defer p.busy.Done()
			p.write(x.poll, a)
		}()
	}
}

// add puts poll into its group, starting the group's loop when it is the first. Once the
// polls have ended, it answers 204 itself (no loop starts after EndPolls). Every busy.Add
// here and in the loops happens while a count is held (the caller's parking, the loop's
// own), never at zero concurrently with wait.
func (p *pollParker) add(store documentStore, id, key string, poll *parkedPoll) {
	p.mu.Lock()
	if p.ctx.Err() != nil {
		claimed := p.claimLocked(poll)
		p.mu.Unlock()
		if claimed { // not when its client has left already
			p.write(poll, noContent)
		}
		return
	}
	g := p.groups[id]
	if g == nil {
		g = &pollGroup{id: id, key: key, store: store, added: make(chan struct{}, 1)}
		p.groups[id] = g
		p.busy.Add(1)
		go p.run(g)
	}
	g.polls = append(g.polls, poll)
	p.mu.Unlock()
	select {
	case g.added <- struct{}{}:
	default:
	}
}

var noContent = &pollAnswer{status: http.StatusNoContent}

// run is a group's loop: a round answers what can be answered, then it sleeps until the
// next version, the earliest deadline, a new poll or shutdown. It ends with its last poll.
func (p *pollParker) run(g *pollGroup) {
	defer p.busy.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// The signal is taken before the round looks at the feed: a version recorded
		// during the round closes it, so none is missed.
		signal, err := g.store.ChangeSignal(g.id)
		p.mu.Lock()
		polls := append([]*parkedPoll(nil), g.polls...)
		p.mu.Unlock()
		p.round(g, polls, err)
		p.mu.Lock()
		next, open := time.Time{}, g.polls[:0]
		for _, poll := range g.polls {
			if poll.done {
				continue
			}
			open = append(open, poll)
			if next.IsZero() || poll.deadline.Before(next) {
				next = poll.deadline
			}
		}
		clear(g.polls[len(open):]) // no answered poll stays reachable
		g.polls = open
		if len(open) == 0 {
			delete(p.groups, g.id)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		timer.Reset(time.Until(next)) // (Go ≥ 1.23: no stale tick survives a Reset)
		select {
		case <-signal:
		case <-timer.C:
		case <-g.added:
		case <-p.ctx.Done():
			p.mu.Lock()
			var polls []*parkedPoll
			for _, poll := range g.polls {
				if p.claimLocked(poll) {
					polls = append(polls, poll)
				}
			}
			g.polls = nil
			delete(p.groups, g.id)
			p.mu.Unlock()
			for _, poll := range polls {
				p.deliver(poll, noContent)
			}
			return
		}
	}
}

// round answers the polls that can be answered now: one look at the feed per distinct
// since, its answer rendered once; a poll past its deadline gets 204. signalErr is the
// store's error for the document (it went away in a reload): every poll gets it. A poll
// is claimed before it is answered; one claimed meanwhile (its client left, a reload
// revoked it) gets nothing from the round.
func (p *pollParker) round(g *pollGroup, polls []*parkedPoll, signalErr error) {
	bySince := map[uint64][]*parkedPoll{}
	for _, poll := range polls {
		bySince[poll.since] = append(bySince[poll.since], poll)
	}
	now := time.Now()
	for since, group := range bySince {
		err := signalErr
		var answer *pollAnswer
		if err == nil {
			feed, ferr := g.store.Changes(p.ctx, g.id, since, 0)
			switch {
			case ferr != nil && p.ctx.Err() != nil:
				answer = noContent // shutdown came during the look
			case ferr != nil:
				err = ferr
			case feed != nil:
				answer = renderAnswer(func(w http.ResponseWriter) { writeJSON(w, http.StatusOK, feedOf(feed)) })
			}
		}
		for _, poll := range group {
			a := answer
			switch {
			case err != nil:
			case a == nil && !now.Before(poll.deadline):
				a = noContent
			case a == nil:
				continue
			}
			if !p.claim(poll) {
				continue
			}
			if err != nil {
				a = p.refusal(g, poll, err)
			}
			p.deliver(poll, a)
		}
	}
}

// refusal renders the store's error for poll as the other doors would (problem details,
// one log line).
func (p *pollParker) refusal(g *pollGroup, poll *parkedPoll, err error) *pollAnswer {
	return p.refusalAnswer(poll, p.s.documentError(p.ctx, g.key, err))
}

// refusalAnswer is e as poll's answer, with the refusal's log line.
func (p *pollParker) refusalAnswer(poll *parkedPoll, e *Error) *pollAnswer {
	p.s.logRefusalOf(clipHeader(poll.path), poll.origin, poll.host, e)
	r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: poll.path}}
	return renderAnswer(func(w http.ResponseWriter) { writeProblem(w, r, e, nil) })
}

// deliver hands a to poll from a group's loop: a taken-over connection is written in its
// own goroutine (a client that does not read must not hold up the others; the write
// deadline bounds it), counted in busy while the loop's own count still holds it up.
func (p *pollParker) deliver(poll *parkedPoll, a *pollAnswer) {
	if poll.conn == nil {
		p.write(poll, a)
		return
	}
	p.busy.Add(1)
	go func() {
		defer p.busy.Done()
		p.write(poll, a)
	}()
}

// write hands a to poll's handler, or writes it to poll's connection and closes that.
func (p *pollParker) write(poll *parkedPoll, a *pollAnswer) {
	if poll.conn == nil {
		select {
		case poll.held <- a:
		default:
		}
		return
	}
	conn := poll.conn
	if poll.unwatch != nil {
		poll.unwatch() // its client leaving is the answer's business now
	}
	_ = conn.SetWriteDeadline(time.Now().Add(pollSlack))
	if err := a.writeConn(conn, poll.head); err != nil {
		p.s.log.Debug("document feed: the answer of a parked poll was not delivered", "door", poll.path, "err", err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite() // the answer first, then the end: no reset over unread bytes
	}
	_ = conn.Close()
}

// endAll answers every parked poll with 204, and every poll that comes later (EndPolls).
func (p *pollParker) endAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end()
}

// wait ends the polls (endAll: Shutdown runs its hooks in goroutines, so EndPolls may not
// have run yet) and returns when every answer of the parked polls has been written, or ctx
// ends.
func (p *pollParker) wait(ctx context.Context) error {
	p.endAll()
	done := make(chan struct{})
	go func() {
		p.busy.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parked counts the polls waiting now.
func (p *pollParker) parked() (n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.groups {
		n += len(g.polls)
	}
	return n
}

// renderAnswer runs fill against a recorder: the answer is rendered once and written to
// every poll that gets it.
func renderAnswer(fill func(http.ResponseWriter)) *pollAnswer {
	rec := &answerRecorder{header: http.Header{}}
	fill(rec)
	var h bytes.Buffer
	_ = rec.header.Write(&h)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &pollAnswer{status: rec.status, fields: rec.header, header: h.Bytes(), body: rec.body}
}

// writeConn writes the answer as an HTTP/1.1 response that ends the connection.
func (a *pollAnswer) writeConn(conn net.Conn, head []byte) error {
	b := make([]byte, 0, 256+len(head)+len(a.header))
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(a.status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(a.status)...)
	b = append(b, "\r\n"...)
	b = append(b, head...)
	b = append(b, a.header...)
	b = append(b, "Date: "...)
	b = time.Now().UTC().AppendFormat(b, http.TimeFormat)
	b = append(b, "\r\nConnection: close\r\n\r\n"...)
	bufs := net.Buffers{b, a.body}
	_, err := bufs.WriteTo(conn)
	return err
}

// writeTo writes the answer through a handler's ResponseWriter.
func (a *pollAnswer) writeTo(w http.ResponseWriter) {
	h := w.Header()
	for k, vs := range a.fields {
		h[k] = vs
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// answerRecorder is the http.ResponseWriter renderAnswer fills.
type answerRecorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *answerRecorder) Header() http.Header { return r.header }
func (r *answerRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *answerRecorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	r.body = append(r.body, b...)
	return len(b), nil
}

// descriptorsExhausted is the answer to a store error that says the process (or the
// system) has run out of file descriptors: the store is not broken, it is busy, so 503
// with Retry-After, never 500 (nil for any other error).
func descriptorsExhausted(err error) *Error {
	if !errors.Is(err, syscall.EMFILE) && !errors.Is(err, syscall.ENFILE) {
		return nil
	}
	return &Error{Status: http.StatusServiceUnavailable, Code: "busy", RetryAfter: time.Second,
		Message: "talkd has too many files open right now (its descriptor limit, ulimit -n); try again after the Retry-After: " + err.Error()}
}
