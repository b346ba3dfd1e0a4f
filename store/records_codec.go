package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// recordFormat is the first byte of a record value in the current layout. Records written
// before it are in layout 2 or JSON objects (first byte '{'); all are read, only this one is
// written.
//
// Layout: recordFormat(1) || flags(1, bit 0 = registered) || created(8) || updated(8) (Unix
// nanoseconds, big-endian) || then five fields, each uvarint(length) || bytes: user ID (clear),
// sealed permanent, sealed provisional, sealed public permanent, sealed public provisional.
// In layout 3 each identity is packed before it is sealed (records_pack.go); in layout 2 it is
// sealed as it is.
//
// The JSON layout spent more time in encoding/json (base64 and validation of ~1 KiB per record)
// than the rest of a read did; this one decodes by slicing.
const recordFormat = 3

// recordUnpacked is layout 2: the same as 3 with identities sealed as they are.
const recordUnpacked = 2

// recordDisk is a record as stored: identities sealed, the rest in clear.
type recordDisk struct {
	userID                             []byte
	permanent, provisional             []byte
	publicPermanent, publicProvisional []byte
	registered                         bool
	createdAt, updatedAt               time.Time
	// packed: the identities were packed before they were sealed (layout 3).
	packed bool
}

func (d recordDisk) encode() []byte {
	fields := [][]byte{d.userID, d.permanent, d.provisional, d.publicPermanent, d.publicProvisional}
	size := recordHeaderSize
	for _, f := range fields {
		size += binary.MaxVarintLen64 + len(f)
	}
	out := appendRecordHeader(make([]byte, 0, size), d.registered, d.createdAt, d.updatedAt)
	if !d.packed {
		out[0] = recordUnpacked
	}
	for _, f := range fields {
		out = appendRecordField(out, f)
	}
	return out
}

// recordHeaderSize is the size of a record value's fixed part: format, flags, two times.
const recordHeaderSize = 18

// appendRecordHeader appends a record value's fixed part; the five fields follow, each
// written by appendRecordField (or, for a field sealed in place, its length then its bytes).
func appendRecordHeader(out []byte, registered bool, createdAt, updatedAt time.Time) []byte {
	flags := byte(0)
	if registered {
		flags = 1
	}
	out = append(out, recordFormat, flags)
	out = binary.BigEndian.AppendUint64(out, uint64(createdAt.UnixNano()))
	return binary.BigEndian.AppendUint64(out, uint64(updatedAt.UnixNano()))
}

// appendRecordField appends one field: uvarint(length) || bytes.
func appendRecordField(out, f []byte) []byte {
	out = binary.AppendUvarint(out, uint64(len(f)))
	return append(out, f...)
}

var errRecordLayout = errors.New("store: decode record: truncated or unknown layout")

// decodeRecord reads either layout. The sealed fields alias v, which is only valid inside its
// transaction: callers unseal them (into new memory) before the transaction ends.
func decodeRecord(v []byte) (recordDisk, error) {
	if len(v) > 0 && v[0] == '{' {
		return decodeRecordJSON(v)
	}
	if len(v) < recordHeaderSize || (v[0] != recordFormat && v[0] != recordUnpacked) || v[1] > 1 {
		return recordDisk{}, errRecordLayout
	}
	d := recordDisk{
		packed:     v[0] == recordFormat,
		registered: v[1] == 1,
		createdAt:  time.Unix(0, int64(binary.BigEndian.Uint64(v[2:]))).UTC(),
		updatedAt:  time.Unix(0, int64(binary.BigEndian.Uint64(v[10:]))).UTC(),
	}
	rest := v[recordHeaderSize:]
	var fields [5][]byte
	for i := range fields {
		n, k := binary.Uvarint(rest)
		if k <= 0 || (k > 1 && rest[k-1] == 0) || n > uint64(len(rest)-k) { // minimal lengths only
			return recordDisk{}, errRecordLayout
		}
		if n > 0 {
			fields[i] = rest[k : k+int(n) : k+int(n)]
		}
		rest = rest[k+int(n):]
	}
	if len(rest) != 0 {
		return recordDisk{}, errRecordLayout
	}
	d.userID = fields[0]
	d.permanent, d.provisional, d.publicPermanent, d.publicProvisional = fields[1], fields[2], fields[3], fields[4]
	return d, nil
}

// recordJSON is the first layout (schema 1). Its records carry no public identities; they are
// rewritten in the current layout when next written.
type recordJSON struct {
	UserID      string    `json:"user_id,omitempty"`
	Permanent   []byte    `json:"permanent,omitempty"`
	Provisional []byte    `json:"provisional,omitempty"`
	Registered  bool      `json:"registered"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func decodeRecordJSON(v []byte) (recordDisk, error) {
	var j recordJSON
	if err := json.Unmarshal(v, &j); err != nil {
		return recordDisk{}, fmt.Errorf("store: decode record: %w", err)
	}
	return recordDisk{
		userID: []byte(j.UserID), permanent: j.Permanent, provisional: j.Provisional,
		registered: j.Registered, createdAt: j.CreatedAt, updatedAt: j.UpdatedAt,
	}, nil
}
