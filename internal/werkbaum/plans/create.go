package plans

import (
	"context"
)

// CreateInRoot creates the plan file name (a plain *.werkbaum file name, no folder)
// directly in the folder of the root named root, with text as its content, and returns
// the new plan's key ("<root>:<name>"). A taken name is ErrPlanExists. The file side is
// planfs.Set.Create: the file appears whole or not at all and never replaces one.
func (s *Service) CreateInRoot(ctx context.Context, root, name string, text []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return s.set.Load().Create(root, name, text, s.maxBytes, s.log)
}
