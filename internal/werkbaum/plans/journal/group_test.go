package journal

import (
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

var errDiskFull = errors.New("write state: no space left on device")

// TestGroupCommitSharesTransactions: concurrent changes commit in fewer transactions than
// changes, and a change that fails by itself fails alone. The first transaction is held
// until all other changes are queued, so the count does not depend on the scheduler: the
// 63 queued changes share one transaction (two when #7, failing by itself, is among them
// and the rest runs again), three at the most with the first one's.
func TestGroupCommitSharesTransactions(t *testing.T) {
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "state.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	counted := &countingDB{Database: Bolt(db)}
	g := NewGroupCommit(counted)
	counted.first = func() {
		deadline := time.Now().Add(30 * time.Second)
		for {
			g.mu.Lock()
			queued := len(g.queue)
			g.mu.Unlock()
			if queued == 63 || time.Now().After(deadline) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.Do(func(tx Tx) error {
				if i == 7 {
					return errDiskFull
				}
				b, err := tx.CreateBucket([]byte("group"))
				if err != nil {
					return err
				}
				return b.Put([]byte{byte(i)}, []byte("v"))
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 7) != (err != nil) {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	n := 0
	db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("group")).ForEach(func(k, v []byte) error { n++; return nil })
	})
	if n != 63 {
		t.Fatalf("%d changes committed, want 63", n)
	}
	if txs := counted.n.Load(); txs > 3 {
		t.Fatalf("64 concurrent changes took %d transactions, want at most 3", txs)
	}
}

// countingDB counts Updates; first, if set, runs at the start of the first one.
type countingDB struct {
	Database
	n     atomic.Int64
	first func()
}

func (d *countingDB) Update(fn func(Tx) error) error {
	if d.n.Add(1) == 1 && d.first != nil {
		d.first()
	}
	return d.Database.Update(fn)
}

// TestGroupCommitStartOrder: a change queued with Start returns at once, and its callback
// runs after its commit and before any change queued after Start returned is told its
// outcome, in the same transaction or a later one: a write's settle queued so is
// durable no later than the plan's next journal record, and what the callback records in
// memory is there for it. A change that fails by itself gets its error in the callback.
func TestGroupCommitStartOrder(t *testing.T) {
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "state.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	g := NewGroupCommit(Bolt(db))
	for round := range 50 {
		var settled atomic.Bool
		var settleErr error
		fail := round%5 == 4
		g.Start(func(tx Tx) error {
			if fail {
				return errDiskFull
			}
			b, err := tx.CreateBucket([]byte("settle"))
			if err != nil {
				return err
			}
			return b.Put([]byte{byte(round)}, []byte("applied"))
		}, func(err error) {
			settleErr = err
			settled.Store(true)
		})
		var seen []byte
		err := g.Do(func(tx Tx) error {
			b, err := tx.CreateBucket([]byte("settle"))
			if err != nil {
				return err
			}
			seen = b.Get([]byte{byte(round)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !settled.Load() {
			t.Fatalf("round %d: a later change was answered before the earlier Start's callback ran", round)
		}
		switch {
		case fail && !errors.Is(settleErr, errDiskFull):
			t.Fatalf("round %d: the failing change's callback got %v", round, settleErr)
		case !fail && (settleErr != nil || string(seen) != "applied"):
			t.Fatalf("round %d: the later change saw %q (callback error %v), want the earlier change committed", round, seen, settleErr)
		}
	}
}
