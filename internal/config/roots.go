package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// Root is a folder whose *.werkbaum files are plans without a [[plans]] entry each, named
// "<Name>:<path below the root>" (local mode only: a root lets an agent name any file
// below it, while shared mode grants plans by key).
type Root struct {
	// Name is the part of the plan key before the colon: ^[a-z0-9][a-z0-9_-]{0,63}$,
	// unique among the roots.
	Name string `toml:"name" json:"name"`
	// Path is the folder; Load expands ~ and resolves symlinks, so it names the real
	// directory and every plan below it is checked against that.
	Path string `toml:"path" json:"path"`
	// Lang is the language of the root's plans' announcements; default voice.lang.
	Lang string `toml:"lang" json:"lang"`
	// Create lets the editor's Share button (POST /api/v1/documents) create new plan
	// files directly in this folder; the first root with it set takes them.
	Create bool `toml:"create" json:"create"`
}

// Root returns the root with the given name.
func (c *Config) Root(name string) (Root, bool) {
	for _, r := range c.Roots {
		if r.Name == name {
			return r, true
		}
	}
	return Root{}, false
}

// CreateRoot is the root that takes plans created over the document protocol: the first
// with create = true.
func (c *Config) CreateRoot() (Root, bool) {
	for _, r := range c.Roots {
		if r.Create {
			return r, true
		}
	}
	return Root{}, false
}

func (l *loader) validateRoots(c *Config) {
	if len(c.Roots) > 0 && len(c.Clients) > 0 {
		// One message for the whole table, at the first root: the fix is to drop one of them.
		l.fail("roots[0]", "[[roots]] work in local mode only, and this config has [[clients]] (shared mode): "+
			"an agent could name any file below a root, while shared mode grants each client plans by key; "+
			"list the plans shared clients may use as [[plans]] entries, or remove the [[clients]]")
	}
	names := map[string]bool{}
	for i := range c.Roots {
		r := &c.Roots[i]
		key := fmt.Sprintf("roots[%d]", i)
		switch {
		case !planKeyRE.MatchString(r.Name):
			l.fail(key+".name", "%q must match ^[a-z0-9][a-z0-9_-]{0,63}$ (lower case letters, digits, _ and -); plans below it are named <name>:<path>", r.Name)
		case names[r.Name]:
			l.fail(key+".name", "%q is used by an earlier [[roots]] entry; names must be unique", r.Name)
		}
		names[r.Name] = true

		path := l.expandHome(r.Path)
		switch {
		case path == "":
			l.fail(key+".path", "is empty; give the absolute path of the folder")
		case !filepath.IsAbs(path):
			l.fail(key+".path", "%q is not an absolute path (write /… or ~/…)", r.Path)
		default:
			real, err := filepath.EvalSymlinks(path)
			if err != nil {
				l.fail(key+".path", "%q: %v", r.Path, unwrapPathError(err))
				break
			}
			fi, err := os.Stat(real)
			if err != nil {
				l.fail(key+".path", "%q: %v", r.Path, unwrapPathError(err))
				break
			}
			if !fi.IsDir() {
				l.fail(key+".path", "%q is not a folder", r.Path)
				break
			}
			r.Path = real
		}

		if r.Lang == "" {
			r.Lang = c.Voice.Lang
		} else if !IsLangTag(r.Lang) {
			l.fail(key+".lang", "%q is not a BCP-47 language tag such as de, en or fr", r.Lang)
		}
	}
}
