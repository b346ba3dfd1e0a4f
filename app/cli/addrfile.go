package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/idvault/idvault/app/smallfile"
)

// The address file: a running server writes the address it actually listens on to the data
// file's path plus ".addr" (for example data/idvault.db.addr), so that the app and backup
// commands reach it when they find the data file locked, even when it was started with
// --listen or an environment the command does not share. A clean shutdown removes it; one
// left behind by a crash is harmless, as it is read only while the data file is locked.

// addrFilePath is the data file's real path (symbolic links resolved) plus ".addr", so a server
// and a command that name the data file through different links agree on it.
func addrFilePath(dataPath string) string {
	if real, err := filepath.EvalSymlinks(dataPath); err == nil {
		dataPath = real
	}
	return dataPath + ".addr"
}

// writeAddrFile records addr atomically (writeReplace, mode 0600).
func writeAddrFile(dataPath, addr string) error {
	return writeReplace(addrFilePath(dataPath), []byte(addr+"\n"), 0o600)
}

// removeAddrFile removes the address file if it still holds addr (a newer server on the same
// data file may have replaced it).
func removeAddrFile(dataPath, addr string) {
	if got, err := readAddrFile(dataPath); err == nil && got == addr {
		_ = os.Remove(addrFilePath(dataPath))
	}
}

// readAddrFile returns the address a running server recorded; fs.ErrNotExist when none did.
func readAddrFile(dataPath string) (string, error) {
	raw, err := smallfile.Read(addrFilePath(dataPath), 4<<10) // one host:port line
	if err != nil {
		return "", err
	}
	addr := strings.TrimSpace(string(raw))
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("%s: not a host:port address", addrFilePath(dataPath))
	}
	return addr, nil
}

// serverAddr is where to reach the server that holds the data file: the address it recorded,
// else server.listen. from says which, for error messages.
func serverAddr(dataPath, listen string) (addr, from string, err error) {
	a, err := readAddrFile(dataPath)
	switch {
	case err == nil:
		return dialAddr(a), addrFilePath(dataPath), nil
	case errors.Is(err, fs.ErrNotExist):
		return dialAddr(listen), "server.listen", nil
	default:
		return "", "", err
	}
}

// dialAddr turns a listen address into one to connect to: an unspecified host (0.0.0.0, ::,
// empty) becomes the IPv4 loopback, which a dual-stack listener also accepts.
func dialAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
