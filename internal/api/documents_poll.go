package api

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
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
// A client that leaves while parked is noticed only when its answer is written (at the
// latest after the clamped wait), since nothing reads a parked connection.
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

	mu     sync.Mutex
	groups map[string]*pollGroup // by document id
}

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
	held     chan *pollAnswer
	done     bool // answered, or its handler gave up (under pollParker.mu)
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
	return &pollParker{s: s, ctx: ctx, end: cancel, groups: map[string]*pollGroup{}}
}

// park makes the poll of r wait in its document's group. It takes the connection over
// when it can and then returns at once; otherwise it returns when the poll is answered or
// its request ends.
func (p *pollParker) park(w http.ResponseWriter, r *http.Request, store documentStore, id, key string, poll *parkedPoll) {
	// From here to add, the connection is neither the server's (Shutdown does not wait
	// for a taken-over one) nor in a group yet: busy holds shutdown up meanwhile. It is
	// taken under mu before the end (endAll), so it always happens before wait's Wait.
	p.mu.Lock()
	if p.ctx.Err() != nil {
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent) // talkd is shutting down: nothing new
		return
	}
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
		p.mu.Lock()
		poll.done = true
		p.mu.Unlock()
	}
}

// add puts poll into its group, starting the group's loop when it is the first. Once the
// polls have ended, it answers 204 itself (no loop starts after EndPolls). Every busy.Add
// here and in the loops happens while a count is held (the caller's parking, the loop's
// own), never at zero concurrently with wait.
func (p *pollParker) add(store documentStore, id, key string, poll *parkedPoll) {
	p.mu.Lock()
	if p.ctx.Err() != nil {
		poll.done = true
		p.mu.Unlock()
		p.write(poll, noContent)
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
		answered := p.round(g, polls, err)
		p.mu.Lock()
		next, open := time.Time{}, g.polls[:0]
		for _, poll := range g.polls {
			if poll.done || answered[poll] {
				poll.done = true
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
			polls := g.polls
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
// store's error for the document (it went away in a reload): every poll gets it.
func (p *pollParker) round(g *pollGroup, polls []*parkedPoll, signalErr error) map[*parkedPoll]bool {
	answered := map[*parkedPoll]bool{}
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
				a = p.refusal(g, poll, err)
			case a == nil && !now.Before(poll.deadline):
				a = noContent
			case a == nil:
				continue
			}
			answered[poll] = true
			p.deliver(poll, a)
		}
	}
	return answered
}

// refusal renders the store's error for poll as the other doors would (problem details,
// one log line).
func (p *pollParker) refusal(g *pollGroup, poll *parkedPoll, err error) *pollAnswer {
	e := p.s.documentError(p.ctx, g.key, err)
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
