package sidecar

import (
	"bytes"
	"encoding/json"
)

// Nullable is a field where absent, null and a value mean three different
// things (AppendParams.ParentID: absent appends below the leaf, null starts a
// new root, an id appends below that entry), and an optional field of a typed
// entry or message, so what was read is written back as it was (a root's
// parentId is null; most optional fields are absent). Its zero value is
// absent; use Null or Value to set it, Get or Or to read it.
type Nullable[T any] struct {
	value T
	set   bool // present on the wire
	valid bool // present and not null
}

// Null is a present null.
func Null[T any]() Nullable[T] { return Nullable[T]{set: true} }

// Value is a present value.
func Value[T any](v T) Nullable[T] { return Nullable[T]{value: v, set: true, valid: true} }

// IsZero reports an absent field (encoding/json's omitzero leaves it out).
func (n Nullable[T]) IsZero() bool { return !n.set }

// IsNull reports a present null.
func (n Nullable[T]) IsNull() bool { return n.set && !n.valid }

// Get returns the value and whether there is one (false for absent and null).
func (n Nullable[T]) Get() (T, bool) { return n.value, n.valid }

// Or returns the value, or fallback when absent or null.
func (n Nullable[T]) Or(fallback T) T {
	if n.valid {
		return n.value
	}
	return fallback
}

func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.valid {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

func (n *Nullable[T]) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*n = Null[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*n = Value(v)
	return nil
}

// Ptr returns a pointer to v, for the optional fields that are pointers
// (BranchParams.EntryID, ListParams.Limit, ...).
func Ptr[T any](v T) *T { return &v }
