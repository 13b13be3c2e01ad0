package journal

import (
	"bytes"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// TestEntryKeyPerClient: the local client (no client, or the local name) keeps the
// version-1 key r:<id>; other clients' keys carry the client's length, so no two
// (client, id) pairs share one ("ab"+"c" and "a"+"bc", @jörg and @Müller).
func TestEntryKeyPerClient(t *testing.T) {
	if k := EntryKey("", "local", "r-1"); string(k) != "r:r-1" {
		t.Errorf("no client: %q", k)
	}
	if k := EntryKey("local", "local", "r-1"); string(k) != "r:r-1" {
		t.Errorf("the local client: %q", k)
	}
	seen := map[string]string{}
	for _, p := range [][2]string{{"ab", "c"}, {"a", "bc"}, {"@jörg", "x"}, {"@Müller", "x"}, {"local", "x"}} {
		k := string(EntryKey(p[0], "", p[1]))
		if prev, dup := seen[k]; dup {
			t.Errorf("%v and %s share the key %q", p, prev, k)
		}
		seen[k] = p[0] + "/" + p[1]
	}
}

// TestMigrateVersion1: a bucket of layout version 1 (every client's entry under r:<id>,
// the bare id in the order index) moves another client's entry to its client's key,
// leaves the local client's in place, points the order index at the keys, and is marked
// version 2; a second run changes nothing.
func TestMigrateVersion1(t *testing.T) {
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "state.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	local := []byte(`{"requestId":"a","author":{"client":"local"},"state":"applied"}`)
	other := []byte(`{"requestId":"b","author":{"client":"@jörg"},"state":"applied"}`)
	migrate := func() map[string]string {
		got := map[string]string{}
		err := Bolt(db).Update(func(tx Tx) error {
			b, err := tx.CreateBucket(BucketName("p"))
			if err != nil {
				return err
			}
			if err := Migrate(b, "local"); err != nil {
				return err
			}
			return b.Scan(nil, func(k, v []byte) error { got[string(k)] = string(v); return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	err = Bolt(db).Update(func(tx Tx) error {
		b, err := tx.CreateBucket(BucketName("p"))
		if err != nil {
			return err
		}
		for k, v := range map[string][]byte{"r:a": local, "r:b": other, string(OrderKey(1)): []byte("a"), string(OrderKey(2)): []byte("b")} {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := migrate()
	otherKey := string(EntryKey("@jörg", "local", "b"))
	switch {
	case got["r:a"] != string(local), got[otherKey] != string(other), got["r:b"] != "":
		t.Fatalf("entries after the migration: %q", got)
	case got[string(OrderKey(1))] != "r:a", got[string(OrderKey(2))] != otherKey:
		t.Fatalf("order index after the migration: %q", got)
	case !bytes.Equal([]byte(got[string(KeyVersion)]), []byte{Version}):
		t.Fatalf("version after the migration: %q", got[string(KeyVersion)])
	}
	if again := migrate(); len(again) != len(got) || again[string(OrderKey(2))] != otherKey {
		t.Fatalf("a second migration changed the bucket: %q", again)
	}
}
