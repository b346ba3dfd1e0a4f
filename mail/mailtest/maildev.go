package mailtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/idvault/idvault/app/apptest/external"
)

// MailDevVersion is the MailDev release the harness is written against.
const MailDevVersion = "2.2.1"

// Environment variables read by StartMailDev.
const (
	// EnvMailDevDir overrides the npm prefix MailDev was installed into.
	EnvMailDevDir = "IDVAULT_MAILDEV_DIR"
)

// MailDev is a running MailDev instance: an SMTP catcher (no STARTTLS, no AUTH: use
// tls=none) with a REST API.
type MailDev struct {
	// SMTPHost and SMTPPort are where MailDev accepts mail.
	SMTPHost string
	SMTPPort int
	// WebURL is the base URL of the web/REST API, e.g. http://127.0.0.1:1080.
	WebURL string

	http *http.Client
}

// MailDevAddress is an address as MailDev reports it.
type MailDevAddress struct {
	Address string `json:"address"`
	Name    string `json:"name"`
}

// MailDevEmail is one caught email as returned by MailDev's GET /email.
type MailDevEmail struct {
	ID       string           `json:"id"`
	Subject  string           `json:"subject"`
	Text     string           `json:"text"`
	HTML     string           `json:"html"`
	From     []MailDevAddress `json:"from"`
	To       []MailDevAddress `json:"to"`
	ReplyTo  []MailDevAddress `json:"replyTo"`
	Headers  map[string]any   `json:"headers"`
	Date     string           `json:"date"`
	Time     string           `json:"time"`
	Envelope MailDevEnvelope  `json:"envelope"`
}

// MailDevEnvelope is the SMTP envelope MailDev recorded.
type MailDevEnvelope struct {
	From MailDevAddress   `json:"from"`
	To   []MailDevAddress `json:"to"`
}

// MailDevDir returns the npm prefix MailDev is expected under: $IDVAULT_MAILDEV_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/idvault/maildev.
func MailDevDir() string { return external.CacheDir(EnvMailDevDir, "maildev") }

// MailDevInstallCommand is the command that installs MailDev where StartMailDev looks.
func MailDevInstallCommand() string {
	return "npm install --prefix " + MailDevDir() + " maildev@" + MailDevVersion
}

// StartMailDev starts MailDev on two free loopback ports, waits until its REST API answers,
// and stops it when the test ends. When MailDev or node is missing, it skips the test, or
// fails it if IDVAULT_REQUIRE_EXTERNAL=1.
func StartMailDev(tb testing.TB) *MailDev {
	tb.Helper()
	node := external.NodeModules(tb, MailDevDir(), MailDevInstallCommand(), "maildev")
	entry := filepath.Join(MailDevDir(), "node_modules", "maildev", "bin", "maildev")

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		md, err := startMailDev(tb, node, entry)
		if err == nil {
			return md
		}
		lastErr = err
	}
	tb.Fatalf("mailtest: starting MailDev: %v", lastErr)
	return nil
}

func startMailDev(tb testing.TB, node, entry string) (*MailDev, error) {
	smtpPort, err := external.FreePort()
	if err != nil {
		return nil, err
	}
	webPort, err := external.FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{entry,
		"--ip", "127.0.0.1", "--web-ip", "127.0.0.1",
		"--smtp", strconv.Itoa(smtpPort), "--web", strconv.Itoa(webPort),
		"--mail-directory", tb.TempDir(),
	}
	cmd := exec.Command(node, args...)
	out := &external.Output{Limit: 64 << 10} // for the error message only
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", node, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}

	md := &MailDev{
		SMTPHost: "127.0.0.1",
		SMTPPort: smtpPort,
		WebURL:   "http://127.0.0.1:" + strconv.Itoa(webPort),
		http:     &http.Client{Timeout: 5 * time.Second},
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			return nil, fmt.Errorf("maildev exited (%v): %s", err, out.String())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, apiErr := md.Emails(ctx)
		cancel()
		if apiErr == nil && smtpReady(smtpPort) {
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("maildev did not answer within 30s (%v): %s", apiErr, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Cleanup(stop)
	return md, nil
}

// Emails returns all caught emails (GET /email).
func (m *MailDev) Emails(ctx context.Context) ([]MailDevEmail, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.WebURL+"/email", nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /email: status %s", resp.Status)
	}
	var emails []MailDevEmail
	if err := json.NewDecoder(resp.Body).Decode(&emails); err != nil {
		return nil, fmt.Errorf("GET /email: decoding: %w", err)
	}
	return emails, nil
}

// DeleteAll deletes all caught emails (DELETE /email/all).
func (m *MailDev) DeleteAll(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, m.WebURL+"/email/all", nil)
	if err != nil {
		return err
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("DELETE /email/all: status %s", resp.Status)
	}
	return nil
}

// WaitForEmails polls GET /email until at least n emails were caught, failing the test
// after timeout.
func (m *MailDev) WaitForEmails(tb testing.TB, n int, timeout time.Duration) []MailDevEmail {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		emails, err := m.Emails(ctx)
		cancel()
		if err == nil && len(emails) >= n {
			return emails
		}
		if time.Now().After(deadline) {
			tb.Fatalf("mailtest: waiting for %d MailDev emails: got %d (%v)", n, len(emails), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func smtpReady(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}
