package store

import "errors"

// Sentinel errors. The HTTP layer maps them to its own error codes.
var (
	// ErrNotFound: no value under that key.
	ErrNotFound = errors.New("store: not found")
	// ErrExists: a value already exists under that key.
	ErrExists = errors.New("store: already exists")
	// ErrNameTaken: another app has that name (compared case-insensitively).
	ErrNameTaken = errors.New("store: an app with this name exists")
	// ErrLocked: another process holds the data file (typically a running idvault server).
	ErrLocked = errors.New("store: data file is locked by another process")
	// ErrSealed: a sealed value could not be opened: wrong master key or corrupted data.
	ErrSealed = errors.New("store: cannot open sealed value (wrong master key or corrupted data)")
	// ErrWrongMasterKey: the master key is not the one the data file was created with.
	ErrWrongMasterKey = errors.New("store: the master key does not open this data file: it was created with another key")
	// ErrMasterKeyMissing: the key file is missing while its data file exists.
	ErrMasterKeyMissing = errors.New("store: master key file missing for an existing data file")
	// ErrDataFileGone: the data file's path no longer names the file the store has open (it was
	// deleted, moved or replaced while the server ran): writes would land in a file no later start
	// opens, so they are refused.
	ErrDataFileGone = errors.New("store: the data file was deleted or replaced while open")
	// ErrAppDeleted: a write for an app deleted while the request that makes it was in flight
	// (it found its app before the deletion); nothing was written.
	ErrAppDeleted = errors.New("store: the app was deleted")
	// ErrSchema: the data file was written by a newer idvault. The error names both schema
	// versions, the file and what to do (newerSchema).
	ErrSchema = errors.New("store: unsupported schema version")
	// ErrNoDirectory: the directory a data file or a master key would go in does not exist
	// (CheckDirectory); the store creates none.
	ErrNoDirectory = errors.New("store: no such directory")
	// ErrDamaged: the data file's pages or values are not what idvault wrote (a disk or file
	// system fault, a program writing into the file): bbolt would read garbage, panic or fault.
	// The error (damaged.go) names the file, what was found and what to do: restore it from a
	// backup.
	ErrDamaged = errors.New("store: the data file is damaged")
)
