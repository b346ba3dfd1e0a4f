package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/store"
)

// appBackend is where app commands go: the data file directly when no server holds it, or the
// running server's admin API when one does (bbolt allows one process per file).
type appBackend interface {
	create(req admin.CreateRequest) (admin.CreateResponse, error)
	list() ([]admin.AppView, error)
	show(id []byte) (admin.AppView, error)
	rotate(id []byte) (admin.AppView, string, error)
	remove(id []byte) error
	close()
}

// errNoApp is reported for an unknown app ID by either backend.
var errNoApp = errors.New("no app with that ID")

// openBackend opens the data file (which must exist: only serve creates one); if a server
// holds its lock, it goes through that server's admin API.
func openBackend(c config.Config) (appBackend, error) {
	st, err := openStore(c, cliLockTimeout)
	if err == nil {
		reg, err := apps.NewRegistry(st, c.Apps)
		if err != nil {
			st.Close()
			return nil, err
		}
		return &localBackend{st: st, reg: reg}, nil
	}
	if !errors.Is(err, store.ErrLocked) {
		return nil, err
	}
	return adminClient(c)
}

// cliLockTimeout is how long a command waits for the data file before it concludes that a
// server holds it and goes through the admin API.
const cliLockTimeout = 300 * time.Millisecond

// adminClient talks to the running server that holds the data file, at the address it
// recorded beside the data file (else server.listen).
func adminClient(c config.Config) (*remoteBackend, error) {
	token, err := readAdminToken(c)
	if err != nil {
		return nil, fmt.Errorf("the data file %s is held by a running server, and its admin token is not readable: %w", c.Store.Path, err)
	}
	addr, from, err := serverAddr(c.Store.Path, c.Server.Listen)
	if err != nil {
		return nil, err
	}
	return &remoteBackend{base: "http://" + addr, from: from, dataPath: c.Store.Path, token: token,
		client: &http.Client{Timeout: 60 * time.Second}}, nil
}

type localBackend struct {
	st  *store.Store
	reg *apps.Registry
}

func (b *localBackend) close() { b.st.Close() }

func (b *localBackend) create(req admin.CreateRequest) (admin.CreateResponse, error) {
	cr, err := b.reg.Create(req.Name, req.Test, store.AppOptions{LegacyErrors: req.LegacyErrors, RegisteredUsersOnly: req.RegisteredUsersOnly})
	if errors.Is(err, apps.ErrNameTaken) {
		return admin.CreateResponse{}, nameTaken(req.Name)
	}
	if err != nil {
		return admin.CreateResponse{}, err
	}
	return admin.CreateResponse{App: admin.ViewOf(cr.App), AppSecret: apps.FormatID(cr.App.Secret), AuthToken: cr.AuthToken}, nil
}

func (b *localBackend) list() ([]admin.AppView, error) {
	list, err := b.reg.List()
	views := make([]admin.AppView, 0, len(list))
	for _, a := range list {
		views = append(views, admin.ViewOf(a))
	}
	return views, err
}

func (b *localBackend) show(id []byte) (admin.AppView, error) {
	a, err := b.reg.Get(id)
	if errors.Is(err, apps.ErrNotFound) {
		return admin.AppView{}, errNoApp
	}
	return admin.ViewOf(a), err
}

func (b *localBackend) rotate(id []byte) (admin.AppView, string, error) {
	tok, err := b.reg.RotateToken(id)
	if errors.Is(err, apps.ErrNotFound) {
		return admin.AppView{}, "", errNoApp
	}
	if err != nil {
		return admin.AppView{}, "", err
	}
	v, err := b.show(id)
	return v, tok, err
}

func (b *localBackend) remove(id []byte) error {
	err := b.reg.Delete(id)
	if errors.Is(err, apps.ErrNotFound) {
		return errNoApp
	}
	return err
}

type remoteBackend struct {
	base     string
	from     string // where base came from: the address file, or server.listen
	dataPath string
	token    string
	client   *http.Client
}

// unreachable explains a failed connection: what was tried, from where, and what to do.
func (b *remoteBackend) unreachable(err error) error {
	return fmt.Errorf("the data file %s is locked by a running process, but no idvault server answers at %s "+
		"(address from %s): %v; if the server is still starting, retry in a moment, otherwise check that the "+
		"server runs on this data file and give its address with server.listen (IDVAULT_SERVER__LISTEN)",
		b.dataPath, strings.TrimPrefix(b.base, "http://"), b.from, err)
}

func (b *remoteBackend) close() {}

// call sends one admin request and decodes the JSON answer into out; an error body becomes an
// error carrying the server's message.
func (b *remoteBackend) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return b.unreachable(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("admin API: %w", err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		if e.Error.Code == apierr.AppNameTaken.Name {
			return errNameTakenAPI
		}
		if e.Error.Code == "app_not_found" {
			return errNoApp
		}
		return fmt.Errorf("admin API: %d %s: %s", resp.StatusCode, e.Error.Code, e.Error.Message)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

func (b *remoteBackend) create(req admin.CreateRequest) (admin.CreateResponse, error) {
	var out admin.CreateResponse
	err := b.call(http.MethodPost, "/admin/apps", req, &out)
	if errors.Is(err, errNameTakenAPI) {
		return out, nameTaken(req.Name)
	}
	return out, err
}

// errNameTakenAPI is the admin API's app_name_taken; nameTaken says it the same way whether
// the server or the data file answered.
var errNameTakenAPI = errors.New("app_name_taken")

func nameTaken(name string) error {
	return fmt.Errorf("an app named %q already exists (names are compared case-insensitively): choose another --name; \"idvault app list\" shows them", strings.TrimSpace(name))
}

func (b *remoteBackend) list() ([]admin.AppView, error) {
	var out struct{ Apps []admin.AppView }
	err := b.call(http.MethodGet, "/admin/apps", nil, &out)
	return out.Apps, err
}

func (b *remoteBackend) show(id []byte) (admin.AppView, error) {
	var out struct{ App admin.AppView }
	err := b.call(http.MethodGet, "/admin/apps/"+apps.URLID(id), nil, &out)
	return out.App, err
}

func (b *remoteBackend) rotate(id []byte) (admin.AppView, string, error) {
	var out struct {
		App       admin.AppView
		AuthToken string `json:"auth_token"`
	}
	err := b.call(http.MethodPost, "/admin/apps/"+apps.URLID(id)+"/rotate-token", nil, &out)
	return out.App, out.AuthToken, err
}

func (b *remoteBackend) remove(id []byte) error {
	return b.call(http.MethodDelete, "/admin/apps/"+apps.URLID(id), nil, nil)
}

// download streams GET path into w.
func (b *remoteBackend) download(ctx context.Context, path string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	client := &http.Client{} // a backup may take longer than any fixed timeout
	resp, err := client.Do(req)
	if err != nil {
		return b.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The server's reason (its disk is full, ...), not only the status.
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
		if e.Error.Code != "" {
			return fmt.Errorf("admin API: backup answered %d %s: %s", resp.StatusCode, e.Error.Code, e.Error.Message)
		}
		return fmt.Errorf("admin API: backup answered %d", resp.StatusCode)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}
