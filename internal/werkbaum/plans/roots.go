package plans

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"talkd/internal/config"
)

// The plan set: the configured plans by key and the roots, whose *.werkbaum files are
// plans named "<root>:<path below it>". A Service holds one immutable planSet at a time
// and Reconfigure swaps it for a new one; every request looks its plan up once, through
// resolve, and keeps that planRef until it ends, so a write that began under the old set
// finishes on the file it started with while new requests see the new set.

// planSet is one generation of the plans a Service serves; never changed once stored.
type planSet struct {
	plans map[string]config.Plan
	keys  []string // configured keys in config order
	roots map[string]*rootDir
	names []string // root names in config order
}

// rootDir is one configured root: its resolved folder, held open, and the cached listing
// of its plans.
type rootDir struct {
	name string
	path string // absolute, symlinks resolved (config)
	lang string

	// dir is the root's folder, opened when the plan set is made (at start or by a reload)
	// and held for the set's life: every file operation goes through it, so a later swap
	// of the folder's path (a symlink put in its place) cannot lead anywhere else. A folder
	// missing then is opened by the first request that finds it. A set a reload replaced
	// leaves its handles to the requests still using them; os.Root closes an unreachable
	// one itself.
	dirMu sync.Mutex
	dir   *os.Root

	mu     sync.Mutex
	listed time.Time // when keys was walked; zero: never
	keys   []string
}

// planRef is a plan as one request resolved it: its configuration (Path is the lane key:
// the resolved path of the file) and, for a root plan, the root and the path below it
// through which every file operation goes.
type planRef struct {
	config.Plan
	root *rootDir // nil for a configured plan
	rel  string   // slash-separated path below root.path
}

// release ends the request's use of the plan; every public method that resolves a plan
// defers it. Nothing is opened per request (the root's folder is held by its rootDir),
// so there is nothing to close: it marks where a request's hold on its plan ends.
func (p planRef) release() {}

// handle is the root's held folder, opened now if it could not be before.
func (r *rootDir) handle() (*os.Root, error) {
	r.dirMu.Lock()
	defer r.dirMu.Unlock()
	if r.dir != nil {
		return r.dir, nil
	}
	d, err := os.OpenRoot(r.path)
	if err != nil {
		return nil, err
	}
	r.dir = d
	return d, nil
}

// sameFolder reports whether two roots hold the same folder (by device and inode), or,
// where one could not be opened, name the same path.
func sameFolder(a, b *rootDir) bool {
	da, erra := a.handle()
	db, errb := b.handle()
	if erra != nil || errb != nil {
		return a.path == b.path
	}
	fa, erra := da.Stat(".")
	fb, errb := db.Stat(".")
	return erra == nil && errb == nil && os.SameFile(fa, fb)
}

// Bounds of a root's listing (plans_list, /status, Keys): how deep the walk goes below the
// root, and how many plan files it lists at most. Files deeper down or past the limit are
// still plans when named; they are only not listed.
const (
	rootListDepth = 8
	rootListFiles = 1000
	// rootListTTL is how long a listing is reused before the folder is walked again, so
	// that /status and plans_list under load do not walk a large root per request.
	rootListTTL = 2 * time.Second
)

// planExt is the file name ending of a plan below a root.
const planExt = ".werkbaum"

func newPlanSet(plans []config.Plan, roots []config.Root) (*planSet, error) {
	set := &planSet{plans: make(map[string]config.Plan, len(plans)), roots: make(map[string]*rootDir, len(roots))}
	for _, p := range plans {
		if _, dup := set.plans[p.Key]; dup {
			return nil, fmt.Errorf("plan key %q is configured twice", p.Key)
		}
		if strings.Contains(p.Key, ":") {
			return nil, fmt.Errorf("plan key %q contains a colon, which names a plan below a root", p.Key)
		}
		set.plans[p.Key] = p
		set.keys = append(set.keys, p.Key)
	}
	for _, r := range roots {
		if _, dup := set.roots[r.Name]; dup {
			return nil, fmt.Errorf("root %q is configured twice", r.Name)
		}
		if r.Name == "" || strings.Contains(r.Name, ":") {
			return nil, fmt.Errorf("root name %q is empty or contains a colon", r.Name)
		}
		if !filepath.IsAbs(r.Path) {
			return nil, fmt.Errorf("root %q: path %q is not absolute", r.Name, r.Path)
		}
		set.roots[r.Name] = &rootDir{name: r.Name, path: r.Path, lang: r.Lang}
		set.names = append(set.names, r.Name)
	}
	for _, r := range set.roots {
		// A folder that cannot be opened now is refused per request (lookup), as before;
		// the first that finds it there holds it from then on.
		_, _ = r.handle()
	}
	return set, nil
}

// splitRootKey splits "<root>:<rel>"; ok is false for a key without a colon (a
// configured plan's key).
func splitRootKey(key string) (root, rel string, ok bool) {
	return strings.Cut(key, ":")
}

// checkRel is the addressing rule of a plan below a root: a relative, slash-separated
// path of plain names ending in .werkbaum. It refuses what could leave the root or mean
// something else on another system, before any file is touched; "" means valid.
func checkRel(rel string) string {
	switch {
	case rel == "":
		return "names no file after the colon; write <root>:<path>.werkbaum, e.g. notes:todo.werkbaum"
	case len(rel) > 4096:
		return "the path is longer than 4096 bytes"
	case strings.IndexByte(rel, 0) >= 0:
		return "the path contains a NUL byte"
	case strings.Contains(rel, `\`):
		return `the path contains a backslash; separate folders with / (backslashes are refused so that no name means a folder on another system)`
	case strings.HasPrefix(rel, "/"):
		return "the path is absolute; name the file relative to the root, e.g. notes:sub/todo.werkbaum"
	}
	for _, seg := range strings.Split(rel, "/") {
		switch {
		case seg == "":
			return "the path has an empty segment (// or a trailing /)"
		case seg == "..":
			return `the path contains a ".." segment; plans below a root are named from the root down, and talkd never leaves it`
		case seg == ".":
			return `the path contains a "." segment; write the path without it`
		case strings.HasPrefix(seg, "."):
			return fmt.Sprintf("%q is hidden (starts with a dot); hidden files and folders below a root are not plans", seg)
		}
	}
	if !strings.HasSuffix(rel, planExt) || path.Base(rel) == planExt {
		return "the file name does not end in .werkbaum; only *.werkbaum files below a root are plans"
	}
	return ""
}

// resolve looks up the plan a request is about (lookup), and tells the follower that the
// plan is in use.
func (s *Service) resolve(key string) (planRef, error) {
	p, err := s.lookup(key)
	s.follow.asked(p, err)
	return p, err
}

// lookup looks a plan key up in the current plan set. A root key is checked by the
// addressing rule and then on disk, through the root: every folder on the way must be a
// folder (not a symlink) and the file a regular file (not a symlink). That check is the
// clear error; the containment itself is enforced again at every open (rootOp), so a
// folder swapped for a symlink after this check still cannot lead out of the root.
func (s *Service) lookup(key string) (planRef, error) {
	ref, err := s.ref(key)
	if err != nil || ref.root == nil {
		return ref, err
	}
	root := ref.root
	r, err := root.handle()
	if err != nil {
		s.log.Warn("root folder cannot be opened", "root", root.name, "path", root.path, "err", err)
		return planRef{}, &AddressError{Key: key, Reason: fmt.Sprintf("the folder of root %q cannot be opened: %v", root.name, unpath(err))}
	}
	if why, missing := ref.checkChain(r); why != "" {
		err := s.refuseAddress(key, why)
		err.Missing = missing
		return planRef{}, err
	}
	if err := s.ensureJournal(ref); err != nil {
		return planRef{}, err
	}
	return ref, nil
}

// ref names the plan of key in the current plan set without touching the disk: a
// configured plan, or a file below a root whose name passes the addressing rule. Its
// file operations go through the root's held folder.
func (s *Service) ref(key string) (planRef, error) {
	set := s.set.Load()
	if p, ok := set.plans[key]; ok {
		return planRef{Plan: p}, nil
	}
	name, rel, ok := splitRootKey(key)
	if !ok {
		return planRef{}, fmt.Errorf("%w %q", ErrUnknownPlan, key)
	}
	root, ok := set.roots[name]
	if !ok {
		return planRef{}, fmt.Errorf("%w %q", ErrUnknownPlan, key)
	}
	if why := checkRel(rel); why != "" {
		return planRef{}, s.refuseAddress(key, why)
	}
	return planRef{Plan: config.Plan{Key: key, Path: filepath.Join(root.path, filepath.FromSlash(rel)), Lang: root.lang},
		root: root, rel: rel}, nil
}

// refuseAddress logs a refused key below a root (the user finds why an agent's request
// failed) and returns its error.
func (s *Service) refuseAddress(key, why string) *AddressError {
	s.log.Warn("plan key below a root refused", "plan", key, "reason", why)
	return &AddressError{Key: key, Reason: why}
}

// checkChain Lstats every element of a root plan's path below the root (through the
// root's folder r, so the check itself cannot be led outside) and says what is wrong, ""
// if nothing.
func (p planRef) checkChain(r *os.Root) (why string, missing bool) {
	segs := strings.Split(p.rel, "/")
	for i := range segs {
		sub := strings.Join(segs[:i+1], "/")
		fi, err := r.Lstat(sub)
		last := i == len(segs)-1
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if last {
				return fmt.Sprintf("there is no file %s below root %q", p.rel, p.root.name), true
			}
			return fmt.Sprintf("there is no folder %s below root %q", sub, p.root.name), true
		case err != nil:
			return fmt.Sprintf("%s below root %q cannot be checked: %v", sub, p.root.name, unpath(err)), false
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Sprintf("%s below root %q is a symlink; talkd does not follow symlinks below a root (one could lead out of it)", sub, p.root.name), false
		case !last && !fi.IsDir():
			return fmt.Sprintf("%s below root %q is not a folder", sub, p.root.name), false
		case last && !fi.Mode().IsRegular():
			return fmt.Sprintf("%s below root %q is not a regular file", sub, p.root.name), false
		}
	}
	return "", false
}

// ensureJournal gives a root plan its journal bucket and settles what a crash left
// pending in it, once per process and before its first request uses it (configured plans
// get theirs at New and Reconfigure).
func (s *Service) ensureJournal(p planRef) error {
	if _, ok := s.ready.Load(p.Key); ok {
		return nil
	}
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if _, ok := s.ready.Load(p.Key); ok {
		return nil
	}
	if err := s.createBuckets([]string{p.Key}); err != nil {
		return err
	}
	if err := s.recover(p); err != nil {
		return fmt.Errorf("plan %s: recover journal: %w", p.Key, err)
	}
	s.ready.Store(p.Key, struct{}{})
	return nil
}

// createBuckets creates (and migrates) the journal buckets of these plans.
func (s *Service) createBuckets(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	err := s.db.Update(func(tx Tx) error {
		for _, k := range keys {
			b, err := tx.CreateBucket(bucketName(k))
			if err != nil {
				return err
			}
			if err := migrateJournal(b); err != nil {
				return fmt.Errorf("plan %s: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("prepare plan journal: %w", err)
	}
	return nil
}

// Reconfigure replaces the plan set at run time (a reloaded config). Requests that
// resolved their plan before keep it: a write in flight finishes on the file it started
// with, in its lane. Requests after it see the new set: a removed plan is ErrUnknownPlan,
// an added one is served (its journal bucket is created and what a crash left pending
// in it settled before it is visible). The set is checked first; on an error nothing
// changes.
func (s *Service) Reconfigure(plans []config.Plan, roots []config.Root) error {
	set, err := newPlanSet(plans, roots)
	if err != nil {
		return fmt.Errorf("plans: %w", err)
	}
	s.reconf.Lock()
	defer s.reconf.Unlock()
	old := s.set.Load()
	var added []string
	for _, k := range set.keys {
		if _, ok := s.ready.Load(k); !ok {
			added = append(added, k)
		}
	}
	s.readyMu.Lock()
	err = s.createBuckets(added)
	if err == nil {
		for _, k := range added {
			if err = s.recover(planRef{Plan: set.plans[k]}); err != nil {
				err = fmt.Errorf("plan %s: recover journal: %w", k, err)
				break
			}
			s.ready.Store(k, struct{}{})
		}
	}
	s.readyMu.Unlock()
	if err != nil {
		return err
	}
	// Listings of unchanged roots are kept: the folder is the same.
	for name, r := range set.roots {
		if o, ok := old.roots[name]; ok && o.path == r.path && sameFolder(o, r) {
			o.mu.Lock()
			r.listed, r.keys = o.listed, o.keys
			o.mu.Unlock()
		}
	}
	s.set.Store(set)
	for _, k := range old.keys {
		if p, ok := set.plans[k]; !ok || p.Path != old.plans[k].Path {
			s.forgetPlan(k)
		}
	}
	for _, name := range set.names {
		// Each root's path was resolved again and its folder opened anew: say which
		// folder it holds now, and whether that is another one than before.
		r, o := set.roots[name], old.roots[name]
		s.log.Info("root folder re-resolved", "root", name, "path", r.path, "changed", o == nil || !sameFolder(o, r))
	}
	s.log.Info("plan set changed", "plans", len(set.keys), "roots", len(set.names), "added", len(added))
	s.warm(added)
	return nil
}

// forgetPlan drops what the caches hold of a plan that left the set (or moved).
func (s *Service) forgetPlan(key string) {
	s.cache.mu.Lock()
	delete(s.cache.files, key)
	delete(s.cache.summaries, key)
	s.cache.mu.Unlock()
}

// Keys lists the configured plan keys in config order, then each root's plans (a bounded
// walk, reused for rootListTTL).
func (s *Service) Keys() []string {
	set := s.set.Load()
	if len(set.names) == 0 {
		return set.keys
	}
	keys := append([]string(nil), set.keys...)
	for _, name := range set.names {
		keys = append(keys, s.rootKeys(set.roots[name])...)
	}
	return keys
}

// rootKeys returns the root's listing, walking the folder when the last walk is older
// than rootListTTL (one walker at a time; the others wait for its answer).
func (s *Service) rootKeys(r *rootDir) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.listed.IsZero() && time.Since(r.listed) < rootListTTL {
		return r.keys
	}
	keys, truncated, err := walkRoot(r)
	if err != nil {
		s.log.Warn("root listing failed", "root", r.name, "path", r.path, "err", err)
	}
	if truncated {
		s.log.Warn("root listing cut at the limit; the files past it are plans when named but not listed", "root", r.name, "path", r.path, "limit", rootListFiles)
	}
	r.keys, r.listed = keys, time.Now()
	return keys
}

// walkRoot lists the plan files below a root: at most rootListDepth folders deep, at
// most rootListFiles files, without hidden files and folders and without following (or
// listing) symlinks, in lexical order; only names the addressing rule accepts.
func walkRoot(r *rootDir) (keys []string, truncated bool, err error) {
	root, err := r.handle()
	if err != nil {
		return nil, false, err
	}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // an unreadable folder is left out, the rest is listed
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || d.Type()&fs.ModeSymlink != 0 {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if strings.Count(p, "/")+1 > rootListDepth {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || checkRel(p) != "" {
			return nil
		}
		if len(keys) == rootListFiles {
			truncated = true
			return fs.SkipAll
		}
		keys = append(keys, r.name+":"+p)
		return nil
	})
	return keys, truncated, err
}

// summaryWaitFor is how long Summarize waits for a plan's analysis: configured plans as
// summaryWait; root plans not at all, since a listing may hold a thousand of them and
// each would otherwise hold up plans_list (they read "pending" until counted).
func summaryWaitFor(p planRef) time.Duration {
	if p.root != nil {
		return 0
	}
	return summaryWait
}
