//go:build !linux

package planfs

import "os"

// exchangeTemp: only Linux has the atomic exchange a write uses to see what its rename
// replaced (renameat2 with RENAME_EXCHANGE); elsewhere the write renames, and an editor's
// save by rename between the write's check and its rename is replaced (docs/RELIABILITY.md).
func exchangeTemp(folder *os.File, p Ref, tmp string) (ok bool, err error) {
	return false, nil
}
