package plans

import (
	"context"
	"fmt"

	"talkd/internal/werkbaum"
	"talkd/internal/werkbaum/plans/docstore"
)

// ChangesSince returns the line operations that turn the plan's text at base into cur's
// text: what a conflict tells a writer that is behind, instead of the whole text (a
// one-line change of the 65 KB example plan). It needs base's text, which the document
// store keeps for recent versions (documents_store.go); kept is false when that text is
// gone or is not the one base names (its checksum differs), and the caller must then
// fall back to the current text.
func (s *Service) ChangesSince(ctx context.Context, key string, base Base, cur *Snapshot) (ops []werkbaum.LineOp, kept bool, err error) {
	old, ok, err := s.docs.Text(key, base.Revision)
	if err != nil || !ok {
		return nil, false, err
	}
	// The store keeps texts normalised (no BOM, LF line ends); such a file's checksum is
	// the text's own, any other cannot be matched and takes the fallback.
	if werkbaum.Checksum([]byte(old)) != base.Checksum {
		return nil, false, nil
	}
	ops, err = s.engine.DiffLines(ctx, old, docstore.Normalize(cur.Text))
	if err != nil {
		return nil, false, fmt.Errorf("plan %s: changes since revision %d: %w", key, base.Revision, err)
	}
	return ops, true, nil
}
