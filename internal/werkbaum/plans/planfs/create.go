package planfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"log/slog"

	"talkd/internal/werkbaum"
)

// Creating a plan: the one way talkd makes a new plan file (the editor's Share button,
// POST /api/v1/documents, where a root allows it). The file appears whole or not at all
// and never replaces one that is there: the text goes to a hidden temp file beside it,
// which is then hard-linked under the plan's name — a link fails when the name exists,
// where a rename would overwrite. Everything goes through os.Root on the root's folder,
// like every other file operation below a root.

// ErrPlanExists is a create whose file name is taken; nothing was written.
var ErrPlanExists = errors.New("a file of that name exists")

// Create creates the plan file name (a plain *.werkbaum file name, no folder) directly
// in the folder of the root named root, with text (at most limit bytes) as its content,
// and returns the new plan's key ("<root>:<name>"). A taken name is ErrPlanExists.
func (s *Set) Create(root, name string, text []byte, limit int64, log *slog.Logger) (string, error) {
	r, ok := s.roots[root]
	if !ok {
		return "", fmt.Errorf("%w: there is no root %q", ErrUnknownPlan, root)
	}
	key := root + ":" + name
	if strings.Contains(name, "/") {
		return "", RefuseAddress(log, key, "a created plan is a file directly in the root's folder; the name must not contain /")
	}
	if why := CheckRel(name); why != "" {
		return "", RefuseAddress(log, key, why)
	}
	if int64(len(text)) > limit {
		return "", fmt.Errorf("%w: the new plan has %d bytes, the limit is %d", werkbaum.ErrTooLarge, len(text), limit)
	}
	dir, err := os.OpenRoot(r.path)
	if err != nil {
		return "", fmt.Errorf("open the folder of root %q: %w", root, Unpath(err))
	}
	defer dir.Close()
	tmp := TempName(name, "create-")
	if err := writeNew(dir, tmp, text); err != nil {
		return "", fmt.Errorf("create plan %s: %w", key, err)
	}
	// After the link the temp name is a second name of the plan file: removing it leaves
	// the plan; before (a failed link) it removes the text that was not published.
	defer dir.Remove(tmp)
	if err := dir.Link(tmp, name); errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%w: %s below root %q", ErrPlanExists, name, root)
	} else if err != nil {
		return "", fmt.Errorf("create plan %s: %w", key, Unpath(err))
	}
	if d, err := dir.Open("."); err == nil {
		// The new name must survive a crash as the file's content did (writeNew synced it).
		err = d.Sync()
		d.Close()
		if err != nil {
			return "", fmt.Errorf("create plan %s: sync the folder: %w", key, err)
		}
	}
	r.Relist() // the next listing shows the new plan
	log.Info("plan created", "plan", key, "bytes", len(text))
	return key, nil
}

// writeNew writes text to a new file name in dir and syncs it; it fails when the name
// exists.
func writeNew(dir *os.Root, name string, text []byte) error {
	f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Unpath(err)
	}
	_, err = f.Write(text)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		dir.Remove(name)
	}
	return err
}
