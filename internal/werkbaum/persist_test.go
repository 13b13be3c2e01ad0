package werkbaum

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// openTestPersist opens a disk cache in dir under a fixed build name and waits until it
// has read the folder.
func openTestPersist(t *testing.T, dir string, maxBytes int64, log *slog.Logger) *Persist {
	t.Helper()
	p, err := OpenPersist(PersistOptions{Dir: dir, MaxBytes: maxBytes, Build: "test build", Logger: log})
	if err != nil {
		t.Fatalf("OpenPersist: %v", err)
	}
	if !p.waitReady(context.Background()) {
		t.Fatalf("the cache did not open: %v", p.disabled)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// closePersist writes what waits and stops the writer: a daemon's shutdown.
func closePersist(t *testing.T, p *Persist) {
	t.Helper()
	if err := p.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// syncLog is a log destination that goroutines (a writer, readers) and the test share.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestPersistKeyChangesWithEverythingThatDecidesTheAnswer(t *testing.T) {
	a := &Persist{build: sha256.Sum256([]byte("build 1"))}
	b := &Persist{build: sha256.Sum256([]byte("build 2"))}
	base := diskKey{script: sha256.Sum256([]byte("scripts")), method: "inspect", opts: []byte(`{"id":"co"}`), textSum: sha256.Sum256([]byte(smallPlan))}
	want := a.digest(base)
	if a.digest(base) != want {
		t.Fatal("the same key gives two digests")
	}
	variants := map[string]func(k diskKey) diskKey{
		"script":  func(k diskKey) diskKey { k.script = sha256.Sum256([]byte("other scripts")); return k },
		"method":  func(k diskKey) diskKey { k.method = "inspecT"; return k },           // same length
		"options": func(k diskKey) diskKey { k.opts = []byte(`{"id":"cx"}`); return k }, // same length
		"text":    func(k diskKey) diskKey { k.textSum = sha256.Sum256([]byte(smallPlan + "x")); return k },
		// The boundary between method and options moves: the lengths keep them apart.
		"split": func(k diskKey) diskKey { k.method, k.opts = "inspect{", []byte(`"id":"co"}`); return k },
	}
	for name, change := range variants {
		if a.digest(change(base)) == want {
			t.Errorf("changing the %s does not change the key", name)
		}
	}
	if b.digest(base) == want {
		t.Error("another build has the same key")
	}
}

func TestScriptIDCoversEveryScript(t *testing.T) {
	plain1 := newTestEngine(t, Options{Runtimes: 1})
	plain2 := newTestEngine(t, Options{Runtimes: 1})
	extra := newTestEngine(t, Options{Runtimes: 1}, "var persistTestMarker = 1;")
	if plain1.scriptID != plain2.scriptID {
		t.Error("two engines of the same scripts have different identities")
	}
	if plain1.scriptID == extra.scriptID {
		t.Error("an added script leaves the identity unchanged")
	}
}

func TestPersistAnswersARestartedEngineFromDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p1 := openTestPersist(t, dir, 64<<20, nil)
	e1 := newTestEngine(t, Options{Runtimes: 1, Persist: p1})
	opts := []InspectOptions{{}, {ID: "co"}, {Include: []string{"warnings"}}}
	var want []json.RawMessage
	for _, o := range opts {
		raw, err := e1.InspectJSON(ctx, smallPlan, o)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, raw)
	}
	closePersist(t, p1)
	if st := p1.Stats(); st.Written != 3 || st.FromDisk != 0 || st.Misses != 3 {
		t.Fatalf("first engine: %+v, want 3 written, 3 misses", st)
	}

	p2 := openTestPersist(t, dir, 64<<20, nil)
	e2 := newTestEngine(t, Options{Runtimes: 1, Persist: p2})
	for i, o := range opts {
		got, err := e2.InspectJSON(ctx, smallPlan, o)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[i]) {
			t.Errorf("options %+v: the answer from disk differs:\n%s\n%s", o, got, want[i])
		}
	}
	// The typed form is decoded from the bytes read back.
	typed, err := e2.Inspect(ctx, smallPlan, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(typed.Nodes) != 4 || typed.Nodes[2].ID != "co" {
		t.Errorf("typed inspect from disk: %+v", typed.Nodes)
	}
	if st := p2.Stats(); st.FromDisk != 3 || st.Misses != 0 || st.Entries != 3 {
		t.Errorf("restarted engine: %+v, want 3 answers from disk and no miss", st)
	}
}

func TestPersistNeverServesAnotherScriptsAnswer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p1 := openTestPersist(t, dir, 64<<20, nil)
	e1 := newTestEngine(t, Options{Runtimes: 1, Persist: p1})
	if _, err := e1.InspectJSON(ctx, smallPlan, InspectOptions{}); err != nil {
		t.Fatal(err)
	}
	closePersist(t, p1)

	// Changed scripts (here: one more) find nothing of the old scripts' answers.
	p2 := openTestPersist(t, dir, 64<<20, nil)
	e2 := newTestEngine(t, Options{Runtimes: 1, Persist: p2}, "var persistTestMarker = 1;")
	if _, err := e2.InspectJSON(ctx, smallPlan, InspectOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := p2.Stats(); st.FromDisk != 0 || st.Misses != 1 {
		t.Errorf("other scripts: %+v, want a miss", st)
	}
	closePersist(t, p2)

	// Another build too.
	p3, err := OpenPersist(PersistOptions{Dir: dir, MaxBytes: 64 << 20, Build: "another build"})
	if err != nil {
		t.Fatal(err)
	}
	defer p3.Close(ctx)
	e3 := newTestEngine(t, Options{Runtimes: 1, Persist: p3})
	if _, err := e3.InspectJSON(ctx, smallPlan, InspectOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := p3.Stats(); st.FromDisk != 0 || st.Misses != 1 {
		t.Errorf("another build: %+v, want a miss", st)
	}
}

func TestPersistCorruptEntryIsAMissWithALogLine(t *testing.T) {
	ctx := context.Background()
	for name, damage := range map[string]func([]byte) []byte{
		"flipped byte": func(b []byte) []byte { b[len(b)-3] ^= 0x20; return b },
		"truncated":    func(b []byte) []byte { return b[:len(b)/2] },
		"empty":        func([]byte) []byte { return nil },
		"other header": func(b []byte) []byte { b[len(entryMagic)] ^= 1; return b },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p1 := openTestPersist(t, dir, 64<<20, nil)
			e1 := newTestEngine(t, Options{Runtimes: 1, Persist: p1})
			want, err := e1.InspectJSON(ctx, smallPlan, InspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			closePersist(t, p1)
			files, _ := filepath.Glob(filepath.Join(dir, "*"+entrySuffix))
			if len(files) != 1 {
				t.Fatalf("entries on disk: %v", files)
			}
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(files[0], damage(b), 0o600); err != nil {
				t.Fatal(err)
			}

			var logs syncLog
			p2 := openTestPersist(t, dir, 64<<20, slog.New(slog.NewTextHandler(&logs, nil)))
			e2 := newTestEngine(t, Options{Runtimes: 1, Persist: p2})
			got, err := e2.InspectJSON(ctx, smallPlan, InspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("answer after a damaged entry:\n%s\nwant\n%s", got, want)
			}
			if st := p2.Stats(); st.Corrupt != 1 || st.FromDisk != 0 || st.Misses != 1 {
				t.Errorf("stats: %+v, want one corrupt entry and a miss", st)
			}
			if !strings.Contains(logs.String(), "entry unusable") || !strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("no warning logged: %q", logs.String())
			}
			// The damaged file is gone; the fresh answer replaces it at close.
			closePersist(t, p2)
			b, err = os.ReadFile(files[0])
			if err != nil {
				t.Fatalf("the answer was not written again: %v", err)
			}
			if _, err := decodeEntry([32]byte(mustDigest(t, files[0])), b); err != nil {
				t.Errorf("the rewritten entry does not check: %v", err)
			}
		})
	}
}

func mustDigest(t *testing.T, file string) [32]byte {
	t.Helper()
	d, ok := digestOfName(filepath.Base(file))
	if !ok {
		t.Fatalf("%s is not an entry's name", file)
	}
	return d
}

// persistTestKey is a key for direct stores.
func persistTestKey(i int) diskKey {
	return diskKey{method: "inspect", opts: []byte("null"), textSum: sha256.Sum256([]byte{byte(i)})}
}

func TestPersistStaysWithinItsBytesDroppingTheLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	payload := []byte(`"` + strings.Repeat("x", 1000) + `"`)
	entry := int64(entryHeaderLen + len(payload))
	p := openTestPersist(t, dir, 4*entry, nil)
	for i := range 4 {
		p.write(pendingWrite{digest: p.digest(persistTestKey(i)), raw: payload})
	}
	// A use makes entry 0 the most recent: entries 1 and 2 go first.
	if _, ok := p.load(ctx, persistTestKey(0)); !ok {
		t.Fatal("entry 0 is not there")
	}
	for i := 4; i < 6; i++ {
		p.write(pendingWrite{digest: p.digest(persistTestKey(i)), raw: payload})
	}
	st := p.Stats()
	if st.Entries != 4 || st.Bytes != 4*entry || st.Evicted != 2 {
		t.Errorf("stats: %+v, want 4 entries of %d bytes, 2 evicted", st, entry)
	}
	for i, want := range []bool{true, false, false, true, true, true} {
		_, err := os.Stat(p.path(p.digest(persistTestKey(i))))
		if (err == nil) != want {
			t.Errorf("entry %d on disk: %v, want %v", i, err == nil, want)
		}
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 4 {
		t.Errorf("%d files in the folder, want 4", len(files))
	}
	closePersist(t, p)

	// A reopened cache with a smaller bound trims the folder to it, the oldest first.
	q := openTestPersist(t, dir, 2*entry, nil)
	if st := q.Stats(); st.Entries != 2 || st.Bytes != 2*entry {
		t.Errorf("reopened with half the bytes: %+v", st)
	}
	files, _ = os.ReadDir(dir)
	if len(files) != 2 {
		t.Errorf("%d files in the folder after the reopen, want 2", len(files))
	}
}

func TestPersistQueueIsBoundedAndSkipsLargeAnswers(t *testing.T) {
	dir := t.TempDir()
	p := openTestPersist(t, dir, 1<<20, nil)
	p.mu.Lock()
	p.settle = time.Hour // nothing is written before Close
	p.mu.Unlock()
	small := []byte(`{"a":1}`)
	for i := range persistPending + 2 {
		p.store(persistTestKey(i), small)
	}
	p.store(persistTestKey(100), bytes.Repeat([]byte(" "), 1<<20/4)) // over a quarter of the bound
	p.store(persistTestKey(2), small)                                // waiting already
	if st := p.Stats(); st.Skipped != 3 || st.Written != 0 {
		t.Errorf("before close: %+v, want 3 skipped (two oldest, one too large), none written", st)
	}
	closePersist(t, p)
	if st := p.Stats(); st.Written != persistPending || st.Entries != persistPending {
		t.Errorf("after close: %+v, want %d written", st, persistPending)
	}
	for i := range persistPending + 2 {
		_, err := os.Stat(p.path(p.digest(persistTestKey(i))))
		if want := i >= 2; (err == nil) != want {
			t.Errorf("answer %d on disk: %v, want %v", i, err == nil, want)
		}
	}
}

func TestPersistOpenRemovesStaleTemporaryFilesOnly(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, tempPrefix+"1")
	fresh := filepath.Join(dir, tempPrefix+"2")
	foreign := filepath.Join(dir, "notes.txt")
	for _, f := range []string{stale, fresh, foreign} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTemp)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	p := openTestPersist(t, dir, 1<<20, nil)
	for f, want := range map[string]bool{stale: false, fresh: true, foreign: true} {
		if _, err := os.Stat(f); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", filepath.Base(f), err == nil, want)
		}
	}
	if st := p.Stats(); st.Entries != 0 {
		t.Errorf("entries: %+v", st)
	}
}

func TestPersistOffWhenTheFolderCannotBeMade(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncLog
	p, err := OpenPersist(PersistOptions{Dir: filepath.Join(file, "below"), MaxBytes: 1 << 20, Build: "b", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	e := newTestEngine(t, Options{Runtimes: 1, Persist: p})
	if _, err := e.InspectJSON(context.Background(), smallPlan, InspectOptions{}); err != nil {
		t.Fatalf("an unusable cache folder fails the call: %v", err)
	}
	if st := p.Stats(); st.Off == "" {
		t.Errorf("stats do not say the cache is off: %+v", st)
	}
	if !strings.Contains(logs.String(), "analysis cache off") {
		t.Errorf("no warning: %q", logs.String())
	}
}

// The program's identity is its Go build ID, as the go command reads it.
func TestGoBuildIDOfTheRunningProgram(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to compare with")
	}
	out, err := exec.Command(goTool, "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := goBuildID(f), strings.TrimSpace(string(out)); got != want || got == "" {
		t.Errorf("build ID %q, go tool buildid says %q", got, want)
	}
	// A file without one (here: a text file, not ELF) has none: the whole file is hashed.
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("no build ID here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pf, err := os.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if id := goBuildID(pf); id != "" {
		t.Errorf("a plain file has build ID %q", id)
	}
	// The raw marker other formats carry.
	marked := filepath.Join(t.TempDir(), "marked")
	if err := os.WriteFile(marked, []byte("\x00\x00\xff Go build ID: \"abc/def\"\n \xff rest"), 0o600); err != nil {
		t.Fatal(err)
	}
	mf, err := os.Open(marked)
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	if id := goBuildID(mf); id != "abc/def" {
		t.Errorf("marked file: build ID %q", id)
	}
}
