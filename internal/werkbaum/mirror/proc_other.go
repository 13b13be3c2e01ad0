//go:build !unix

package mirror

import "os/exec"

// ownGroup keeps exec's default on systems without process groups: the timeout kills
// git itself.
func ownGroup(cmd *exec.Cmd) {}
