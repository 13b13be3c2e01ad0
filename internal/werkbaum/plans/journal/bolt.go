package journal

import (
	"bytes"
	"fmt"

	"go.etcd.io/bbolt"
)

// BoltRunner is what Bolt needs of a bbolt database: a *bbolt.DB, or the daemon's
// state.DB (which reopens its file after a failed mapping and turns bbolt's panics on
// damaged pages into errors).
type BoltRunner interface {
	View(fn func(*bbolt.Tx) error) error
	Update(fn func(*bbolt.Tx) error) error
}

// Bolt adapts a bbolt database to the plan store's Database. This file is the only place
// in the store that knows bbolt.
func Bolt(db BoltRunner) Database { return boltDB{db} }

type boltDB struct{ db BoltRunner }

func (d boltDB) View(fn func(Tx) error) (err error) {
	defer recovered(&err)
	return d.db.View(func(tx *bbolt.Tx) error { return fn(boltTx{tx}) })
}

func (d boltDB) Update(fn func(Tx) error) (err error) {
	defer recovered(&err)
	return d.db.Update(func(tx *bbolt.Tx) error { return fn(boltTx{tx}) })
}

// recovered turns a panic that got through the database (bbolt panics on a page it
// cannot read; the daemon's state.DB already answers those with an error naming the
// damaged file) into an error: bbolt has rolled the transaction back on its way out.
func recovered(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("plan journal: the database failed: %v", r)
	}
}

type boltTx struct{ tx *bbolt.Tx }

func (t boltTx) Bucket(name []byte) Bucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil
	}
	return boltBucket{b}
}

func (t boltTx) CreateBucket(name []byte) (Bucket, error) {
	b, err := t.tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, fmt.Errorf("create bucket %q: %w", name, err)
	}
	return boltBucket{b}, nil
}

type boltBucket struct{ b *bbolt.Bucket }

func (b boltBucket) Get(key []byte) []byte       { return b.b.Get(key) }
func (b boltBucket) Put(key, value []byte) error { return b.b.Put(key, value) }
func (b boltBucket) Delete(key []byte) error     { return b.b.Delete(key) }

func (b boltBucket) Scan(prefix []byte, fn func(key, value []byte) error) error {
	c := b.b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}
