package plans

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"talkd/internal/config"
	"talkd/internal/queue"
	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/planfs"
)

// followFixture is a store whose follower never ticks by itself: the tests run its rounds.
type followFixture struct {
	svc    *Service
	dir    string
	logs   *syncWriter
	states planfs.FollowStates
}

func newFollowFixture(t *testing.T, plans []config.Plan, roots []config.Root) *followFixture {
	t.Helper()
	dir := t.TempDir()
	logs := &syncWriter{b: &bytes.Buffer{}}
	// The engine's debug lines say which answers it computed (not read from its cache).
	eng := testEngine(t, werkbaum.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	svc, err := New(Options{Plans: plans, Roots: roots, Engine: eng, DB: Bolt(stateDB(t, dir)), Lanes: &queue.Lanes{},
		Log: slog.New(slog.NewTextHandler(logs, nil)), FollowEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	svc.warming.Wait()
	return &followFixture{svc: svc, dir: dir, logs: logs, states: planfs.FollowStates{}}
}

// onePlan is a follow fixture with the configured plan "p" and its document id.
func onePlan(t *testing.T) (*followFixture, string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.werkbaum")
	writePlanFile(t, path, planText)
	f := newFollowFixture(t, []config.Plan{{Key: "p", Path: path, Lang: "en"}}, nil)
	id, err := f.svc.DocumentID(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	return f, path, id
}

func (f *followFixture) round() bool {
	return f.svc.followRound(context.Background(), f.svc.follow, f.states)
}

func (f *followFixture) signal(t *testing.T, id string) <-chan struct{} {
	t.Helper()
	sig, err := f.svc.ChangeSignal(id)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// changes is the document's feed since a version (a read: call it after the rounds).
func (f *followFixture) changes(t *testing.T, id string, since uint64) *ChangeFeed {
	t.Helper()
	feed, err := f.svc.Changes(context.Background(), id, since, 0)
	if err != nil {
		t.Fatal(err)
	}
	return feed
}

// An edit made outside talkd becomes a version without a request: the round that first
// sees the new file waits, the next one reads it (which wakes the feed's waiters) and
// analyses it, so the whole-plan inspect of the new text is cached before anyone asks.
func TestFollowerRecordsAndAnalysesAnOutsideEdit(t *testing.T) {
	f, path, id := onePlan(t)
	if f.round() || f.round() {
		t.Fatal("a round read an unchanged plan")
	}
	sig := f.signal(t, id)
	edited := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1)
	writePlanFile(t, path, edited)
	if f.round() || closed(sig) {
		t.Fatal("the round that first saw the change read it; the file may still be being written")
	}
	if !f.round() {
		t.Fatal("the second round did not read the changed plan")
	}
	if !closed(sig) {
		t.Fatal("the follower's read recorded no version: a parked feed would sleep on")
	}
	sum := werkbaum.Checksum([]byte(edited))
	f.svc.cache.mu.Lock()
	ent := f.svc.cache.summaries["p"]
	f.svc.cache.mu.Unlock()
	if ent == nil || ent.sum != sum || !closed(ent.done) || ent.err != "" || ent.nodes != 3 {
		t.Fatalf("the new text's summary after the round: %+v", ent)
	}
	mark := len(f.logs.String())
	if in, err := f.svc.Inspect(context.Background(), "p", werkbaum.InspectOptions{}); err != nil || in.Base.Checksum != sum {
		t.Fatalf("inspect of the new text: %v", err)
	}
	if strings.Contains(f.logs.String()[mark:], "answer computed") {
		t.Fatal("the whole-plan inspect of the new text was not cached: the engine computed it again")
	}
	if f.round() {
		t.Fatal("a round after the read read the plan again")
	}
	feed := f.changes(t, id, 1)
	if feed.CurrentVersion != 2 || len(feed.Events) != 1 || feed.Events[0].ChangeType != "UPDATED" || feed.Events[0].ClientID != "" {
		t.Fatalf("the feed after the outside edit: %+v", feed)
	}
	if !strings.Contains(f.logs.String(), "a change made outside talkd is a new version") {
		t.Fatalf("no log line of the outside change:\n%s", f.logs)
	}
}

// A file that changes again before a round sees it twice alike is read once, when it holds
// still: one version, with the last text.
func TestFollowerWaitsForAFileToHoldStill(t *testing.T) {
	f, path, id := onePlan(t)
	f.round()
	writePlanFile(t, path, strings.Replace(planText, "[ ] #auth", "[/] #auth", 1))
	f.round()
	last := strings.Replace(planText, "[ ] #auth", "[x] #auth", 1) + "  - [ ] #more: More\n"
	writePlanFile(t, path, last)
	if f.round() {
		t.Fatal("a file that changed since the last round was read")
	}
	if !f.round() {
		t.Fatal("the file held still for a round and was not read")
	}
	feed := f.changes(t, id, 1)
	if feed.CurrentVersion != 2 || len(feed.Events) != 1 {
		t.Fatalf("versions after two quick edits: %+v", feed)
	}
	snap, err := f.svc.Read(context.Background(), "p")
	if err != nil || snap.Text != last || snap.Base.Revision != 2 {
		t.Fatalf("read after the rounds: %+v %v", snap, err)
	}
}

// talkd's own write is not an outside change: the follower reads the new file but records
// no second version and does not analyse the text (a write on a large plan would cost a
// whole analysis more each time the agent pauses).
func TestFollowerLeavesOwnWritesAlone(t *testing.T) {
	f, _, id := onePlan(t)
	ctx := context.Background()
	f.round()
	snap, err := f.svc.Read(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.Write(ctx, "p", WriteRequest{Tool: "werkbaum_set_status", RequestID: "own", ArgsHash: "own", Base: snap.Base,
		Verb: werkbaum.SetStatus{ID: "auth", Status: "done"}, Author: Author{Client: "local"}})
	if err != nil || !res.Changed {
		t.Fatalf("write: %+v %v", res, err)
	}
	f.round()
	if !f.round() {
		t.Fatal("the follower did not read the file the write renamed in")
	}
	f.round()
	f.svc.cache.mu.Lock()
	ent := f.svc.cache.summaries["p"]
	f.svc.cache.mu.Unlock()
	if ent != nil && ent.sum == res.Base.Checksum {
		t.Fatalf("the follower analysed talkd's own write: %+v", ent)
	}
	if feed := f.changes(t, id, res.Revision); feed != nil {
		t.Fatalf("a version after the write's own: %+v", feed)
	}
	if strings.Contains(f.logs.String(), "outside talkd") {
		t.Fatalf("the write was taken for an outside change:\n%s", f.logs)
	}
}

// A deleted file is recorded as deleted, and its return as restored, without a request.
func TestFollowerRecordsDeletionAndReturn(t *testing.T) {
	f, path, id := onePlan(t)
	f.round()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	sig := f.signal(t, id)
	f.round()
	f.round()
	if !closed(sig) {
		t.Fatal("the deletion was not recorded")
	}
	sig = f.signal(t, id)
	writePlanFile(t, path, planText+"  - [ ] #back: Back\n")
	f.round()
	f.round()
	if !closed(sig) {
		t.Fatal("the file's return was not recorded")
	}
	feed := f.changes(t, id, 1)
	var types []string
	for _, e := range feed.Events {
		types = append(types, e.ChangeType)
	}
	if feed.CurrentVersion != 3 || !slices.Equal(types, []string{"DELETED", "RESTORED"}) {
		t.Fatalf("the feed after deletion and return: %+v", feed)
	}
}

// Below a root, a plan a request used is followed and a plan only listed is not; a plan
// unused for the window is forgotten.
func TestFollowerFollowsUsedRootPlans(t *testing.T) {
	root := filepath.Join(t.TempDir(), "notes")
	writePlanFile(t, filepath.Join(root, "used.werkbaum"), planText)
	writePlanFile(t, filepath.Join(root, "listed.werkbaum"), planText)
	f := newFollowFixture(t, nil, []config.Root{{Name: "notes", Path: root, Lang: "de"}})
	ctx := context.Background()
	if _, err := f.svc.Read(ctx, "notes:used.werkbaum"); err != nil {
		t.Fatal(err)
	}
	if sum := f.svc.Summarize(ctx, "notes:listed.werkbaum"); sum.Error != "" {
		t.Fatalf("summary: %+v", sum)
	}
	fw := f.svc.follow
	if got := fw.FollowedRoots(time.Now()); !slices.Equal(got, []string{"notes:used.werkbaum"}) {
		t.Fatalf("followed plans below the root: %v", got)
	}
	id, err := f.svc.DocumentID(ctx, "notes:used.werkbaum")
	if err != nil {
		t.Fatal(err)
	}
	f.round()
	sig := f.signal(t, id)
	writePlanFile(t, filepath.Join(root, "used.werkbaum"), strings.Replace(planText, "[ ] #docs", "[x] #docs", 1))
	f.round()
	f.round()
	if !closed(sig) {
		t.Fatal("an outside edit of a used plan below the root was not recorded")
	}
	if got := fw.FollowedRoots(time.Now().Add(planfs.FollowWindow + time.Second)); len(got) != 0 {
		t.Fatalf("plans still followed after the window: %v", got)
	}
	if left := fw.Remembered(); left != 0 {
		t.Fatalf("%d plans below roots kept after the window", left)
	}
}

// The follower sleeps when no request has used a plan for the window, and the next request
// wakes it: an edit after that is recorded without a request.
func TestFollowerSleepsWhenIdleAndWakes(t *testing.T) {
	f, path, id := onePlan(t)
	f.svc.stopFollower()
	worked := make(chan struct{}, 16)
	fw := planfs.NewFollower(5*time.Millisecond, 300*time.Millisecond, func() { worked <- struct{}{} })
	f.svc.follow = fw // nothing looks plans up meanwhile: the warm-up is over
	f.svc.startFollower()
	waitFor(t, "the follower to fall asleep", fw.Asleep)
	if _, err := f.svc.Read(context.Background(), "p"); err != nil { // a request wakes it
		t.Fatal(err)
	}
	sig := f.signal(t, id)
	writePlanFile(t, path, strings.Replace(planText, "[ ] #auth", "[x] #auth", 1))
	select {
	case <-sig:
	case <-time.After(10 * time.Second):
		t.Fatal("the woken follower did not record the edit")
	}
	select {
	case <-worked:
	case <-time.After(10 * time.Second):
		t.Fatal("the follower's work was not reported")
	}
	waitFor(t, "the follower to fall asleep again", fw.Asleep)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A file the read refuses (a symlink in the plan's place) is logged once per change, not
// once per round: the follower compares what it saw, and reads only on a change.
func TestFollowerLogsARefusedFileOncePerChange(t *testing.T) {
	f, path, _ := onePlan(t)
	f.round()
	target := filepath.Join(t.TempDir(), "elsewhere.werkbaum")
	writePlanFile(t, target, planText)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		f.round()
	}
	if n := strings.Count(f.logs.String(), "plan file refused"); n != 1 {
		t.Fatalf("%d refusal lines for one change in six rounds:\n%s", n, f.logs)
	}
}
