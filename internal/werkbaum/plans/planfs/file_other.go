//go:build !unix

package planfs

// openNoFollow is 0 where the system has no O_NOFOLLOW (Windows): there the Lstat before
// the open and the identity check after it (os.SameFile) refuse a swapped-in symlink.
const openNoFollow = 0

// renameOverOpenFile is false where renaming over a file that is open can fail (Windows
// opens files without sharing their deletion): a write closes the file it checked before
// its rename and cannot look at it afterwards (keepSaveInPlace is skipped).
const renameOverOpenFile = false
