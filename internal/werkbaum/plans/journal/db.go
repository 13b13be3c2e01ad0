// Package journal is the plan store's journal below the store: the small database
// interface it runs its transactions on (Database, Tx, Bucket), the adapter of a bbolt
// database to it (Bolt), the group commit that lets concurrent changes share one
// transaction (GroupCommit), the layout in that database (layout.go: a plan's bucket and
// keys, its revision Meta, entry keys per client, the order index and its bound, the
// migration between layout versions), the entry it keeps per request (entry.go: Entry,
// whose write-specific parts are bytes their owner decodes), the settle of what a crash
// left pending, with the participants the store registers (recover.go: Recover,
// Participant), and the memory of what is applied but not saved yet, with its background
// saver (memory.go: Memory), and the revision each content of a plan file gets
// (revision.go: Revisions, ErrFileMoved). It imports nothing of talkd: the store (package
// plans) keeps its documents on top of it, and passes in what the journal needs to know
// of talkd (the local client's name, the check that a plan's file has a content).
package journal

// Database runs the transactions that keep revisions and the request journal. It is the
// plan store's own small interface, not bbolt's: the store needs named buckets of keys
// and values, and nothing of a particular database's types, errors or panics leaks into
// it (Bolt adapts a bbolt database, the daemon passes its state database through it).
//
// Update runs fn in one read-write transaction, committed durably when fn returns nil
// and rolled back when it returns an error; fn may run more than once (a database that
// reopens its file runs it again), so it must not have effects outside the transaction
// that a second run would repeat. View runs fn in a read-only transaction. A panic in
// either comes back as an error.
type Database interface {
	View(fn func(Tx) error) error
	Update(fn func(Tx) error) error
}

// Tx is one transaction of a Database.
type Tx interface {
	// Bucket returns the bucket of that name, or nil when there is none.
	Bucket(name []byte) Bucket
	// CreateBucket returns the bucket of that name, creating it if needed (write
	// transactions only).
	CreateBucket(name []byte) (Bucket, error)
}

// Bucket is a set of keys and values in a transaction. Values returned by Get and Scan
// are valid only until the transaction ends.
type Bucket interface {
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	// Scan calls fn for every key starting with prefix, in key order; fn must not change
	// the bucket (collect, then change).
	Scan(prefix []byte, fn func(key, value []byte) error) error
}
