package docs

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// The version log of a document: its layout in the state database, its records, the
// retention rule, and the generator of document ids. The document store (package plans,
// documents_store.go) reads and writes it; the rules are here, once.

// Layout of the document store in the state database:
//
//	bucket "documents":   k:<plan key> → document id;  i:<document id> → plan key
//	bucket "doc:<key>":   m            → Meta {title, createdAt}
//	                      v:<version>  → Record (8-byte big-endian version)
//	                      t:<version>  → the version's normalised text
//
// Bounds, per plan (Retain is the one place of this rule): texts are kept for
//   - the newest KeepVersions versions, as long as their texts add up to at most
//     KeepBytes (the newest is always kept): the bases a PATCH can still be rebased
//     from and a feed client can still get ops from. 64 versions is minutes of live
//     typing by several people (editors send a PATCH per pause), enough for any client
//     that is online; one that was away longer gets the full content, which the
//     protocol allows (422 "compacted", feed with content);
//   - the history, which GET …/history lists and POST …/restore can bring back:
//     the newest KeepMilestones milestones within KeepBytes (a state a person or agent
//     meant: agent write, milestone PATCH or mark, restore, rename, outside edit), and
//     people's saves (an editor's ordinary PATCH): every save of the last SaveWindow
//     before the newest version, then the last save per person per clock hour, the
//     newest KeepSaves of them within KeepBytes; and always the newest version.
//
// Records (the feed's events and the history's attribution) are kept for the newest
// MaxRecords versions and for every version the history lists. So a plan's texts cost
// at most 3·KeepBytes (12 MiB) plus the newest, and its records MaxRecords plus
// KeepMilestones plus KeepSaves, however long it lives and however fast it is edited. A
// version whose text is dropped is "compacted".
const (
	MaxRecords     = 512
	KeepVersions   = 64
	KeepMilestones = 32
	KeepSaves      = 64
	KeepBytes      = 4 << 20
	SaveWindow     = time.Hour
)

// IndexBucket holds the document ids both ways; MetaKey is a document's Meta.
var (
	IndexBucket = []byte("documents")
	MetaKey     = []byte("m")
)

// BucketName is the bucket of the plan key's versions.
func BucketName(key string) []byte { return []byte("doc:" + key) }

// VersionKey is the key of version v's record (prefix 'v') or text (prefix 't').
func VersionKey(prefix byte, v uint64) []byte {
	k := make([]byte, 9)
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:], v)
	return k
}

// Meta is a document's title and creation time (key MetaKey).
type Meta struct {
	Title     string    `json:"title,omitempty"` // "" = the file's base name
	CreatedAt time.Time `json:"createdAt"`
}

// Change types of DOCUMENTS.md that a file-backed plan produces: a Record's ChangeType.
const (
	ChangeCreated  = "CREATED"
	ChangeUpdated  = "UPDATED"
	ChangeRenamed  = "RENAMED"
	ChangeDeleted  = "DELETED"  // the plan's file went away (noticed by a read)
	ChangeRestored = "RESTORED" // the file is back after a DELETED version, or a kept version restored
)

// Record is what the store keeps of one version (key VersionKey('v', version), JSON).
type Record struct {
	Version     uint64    `json:"version"`
	ChangeType  string    `json:"changeType"`
	ClientID    string    `json:"clientId,omitempty"`    // the document client id (mcp-… for agents)
	DisplayName string    `json:"displayName,omitempty"` // a claim, not proof
	Client      string    `json:"client,omitempty"`      // the authenticated talkd client, if any
	Milestone   bool      `json:"milestone,omitempty"`
	At          time.Time `json:"at"`
	Checksum    string    `json:"checksum"` // werkbaum.DocumentChecksum of the text
	Size        int       `json:"size"`     // bytes of the text
	Title       string    `json:"title,omitempty"`
	// Added with kept milestones and restores; a state file without them reads as before.
	MarkedBy         string `json:"markedBy,omitempty"`         // who marked the version a milestone (an empty milestone PATCH)
	MarkedByClientID string `json:"markedByClientId,omitempty"` // their document client id
	RestoredFrom     uint64 `json:"restoredFrom,omitempty"`     // RESTORED by a restore: the version brought back
}

// person is who a save counts for in the history's thinning: the name shown, else the
// client id.
func (r Record) person() string {
	if r.DisplayName != "" {
		return "name:" + r.DisplayName
	}
	return "id:" + r.ClientID
}

// NewUUID is a random UUID version 4 in lower case.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Retention is what Retain keeps of a document's versions.
type Retention struct {
	History map[uint64]bool // the versions the history lists
	Texts   map[uint64]bool // the versions whose text is kept: the history and the rebase bases
}

// Retain applies the Retention rule (see the layout above) to recs, oldest first. It
// depends on the records only (the save window ends at the newest version's time, not
// now), so the same records always keep the same Texts: putVersion drops exactly what a
// new version pushes out.
func Retain(recs []Record) Retention {
	r := Retention{History: map[uint64]bool{}, Texts: make(map[uint64]bool, KeepVersions)}
	if len(recs) == 0 {
		return r
	}
	n, bytes := 0, 0
	for i := len(recs) - 1; i >= 0 && n < KeepVersions; i-- {
		bytes += recs[i].Size
		if n > 0 && bytes > KeepBytes {
			break
		}
		r.Texts[recs[i].Version] = true
		n++
	}
	newest := recs[len(recs)-1]
	r.History[newest.Version] = true
	n, bytes = 0, 0
	for i := len(recs) - 1; i >= 0 && n < KeepMilestones; i-- {
		if !recs[i].Milestone {
			continue
		}
		bytes += recs[i].Size
		if bytes > KeepBytes {
			break
		}
		r.History[recs[i].Version] = true
		n++
	}
	type hourOf struct {
		person string
		hour   time.Time
	}
	seen := map[hourOf]bool{}
	n, bytes = 0, 0
	for i := len(recs) - 1; i >= 0 && n < KeepSaves; i-- {
		rec := recs[i]
		if rec.Milestone || rec.ClientID == "" {
			continue // not a person's save
		}
		slot := hourOf{rec.person(), rec.At.UTC().Truncate(time.Hour)}
		recent := newest.At.Sub(rec.At) < SaveWindow
		if !recent && seen[slot] {
			continue // a later save of this person in this hour stands for it
		}
		seen[slot] = true
		bytes += rec.Size
		if bytes > KeepBytes {
			break
		}
		r.History[rec.Version] = true
		n++
	}
	for v := range r.History {
		r.Texts[v] = true
	}
	return r
}

// KeptRecords is recs without the records Retain lets go: those older than the newest
// MaxRecords that the history does not list. recs is not changed.
func KeptRecords(recs []Record, ret Retention) []Record {
	if len(recs) <= MaxRecords {
		return recs
	}
	cut := len(recs) - MaxRecords
	out := make([]Record, 0, MaxRecords+len(ret.History))
	for _, r := range recs[:cut] {
		if ret.History[r.Version] {
			out = append(out, r)
		}
	}
	return append(out, recs[cut:]...)
}
