//go:build !unix

package planfs

// openNoFollow is 0 where the system has no O_NOFOLLOW (Windows): there the Lstat before
// the open and the identity check after it (os.SameFile) refuse a swapped-in symlink.
const openNoFollow = 0
