// Package planfs is the file side of the plan store: the plan set (configured plans and
// the roots whose *.werkbaum files are plans), a plan as one request resolved it (Ref),
// every file operation on it (through the root's held folder for a root plan), the
// file's identity, the folder lock and WriteAtomic, creating a plan file below a root,
// the text cache, and the follower's look at the files. It knows nothing of journals,
// documents or revisions: package plans (the façade) decides when to read and write;
// planfs decides how a read cannot leave the plan's folder and how a write cannot tear
// or overwrite an edit made meanwhile. It imports nothing of talkd but config (the
// plans' settings) and werkbaum (the file checksum and the too-large error).
package planfs

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"talkd/internal/config"
)

// The plan set: the configured plans by key and the roots, whose *.werkbaum files are
// plans named "<root>:<path below it>". The store holds one immutable Set at a time
// and swaps it for a new one on a reload; every request looks its plan up once (Lookup)
// and keeps that Ref until it ends, so a write that began under the old set finishes on
// the file it started with while new requests see the new set.

// Set is one generation of the plans a Service serves; never changed once stored.
type Set struct {
	plans map[string]config.Plan
	keys  []string // configured keys in config order
	roots map[string]*Root
	names []string // root names in config order
}

// Root is one configured root: its resolved folder, held open, and the cached listing
// of its plans.
type Root struct {
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

// Ref is a plan as one request resolved it: its configuration (Path is the lane key:
// the resolved path of the file) and, for a root plan, the root and the path below it
// through which every file operation goes.
type Ref struct {
	config.Plan
	root *Root  // nil for a configured plan
	rel  string // slash-separated path below root.path
}

// Release ends the request's use of the plan; every public method of the store that
// resolves a plan defers it. Nothing is opened per request (the root's folder is held by
// its Root), so there is nothing to close: it marks where a request's hold on its plan
// ends.
func (p Ref) Release() {}

// ConfiguredRef is the Ref of a configured plan (not below a root).
func ConfiguredRef(p config.Plan) Ref { return Ref{Plan: p} }

// InRoot reports whether the plan is a file below a root (not a configured plan).
func (p Ref) InRoot() bool { return p.root != nil }

// Keys are the configured plan keys in config order (not the plans below roots).
func (s *Set) Keys() []string { return s.keys }

// Names are the root names in config order.
func (s *Set) Names() []string { return s.names }

// Plan is the configured plan of key.
func (s *Set) Plan(key string) (config.Plan, bool) {
	p, ok := s.plans[key]
	return p, ok
}

// Root is the root named name.
func (s *Set) Root(name string) (*Root, bool) {
	r, ok := s.roots[name]
	return r, ok
}

// Name is the root's configured name.
func (r *Root) Name() string { return r.name }

// Path is the root's folder (absolute, symlinks resolved when the set was made).
func (r *Root) Path() string { return r.path }

// Handle is the root's held folder, opened now if it could not be before.
func (r *Root) Handle() (*os.Root, error) {
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

// SameFolder reports whether two roots hold the same folder (by device and inode), or,
// where one could not be opened, name the same path.
func SameFolder(a, b *Root) bool {
	da, erra := a.Handle()
	db, errb := b.Handle()
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
	RootListDepth = 8
	RootListFiles = 1000
	// RootListTTL is how long a listing is reused before the folder is walked again, so
	// that /status and plans_list under load do not walk a large root per request.
	RootListTTL = 2 * time.Second
)

// planExt is the file name ending of a plan below a root.
const planExt = ".werkbaum"

// NewSet checks and makes a plan set; its roots' folders are opened now (one that
// cannot be is opened by the first request that finds it).
func NewSet(plans []config.Plan, roots []config.Root) (*Set, error) {
	set := &Set{plans: make(map[string]config.Plan, len(plans)), roots: make(map[string]*Root, len(roots))}
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
		set.roots[r.Name] = &Root{name: r.Name, path: r.Path, lang: r.Lang}
		set.names = append(set.names, r.Name)
	}
	for _, r := range set.roots {
		// A folder that cannot be opened now is refused per request (lookup), as before;
		// the first that finds it there holds it from then on.
		_, _ = r.Handle()
	}
	return set, nil
}

// Ref names the plan of key in the set without touching the disk: a configured plan, or
// a file below a root whose name passes the addressing rule (a refused one is logged).
// Its file operations go through the root's held folder.
func (s *Set) Ref(key string, log *slog.Logger) (Ref, error) {
	if p, ok := s.plans[key]; ok {
		return Ref{Plan: p}, nil
	}
	name, rel, ok := splitRootKey(key)
	if !ok {
		return Ref{}, fmt.Errorf("%w %q", ErrUnknownPlan, key)
	}
	root, ok := s.roots[name]
	if !ok {
		return Ref{}, fmt.Errorf("%w %q", ErrUnknownPlan, key)
	}
	if why := CheckRel(rel); why != "" {
		return Ref{}, RefuseAddress(log, key, why)
	}
	return Ref{Plan: config.Plan{Key: key, Path: filepath.Join(root.path, filepath.FromSlash(rel)), Lang: root.lang},
		root: root, rel: rel}, nil
}

// Lookup is Ref, and for a key below a root the check on disk, through the root: every
// folder on the way must be a folder (not a symlink) and the file a regular file (not a
// symlink). That check is the clear error; the containment itself is enforced again at
// every open (rootOp), so a folder swapped for a symlink after this check still cannot
// lead out of the root.
func (s *Set) Lookup(key string, log *slog.Logger) (Ref, error) {
	ref, err := s.Ref(key, log)
	if err != nil || ref.root == nil {
		return ref, err
	}
	root := ref.root
	r, err := root.Handle()
	if err != nil {
		log.Warn("root folder cannot be opened", "root", root.name, "path", root.path, "err", err)
		return Ref{}, &AddressError{Key: key, Reason: fmt.Sprintf("the folder of root %q cannot be opened: %v", root.name, Unpath(err))}
	}
	if why, missing := ref.checkChain(r); why != "" {
		err := RefuseAddress(log, key, why)
		err.Missing = missing
		return Ref{}, err
	}
	return ref, nil
}

// RefuseAddress logs a refused key below a root (the user finds why an agent's request
// failed) and returns its error.
func RefuseAddress(log *slog.Logger, key, why string) *AddressError {
	log.Warn("plan key below a root refused", "plan", key, "reason", why)
	return &AddressError{Key: key, Reason: why}
}

// splitRootKey splits "<root>:<rel>"; ok is false for a key without a colon (a
// configured plan's key).
func splitRootKey(key string) (root, rel string, ok bool) {
	return strings.Cut(key, ":")
}

// CheckRel is the addressing rule of a plan below a root: a relative, slash-separated
// path of plain names ending in .werkbaum. It refuses what could leave the root or mean
// something else on another system, before any file is touched; "" means valid.
func CheckRel(rel string) string {
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

// checkChain Lstats every element of a root plan's path below the root (through the
// root's folder r, so the check itself cannot be led outside) and says what is wrong, ""
// if nothing.
func (p Ref) checkChain(r *os.Root) (why string, missing bool) {
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
			return fmt.Sprintf("%s below root %q cannot be checked: %v", sub, p.root.name, Unpath(err)), false
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

// Listing returns the root's listing, walking the folder when the last walk is older
// than RootListTTL (one walker at a time; the others wait for its answer).
func (r *Root) Listing(log *slog.Logger) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.listed.IsZero() && time.Since(r.listed) < RootListTTL {
		return r.keys
	}
	keys, truncated, err := WalkRoot(r)
	if err != nil {
		log.Warn("root listing failed", "root", r.name, "path", r.path, "err", err)
	}
	if truncated {
		log.Warn("root listing cut at the limit; the files past it are plans when named but not listed", "root", r.name, "path", r.path, "limit", RootListFiles)
	}
	r.keys, r.listed = keys, time.Now()
	return keys
}

// KeepListing takes over old's listing: a reload that keeps a root's folder need not
// walk it again.
func (r *Root) KeepListing(old *Root) {
	old.mu.Lock()
	r.listed, r.keys = old.listed, old.keys
	old.mu.Unlock()
}

// Relist makes the next listing walk the folder (a plan was created in it).
func (r *Root) Relist() {
	r.mu.Lock()
	r.listed = time.Time{}
	r.mu.Unlock()
}

// WalkRoot lists the plan files below a root: at most RootListDepth folders deep, at
// most RootListFiles files, without hidden files and folders and without following (or
// listing) symlinks, in lexical order; only names the addressing rule accepts.
func WalkRoot(r *Root) (keys []string, truncated bool, err error) {
	root, err := r.Handle()
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
			if strings.Count(p, "/")+1 > RootListDepth {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || CheckRel(p) != "" {
			return nil
		}
		if len(keys) == RootListFiles {
			truncated = true
			return fs.SkipAll
		}
		keys = append(keys, r.name+":"+p)
		return nil
	})
	return keys, truncated, err
}
